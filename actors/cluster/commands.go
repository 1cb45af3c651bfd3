package cluster

import (
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/slotd/slotd/bus"
	"github.com/slotd/slotd/netio/resp"
)

// Redis 7.0 texts of the membership subcommands' own checks (the bus
// returns the texts of the checks it makes).
const (
	errSyntax = "ERR syntax error"
)

// subcommandSyntax is Redis's reply to a subcommand called with an argument
// count it does not take (the arity check only bounds it from below).
func subcommandSyntax(sub []byte) string {
	s := string(sub)
	if len(s) > 128 {
		s = s[:128]
	}
	return "ERR unknown subcommand or wrong number of arguments for '" + s + "'. Try CLUSTER HELP."
}

// The subcommands the actor serves (subcommands.go has the table).

// meet is CLUSTER MEET ip port [cport]: the handshake runs in the
// background; the reply is +OK at once unless the address is unusable.
func (a *clusterActor) meet(w *resp.Writer, args [][]byte) {
	if len(args) != 4 && len(args) != 5 {
		w.Error(subcommandSyntax(args[1]))
		return
	}
	port, ok := resp.ParseInt(args[3])
	if !ok {
		w.Error("ERR Invalid TCP base port specified: " + string(args[3]))
		return
	}
	cport := port + bus.PortIncr
	if len(args) == 5 {
		if cport, ok = resp.ParseInt(args[4]); !ok {
			w.Error("ERR Invalid TCP bus port specified: " + string(args[4]))
			return
		}
	}
	ip := string(args[2])
	if port <= 0 || port > 65535 || cport <= 0 || cport > 65535 || net.ParseIP(ip) == nil {
		w.Error("ERR Invalid node address specified: " + ip + ":" + string(args[3]))
		return
	}
	reply(w, a.st.Meet(time.Now().UnixMilli(), ip, int(port), int(cport)))
}

func (a *clusterActor) forget(w *resp.Writer, args [][]byte) {
	reply(w, a.st.Forget(time.Now().UnixMilli(), string(args[2])))
}

// reset is CLUSTER RESET [HARD|SOFT].
func (a *clusterActor) reset(w *resp.Writer, args [][]byte) {
	if len(args) > 3 {
		w.Error(subcommandSyntax(args[1]))
		return
	}
	hard := false
	if len(args) == 3 {
		switch strings.ToLower(string(args[2])) {
		case "hard":
			hard = true
		case "soft":
		default:
			w.Error(errSyntax)
			return
		}
	}
	reply(w, a.st.Reset(time.Now().UnixMilli(), hard, a.dbIsEmpty()))
}

func (a *clusterActor) flushSlots(w *resp.Writer, _ [][]byte) {
	reply(w, a.st.FlushSlots(a.dbIsEmpty()))
}

func (a *clusterActor) replicateTo(w *resp.Writer, args [][]byte) {
	reply(w, a.st.Replicate(time.Now().UnixMilli(), string(args[2]), a.dbIsEmpty()))
}

// failover is CLUSTER FAILOVER [FORCE|TAKEOVER].
func (a *clusterActor) failover(w *resp.Writer, args [][]byte) {
	mode, err := bus.ParseFailover(string(args[1]), args[2:])
	if err == nil {
		err = a.st.Failover(time.Now().UnixMilli(), mode)
	}
	reply(w, err)
}

// dbIsEmpty reports whether the node holds no keys (unknown: empty).
func (a *clusterActor) dbIsEmpty() bool { return a.dbEmpty == nil || a.dbEmpty() }

func (a *clusterActor) saveConfig(w *resp.Writer, _ [][]byte) {
	if err := a.saver.save(a.st.Config()); err != nil {
		w.Error("ERR error saving the cluster node config: " + err.Error())
		return
	}
	w.OK()
}

func (a *clusterActor) setConfigEpoch(w *resp.Writer, args [][]byte) {
	epoch, err := bus.ParseConfigEpoch(args[2])
	if err != nil {
		w.Error(err.Error())
		return
	}
	reply(w, a.st.SetConfigEpoch(epoch))
}

func (a *clusterActor) bumpEpoch(w *resp.Writer, _ [][]byte) {
	bumped, epoch := a.st.BumpEpoch()
	word := "STILL "
	if bumped {
		word = "BUMPED "
	}
	w.Simple(word + strconv.FormatUint(epoch, 10))
}

func (a *clusterActor) countFailureReports(w *resp.Writer, args [][]byte) {
	n, err := a.st.CountFailureReports(string(args[2]))
	if err != nil {
		w.Error(err.Error())
		return
	}
	w.Int(int64(n))
}

// shards is CLUSTER SHARDS, with this node's replication offset.
func (a *clusterActor) shards(w *resp.Writer, _ [][]byte) {
	var off int64
	if a.repl != nil {
		off = a.repl.Offset()
	}
	writeShards(w, a.st.Shards(off))
}

// writeLinks encodes CLUSTER LINKS: one map per link with direction, node,
// create-time, events, send-buffer-allocated and send-buffer-used. The
// send-buffer figures come from the link's peer actor.
func (a *clusterActor) writeLinks(w *resp.Writer, now int64) {
	links := a.st.Links(now)
	w.Array(len(links))
	for _, l := range links {
		alloc, used := l.SendBufferAllocated, l.SendBufferUsed
		events := l.Events
		if h := a.links[l.Link]; h != nil {
			alloc, used = h.SendBuffer()
			events = ""
			if h.Connected() {
				events = "r"
			}
			if used > 0 {
				events += "w"
			}
		}
		w.Map(6)
		w.BulkString("direction")
		w.BulkString(l.Direction)
		w.BulkString("node")
		w.BulkString(l.Node)
		w.BulkString("create-time")
		w.Int(l.CreateTime)
		w.BulkString("events")
		w.BulkString(events)
		w.BulkString("send-buffer-allocated")
		w.Int(alloc)
		w.BulkString("send-buffer-used")
		w.Int(used)
	}
}

// replicas is CLUSTER REPLICAS (and SLAVES) id: the CLUSTER NODES line
// (without its newline) of every replica of master id.
func (a *clusterActor) replicas(w *resp.Writer, args [][]byte) {
	lines, err := a.st.Replicas(string(args[2]))
	if err != nil {
		w.Error(err.Error())
		return
	}
	w.Array(len(lines))
	for _, l := range lines {
		w.BulkString(l)
	}
}
