package netio

// A node-wide pause (DEBUG SLEEP): until it ends, the loops leave what
// clients send in their input buffers and wake each connection when the
// pause is over; the cluster actor does the same with bus messages
// (actors/cluster/debug.go). Nothing blocks: a pause is a deadline that
// OnTraffic checks. Replies to commands already dispatched still go out,
// and shard timers (active expiry, save rules) keep running.

import (
	"strconv"
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
