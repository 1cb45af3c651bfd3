package cluster

import (
	"strings"
	"sync"
	"time"

	"github.com/slotd/slotd/bus"
	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/resp"
	"github.com/slotd/slotd/slots"
)

// subcommand is one CLUSTER subcommand: its command-table entry (COMMAND
// INFO, DOCS, COUNT and the dispatcher's arity check), its lines in
// CLUSTER HELP, and what serves it.
type subcommand struct {
	name              string
	arity             int
	flags, cats, tips []string
	since, summary    string
	// help is the usage line and the description lines of CLUSTER HELP
	// (none: not listed, as Redis lists no SLAVES).
	help []string
	// run serves it on the cluster actor; local, on the client's event
	// loop without the actor (it reads no cluster state). Neither: another
	// layer registers it (COUNTKEYSINSLOT and GETKEYSINSLOT read a slot's
	// keys: shard commands of actors/engine/keycmd); it is listed in HELP
	// only.
	run   func(a *clusterActor, w *resp.Writer, args [][]byte)
	local func(w *resp.Writer, args [][]byte)
}

// Flag and category sets of the table.
var (
	flagsStale     = []string{"stale"}
	flagsAdmin     = []string{"admin", "stale", "no_async_loading"}
	flagsReadAdmin = []string{"admin", "stale"}
	catsSlow       = []string{"slow"}
	catsAdmin      = []string{"admin", "slow", "dangerous"}
	tipsNondet     = []string{"nondeterministic_output"}
)

// subcommands is every CLUSTER subcommand, in the order of CLUSTER HELP
// (redis-server 7.0.15's, plus MYSHARDID from 7.2, which slotd serves).
func subcommands() []subcommand {
	return []subcommand{
		{name: "addslots", arity: -3, flags: flagsAdmin, cats: catsAdmin, since: "3.0.0",
			summary: "Assign new hash slots to receiving node",
			help:    []string{"ADDSLOTS <slot> [<slot> ...]", "Assign slots to current node."},
			run:     okOrError((*bus.State).AddSlots)},
		{name: "addslotsrange", arity: -4, flags: flagsAdmin, cats: catsAdmin, since: "7.0.0",
			summary: "Assign new hash slots to receiving node",
			help: []string{"ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
				"Assign slots which are between <start-slot> and <end-slot> to current node."},
			run: okOrError((*bus.State).AddSlotsRange)},
		{name: "bumpepoch", arity: 2, flags: flagsAdmin, cats: catsAdmin, tips: tipsNondet, since: "3.0.0",
			summary: "Advance the cluster config epoch",
			help:    []string{"BUMPEPOCH", "Advance the cluster config epoch."},
			run:     (*clusterActor).bumpEpoch},
		{name: "count-failure-reports", arity: 3, flags: flagsReadAdmin, cats: catsAdmin, tips: tipsNondet, since: "3.0.0",
			summary: "Return the number of failure reports active for a given node",
			help:    []string{"COUNT-FAILURE-REPORTS <node-id>", "Return number of failure reports for <node-id>."},
			run:     (*clusterActor).countFailureReports},
		{name: "countkeysinslot",
			help: []string{"COUNTKEYSINSLOT <slot>", "Return the number of keys in <slot>."}},
		{name: "delslots", arity: -3, flags: flagsAdmin, cats: catsAdmin, since: "3.0.0",
			summary: "Set hash slots as unbound in receiving node",
			help:    []string{"DELSLOTS <slot> [<slot> ...]", "Delete slots information from current node."},
			run:     okOrError((*bus.State).DelSlots)},
		{name: "delslotsrange", arity: -4, flags: flagsAdmin, cats: catsAdmin, since: "7.0.0",
			summary: "Set hash slots as unbound in receiving node",
			help: []string{"DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
				"Delete slots information which are between <start-slot> and <end-slot> from current node."},
			run: okOrError((*bus.State).DelSlotsRange)},
		{name: "failover", arity: -2, flags: flagsAdmin, cats: catsAdmin, since: "3.0.0",
			summary: "Forces a replica to perform a manual failover of its master",
			help:    []string{"FAILOVER [FORCE|TAKEOVER]", "Promote current replica node to being a master."},
			run:     (*clusterActor).failover},
		{name: "forget", arity: 3, flags: flagsAdmin, cats: catsAdmin, since: "3.0.0",
			summary: "Remove a node from the nodes table",
			help:    []string{"FORGET <node-id>", "Remove a node from the cluster."},
			run:     (*clusterActor).forget},
		{name: "getkeysinslot",
			help: []string{"GETKEYSINSLOT <slot> <count>", "Return key names stored by current node in a slot."}},
		{name: "flushslots", arity: 2, flags: flagsAdmin, cats: catsAdmin, since: "3.0.0",
			summary: "Delete a node's own slots information",
			help:    []string{"FLUSHSLOTS", "Delete current node own slots information."},
			run:     (*clusterActor).flushSlots},
		{name: "info", arity: 2, flags: flagsStale, cats: catsSlow, tips: tipsNondet, since: "3.0.0",
			summary: "Provides info about Redis Cluster node state",
			help:    []string{"INFO", "Return information about the cluster."},
			run:     func(a *clusterActor, w *resp.Writer, _ [][]byte) { w.Verbatim(a.info()) }},
		{name: "keyslot", arity: 3, flags: flagsStale, cats: catsSlow, since: "3.0.0",
			summary: "Returns the hash slot of the specified key",
			help:    []string{"KEYSLOT <key>", "Return the hash slot for <key>."},
			local:   func(w *resp.Writer, args [][]byte) { w.Int(int64(slots.HashSlot(args[2]))) }},
		{name: "meet", arity: -4, flags: flagsAdmin, cats: catsAdmin, since: "3.0.0",
			summary: "Force a node cluster to handshake with another node",
			help:    []string{"MEET <ip> <port> [<bus-port>]", "Connect nodes into a working cluster."},
			run:     (*clusterActor).meet},
		{name: "myid", arity: 2, flags: flagsStale, cats: catsSlow, since: "3.0.0",
			summary: "Return the node id",
			help:    []string{"MYID", "Return the node id."},
			run:     func(a *clusterActor, w *resp.Writer, _ [][]byte) { w.BulkString(a.st.MyID()) }},
		{name: "myshardid", arity: 2, flags: flagsStale, cats: catsSlow, tips: tipsNondet, since: "7.2.0",
			summary: "Return the node shard id",
			help:    []string{"MYSHARDID", "Return the node's shard id."},
			run:     func(a *clusterActor, w *resp.Writer, _ [][]byte) { w.BulkString(a.st.MyShardID()) }},
		{name: "nodes", arity: 2, flags: flagsStale, cats: catsSlow, tips: tipsNondet, since: "3.0.0",
			summary: "Get Cluster config for the node",
			help: []string{"NODES", "Return cluster configuration seen by node. Output format:",
				"<id> <ip:port> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ..."},
			run: func(a *clusterActor, w *resp.Writer, _ [][]byte) { w.Verbatim(a.st.Nodes()) }},
		{name: "replicate", arity: 3, flags: flagsAdmin, cats: catsAdmin, since: "3.0.0",
			summary: "Configure a node as replica of a master node",
			help:    []string{"REPLICATE <node-id>", "Configure current node as replica to <node-id>."},
			run:     (*clusterActor).replicateTo},
		{name: "reset", arity: -2, flags: []string{"admin", "noscript", "stale"}, cats: catsAdmin, since: "3.0.0",
			summary: "Reset a Redis Cluster node",
			help:    []string{"RESET [HARD|SOFT]", "Reset current node (default: soft)."},
			run:     (*clusterActor).reset},
		{name: "set-config-epoch", arity: 3, flags: flagsAdmin, cats: catsAdmin, since: "3.0.0",
			summary: "Set the configuration epoch in a new node",
			help:    []string{"SET-CONFIG-EPOCH <epoch>", "Set config epoch of current node."},
			run:     (*clusterActor).setConfigEpoch},
		{name: "setslot", arity: -4, flags: flagsAdmin, cats: catsAdmin, since: "3.0.0",
			summary: "Bind a hash slot to a specific node",
			help: []string{"SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
				"Set slot state."},
			run: (*clusterActor).execSetSlot},
		{name: "replicas", arity: 3, flags: flagsReadAdmin, cats: catsAdmin, tips: tipsNondet, since: "5.0.0",
			summary: "List replica nodes of the specified master node",
			help:    []string{"REPLICAS <node-id>", "Return <node-id> replicas."},
			run:     (*clusterActor).replicas},
		{name: "slaves", arity: 3, flags: flagsReadAdmin, cats: catsAdmin, tips: tipsNondet, since: "3.0.0",
			summary: "List replica nodes of the specified master node",
			run:     (*clusterActor).replicas},
		{name: "saveconfig", arity: 2, flags: flagsAdmin, cats: catsAdmin, since: "3.0.0",
			summary: "Forces the node to save cluster state on disk",
			help:    []string{"SAVECONFIG", "Force saving cluster configuration on disk."},
			run:     (*clusterActor).saveConfig},
		{name: "slots", arity: 2, flags: flagsStale, cats: catsSlow, tips: tipsNondet, since: "3.0.0",
			summary: "Get array of Cluster slot to node mappings",
			help: []string{"SLOTS", "Return information about slots range mappings. Each range is made of:",
				"start, end, master and replicas IP addresses, ports and ids"},
			run: func(a *clusterActor, w *resp.Writer, _ [][]byte) { writeSlots(w, a.st.Slots()) }},
		{name: "shards", arity: 2, flags: flagsStale, cats: catsSlow, tips: tipsNondet, since: "7.0.0",
			summary: "Get array of cluster slots to node mappings",
			help: []string{"SHARDS",
				"Return information about slot range mappings and the nodes associated with them."},
			run: (*clusterActor).shards},
		{name: "links", arity: 2, flags: flagsStale, cats: catsSlow, tips: tipsNondet, since: "7.0.0",
			summary: "Returns a list of all TCP links to and from peer nodes in cluster",
			help: []string{"LINKS", "Return information about all network links between this node and its peers.",
				"Output format is an array where each array element is a map containing attributes of a link"},
			run: func(a *clusterActor, w *resp.Writer, _ [][]byte) { a.writeLinks(w, time.Now().UnixMilli()) }},
		{name: "help", arity: 2, flags: []string{"loading", "stale"}, cats: catsSlow, since: "5.0.0",
			summary: "Show helpful text about the different subcommands",
			help:    []string{"HELP", "Prints this help."},
			local:   writeHelp},
	}
}

// AddSubcommand adds one CLUSTER subcommand to the client I/O layer's
// command table: spec is its entry; local, when not nil, runs it on the
// event loop, else the layer hands it to the cluster actor (Submit).
type AddSubcommand func(name string, spec *command.Spec, local func(w *resp.Writer, args [][]byte))

var registerOnce sync.Once

// Register adds every CLUSTER subcommand of the table that this package
// serves (on the actor or locally) with add. The wiring calls it once,
// after the CLUSTER container is registered; later calls do nothing.
func Register(add AddSubcommand) {
	registerOnce.Do(func() {
		for _, sc := range subcommands() {
			if sc.run == nil && sc.local == nil {
				continue
			}
			add(sc.name, &command.Spec{Arity: sc.arity, Flags: sc.flags, Categories: sc.cats, Tips: sc.tips,
				Group: "cluster", Since: sc.since, Summary: sc.summary}, sc.local)
		}
	})
}

// actorSubcommands indexes the subcommands the actor serves by name.
func actorSubcommands() map[string]func(a *clusterActor, w *resp.Writer, args [][]byte) {
	m := map[string]func(a *clusterActor, w *resp.Writer, args [][]byte){}
	for _, sc := range subcommands() {
		if sc.run != nil {
			m[sc.name] = sc.run
		}
	}
	return m
}

// writeHelp is CLUSTER HELP: the table's help lines, descriptions indented.
func writeHelp(w *resp.Writer, _ [][]byte) {
	lines := []string{"CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"}
	for _, sc := range subcommands() {
		for i, l := range sc.help {
			if i > 0 {
				l = "    " + l
			}
			lines = append(lines, l)
		}
	}
	w.Array(len(lines))
	for _, l := range lines {
		w.Simple(l)
	}
}

// exec serves one CLUSTER subcommand on the actor (args[1] names it).
func (a *clusterActor) exec(w *resp.Writer, args [][]byte) {
	run := a.subs[strings.ToLower(string(args[1]))]
	if run == nil {
		w.Error("ERR unknown subcommand '" + string(args[1]) + "'. Try CLUSTER HELP.")
		return
	}
	run(a, w, args)
}

// reply writes +OK, or err's text.
func reply(w *resp.Writer, err error) {
	if err != nil {
		w.Error(err.Error())
		return
	}
	w.OK()
}

// okOrError serves a subcommand that hands its arguments to one State
// method and replies +OK or the method's error.
func okOrError(f func(st *bus.State, args [][]byte) error) func(*clusterActor, *resp.Writer, [][]byte) {
	return func(a *clusterActor, w *resp.Writer, args [][]byte) { reply(w, f(a.st, args[2:])) }
}
