package netio

// A node-wide pause (DEBUG SLEEP): until it ends, the loops leave what
// clients send in their input buffers and wake each connection when the
// pause is over; the cluster actor does the same with bus messages
// (actors/cluster/debug.go). Nothing blocks: a pause is a deadline that
// OnTraffic checks. Replies to commands already dispatched still go out,
// and shard timers (active expiry, save rules) keep running.

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/slotd/slotd/netio/resp"
)

func registerPause() {
	RegisterDebug("drop-cluster-packet-filter", []string{"DROP-CLUSTER-PACKET-FILTER <packet-type>",
		"    Drop all packets that match the filtered type. Set to -1 allow all packets."}, 3, debugDropFilter)
	RegisterDebug("close-cluster-link-on-packet-drop", []string{"CLOSE-CLUSTER-LINK-ON-PACKET-DROP <0|1>",
		"    This is valid only when DROP-CLUSTER-PACKET-FILTER is set to a valid packet type.",
		"    When set to 1, the cluster link is closed after dropping a packet based on the filter."}, 3,
		debugCloseOnDrop)
	RegisterDebug("clusterlink", []string{"CLUSTERLINK KILL <to|from|all> <node-id>",
		"    Kills the link based on the direction to/from (both) with the provided node."}, 5, debugClusterLink)
}

// PauseFor freezes the node for d (a later, longer pause extends it).
func (s *Server) PauseFor(d time.Duration) {
	if d <= 0 {
		return
	}
	until := time.Now().Add(d).UnixNano()
	if d > time.Duration(1<<62) {
		until = 1<<63 - 1
	}
	for {
		cur := s.pausedUntil.Load()
		if cur >= until || s.pausedUntil.CompareAndSwap(cur, until) {
			return
		}
	}
}

// PausedFor is how long the node stays paused (0 when it is not).
func (s *Server) PausedFor() time.Duration {
	until := s.pausedUntil.Load()
	if until == 0 {
		return 0
	}
	return max(time.Duration(until-time.Now().UnixNano()), 0)
}

// holdIfPaused leaves c's input unread while the node is paused and
// wakes the connection when the pause ends.
func (s *Server) holdIfPaused(c gnet.Conn) bool {
	rem := s.PausedFor()
	if rem <= 0 {
		return false
	}
	time.AfterFunc(rem, func() { _ = c.Wake(nil) })
	return true
}

// clusterDebug is what the cluster actor offers the DEBUG commands.
type clusterDebug interface {
	SetDropFilter(t int)
	SetCloseOnDrop(on bool)
	KillLinks(dir, id string, done func(errText string))
}

func debugDropFilter(x *Ctx) {
	v, ok := resp.ParseInt(x.Args[2])
	if !ok {
		x.W.Error("ERR value is not an integer or out of range")
		return
	}
	if cd, ok := x.S.Cluster.(clusterDebug); ok {
		cd.SetDropFilter(int(max(min(v, 1<<30), -(1 << 30))))
	}
	x.W.OK()
}

func debugCloseOnDrop(x *Ctx) {
	v, err := strconv.ParseInt(string(x.Args[2]), 10, 64)
	if err != nil {
		v = 0 // atoi semantics, as Redis
	}
	if cd, ok := x.S.Cluster.(clusterDebug); ok {
		cd.SetCloseOnDrop(v != 0)
	}
	x.W.OK()
}

// debugClusterLink is DEBUG CLUSTERLINK KILL <to|from|all> <node-id>. The
// request reaches the cluster actor before anything the commands after it
// send over the bus (an SPUBLISH later in the same MULTI does not go out on
// the killed link); the reply follows when the actor has done it.
func debugClusterLink(x *Ctx) {
	if !strings.EqualFold(string(x.Args[2]), "kill") {
		x.W.Error("ERR unknown subcommand or wrong number of arguments for '" + Trunc(string(x.Args[1]), 128) +
			"'. Try DEBUG HELP.")
		return
	}
	cd, ok := x.S.Cluster.(clusterDebug)
	if !x.S.clusterMode() || !ok {
		x.W.Error("ERR Debug option only available for cluster mode enabled setup!")
		return
	}
	r := &lateReply{}
	cd.KillLinks(string(x.Args[3]), string(x.Args[4]), r.result)
	x.Defer(r.start)
}

// lateReply joins a result that may come before or after its deferred
// reply starts: whichever comes second writes the reply.
type lateReply struct {
	mu      sync.Mutex
	d       *Deferred
	errText string
	got     bool
}

func (r *lateReply) result(errText string) {
	r.mu.Lock()
	r.errText, r.got = errText, true
	d := r.d
	r.mu.Unlock()
	if d != nil {
		r.write(d)
	}
}

func (r *lateReply) start(d *Deferred) {
	r.mu.Lock()
	r.d = d
	got := r.got
	r.mu.Unlock()
	if got {
		r.write(d)
	}
}

func (r *lateReply) write(d *Deferred) {
	if r.errText != "" {
		d.W.Error(r.errText)
	} else {
		d.W.OK()
	}
	d.Done()
}
