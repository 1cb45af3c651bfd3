package netio

import (
	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/slots"
)

// CLUSTER subcommands served on the loop (KEYSLOT, HELP) or by the cluster
// actor (everything that reads or changes the cluster configuration). The
// CLUSTER container itself lives in netio/command; COUNTKEYSINSLOT and
// GETKEYSINSLOT are shard commands in actors/shard. dispatch answers every
// CLUSTER subcommand with errClusterDisabled when cluster mode is off.

const errClusterDisabled = "ERR This instance has cluster support disabled"

func registerCmdCluster() {
	command.Register(Loop(&command.Spec{Name: "asking", Arity: 1, Flags: []string{"fast"},
		Categories: []string{"fast", "connection"}, Group: "cluster", Since: "3.0.0",
		Summary: "Sent by cluster clients after an -ASK redirect"}, cmdAsking))
	stale := []string{"stale"}
	admin := []string{"admin", "stale", "no_async_loading"}
	slow := []string{"slow"}
	adminCats := []string{"admin", "slow", "dangerous"}
	nondet := []string{"nondeterministic_output"}
	sub := func(name string, arity int, flags, cats, tips []string, since, summary string, h LoopHandler) {
		command.AddSubcommand("cluster", name, Loop(&command.Spec{Arity: arity, Flags: flags, Categories: cats,
			Tips: tips, Group: "cluster", Since: since, Summary: summary}, h))
	}
	sub("keyslot", 3, stale, slow, nil, "3.0.0", "Returns the hash slot of the specified key", clusterKeySlot)
	sub("help", 2, []string{"loading", "stale"}, slow, nil, "5.0.0", "Show helpful text about the different subcommands", clusterHelp)
	sub("myid", 2, stale, slow, nil, "3.0.0", "Return the node id", clusterSubmit)
	sub("myshardid", 2, stale, slow, nondet, "7.2.0", "Return the node shard id", clusterSubmit)
	sub("info", 2, stale, slow, nondet, "3.0.0", "Provides info about Redis Cluster node state", clusterSubmit)
	sub("nodes", 2, stale, slow, nondet, "3.0.0", "Get Cluster config for the node", clusterSubmit)
	sub("slots", 2, stale, slow, nondet, "3.0.0", "Get array of Cluster slot to node mappings", clusterSubmit)
	sub("shards", 2, stale, slow, nondet, "7.0.0", "Get array of cluster slots to node mappings", clusterSubmit)
	sub("addslots", -3, admin, adminCats, nil, "3.0.0", "Assign new hash slots to receiving node", clusterSubmit)
	sub("addslotsrange", -4, admin, adminCats, nil, "7.0.0", "Assign new hash slots to receiving node", clusterSubmit)
	sub("delslots", -3, admin, adminCats, nil, "3.0.0", "Set hash slots as unbound in receiving node", clusterSubmit)
	sub("delslotsrange", -4, admin, adminCats, nil, "7.0.0", "Set hash slots as unbound in receiving node", clusterSubmit)
	sub("flushslots", 2, admin, adminCats, nil, "3.0.0", "Delete a node's own slots information", clusterSubmit)
	sub("meet", -4, admin, adminCats, nil, "3.0.0", "Force a node cluster to handshake with another node", clusterSubmit)
	sub("forget", 3, admin, adminCats, nil, "3.0.0", "Remove a node from the nodes table", clusterSubmit)
	sub("reset", -2, []string{"admin", "noscript", "stale"}, adminCats, nil, "3.0.0", "Reset a Redis Cluster node",
		clusterSubmit)
	sub("saveconfig", 2, admin, adminCats, nil, "3.0.0", "Forces the node to save cluster state on disk", clusterSubmit)
	sub("set-config-epoch", 3, admin, adminCats, nil, "3.0.0", "Set the configuration epoch in a new node",
		clusterSubmit)
	sub("bumpepoch", 2, admin, adminCats, nondet, "3.0.0", "Advance the cluster config epoch", clusterSubmit)
	sub("setslot", -4, admin, adminCats, nil, "3.0.0", "Bind a hash slot to a specific node", clusterSubmit)
	readAdmin := []string{"admin", "stale"}
	sub("count-failure-reports", 3, readAdmin, adminCats, nondet, "3.0.0",
		"Return the number of failure reports active for a given node", clusterSubmit)
	sub("links", 2, stale, slow, nondet, "7.0.0", "Returns a list of all TCP links to and from peer nodes in cluster",
		clusterSubmit)
	sub("replicas", 3, readAdmin, adminCats, nondet, "5.0.0", "List replica nodes of the specified master node",
		clusterSubmit)
	sub("slaves", 3, readAdmin, adminCats, nondet, "3.0.0", "List replica nodes of the specified master node",
		clusterSubmit)
	sub("replicate", 3, admin, adminCats, nil, "3.0.0", "Configure a node as replica of a master node",
		clusterSubmit)
	sub("failover", -2, admin, adminCats, nil, "3.0.0", "Forces a replica to perform a manual failover of its master",
		clusterSubmit)
}

// ASKING lets the next command into a slot this node is importing (the
// dispatcher clears the flag after any other command, as Redis does outside
// MULTI).
func cmdAsking(x *Ctx) {
	if !x.S.clusterMode() {
		x.W.Error(errClusterDisabled)
		return
	}
	x.C.asking = true
	x.W.OK()
}

func clusterKeySlot(x *Ctx) { x.W.Int(int64(slots.HashSlot(x.Args[2]))) }

// clusterSubmit hands the command to the cluster actor; the reply is
// completed when the actor is done (after nodes.conf is saved, if needed).
func clusterSubmit(x *Ctx) {
	args := copyArgs(x.Args)
	cl := x.S.Cluster
	x.Defer(func(d *Deferred) { cl.Submit(args, &d.W, d.Done) })
}

// clusterHelpLines is CLUSTER HELP as redis-server 7.0.15 prints it, plus
// MYSHARDID (added in 7.2), which slotd also serves.
var clusterHelpLines = []string{
	"CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"ADDSLOTS <slot> [<slot> ...]",
	"    Assign slots to current node.",
	"ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
	"    Assign slots which are between <start-slot> and <end-slot> to current node.",
	"BUMPEPOCH",
	"    Advance the cluster config epoch.",
	"COUNT-FAILURE-REPORTS <node-id>",
	"    Return number of failure reports for <node-id>.",
	"COUNTKEYSINSLOT <slot>",
	"    Return the number of keys in <slot>.",
	"DELSLOTS <slot> [<slot> ...]",
	"    Delete slots information from current node.",
	"DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
	"    Delete slots information which are between <start-slot> and <end-slot> from current node.",
	"FAILOVER [FORCE|TAKEOVER]",
	"    Promote current replica node to being a master.",
	"FORGET <node-id>",
	"    Remove a node from the cluster.",
	"GETKEYSINSLOT <slot> <count>",
	"    Return key names stored by current node in a slot.",
	"FLUSHSLOTS",
	"    Delete current node own slots information.",
	"INFO",
	"    Return information about the cluster.",
	"KEYSLOT <key>",
	"    Return the hash slot for <key>.",
	"MEET <ip> <port> [<bus-port>]",
	"    Connect nodes into a working cluster.",
	"MYID",
	"    Return the node id.",
	"MYSHARDID",
	"    Return the node's shard id.",
	"NODES",
	"    Return cluster configuration seen by node. Output format:",
	"    <id> <ip:port> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
	"REPLICATE <node-id>",
	"    Configure current node as replica to <node-id>.",
	"RESET [HARD|SOFT]",
	"    Reset current node (default: soft).",
	"SET-CONFIG-EPOCH <epoch>",
	"    Set config epoch of current node.",
	"SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
	"    Set slot state.",
	"REPLICAS <node-id>",
	"    Return <node-id> replicas.",
	"SAVECONFIG",
	"    Force saving cluster configuration on disk.",
	"SLOTS",
	"    Return information about slots range mappings. Each range is made of:",
	"    start, end, master and replicas IP addresses, ports and ids",
	"SHARDS",
	"    Return information about slot range mappings and the nodes associated with them.",
	"LINKS",
	"    Return information about all network links between this node and its peers.",
	"    Output format is an array where each array element is a map containing attributes of a link",
	"HELP",
	"    Prints this help.",
}

func clusterHelp(x *Ctx) {
	x.W.Array(len(clusterHelpLines))
	for _, l := range clusterHelpLines {
		x.W.Simple(l)
	}
}
