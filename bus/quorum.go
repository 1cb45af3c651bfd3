package bus

import (
	"slices"

	busv1 "github.com/slotd/slotd/proto/slotd/bus/v1"
)

// The minority rule, as early as the specification allows it: a node
// counts a slot-serving primary as reachable only while that primary
// answered one of our own PINGs within the quorum timeout
// (cluster-node-timeout, or the shorter cluster-quorum-timeout), so a
// primary cut off from the majority turns its cluster state fail — and
// stops taking writes — exactly that long after the last PONG from a
// majority, checked every Tick. Redis counts a primary as unreachable only
// once it is flagged PFAIL, which comes a node timeout after the first
// unanswered PING, itself sent up to half a node timeout after the last
// PONG: between 1 and 1.5 node timeouts after the cut. Every Tick pings a
// slot-serving primary whose own PONG is nearly that old (gossip may keep
// PongRecv fresh without one), and the rule applies only once the node has
// run for a quorum timeout (after a restart no PONG is fresh yet).

// quorumTimeout is the quorum rule's timeout (ms).
func (s *State) quorumTimeout() int64 {
	nt := s.nodeTimeout()
	if q := s.opts.QuorumTimeout; q > 0 && q < nt {
		return q
	}
	return nt
}

// quorumReachable reports whether slot-serving primary n counts as
// reachable for the minority rule.
func (s *State) quorumReachable(n *Node) bool {
	q := s.quorumTimeout()
	if n == s.myself || s.started == 0 || s.now-s.started <= q {
		return true
	}
	return s.now-n.pongAt <= q
}

// quorumPing pings slot-serving primary n when its answer to our own PING
// is older than the quorum timeout less a margin for the round trip (a
// quarter of it, 300 ms at least), again every eighth of the timeout
// (100 ms at least) until it answers, so one lost frame does not cost the
// quorum (a PING still pending keeps its time: it counts for the failure
// detection). It reports whether it pinged.
func (s *State) quorumPing(now int64, n *Node) bool {
	q := s.quorumTimeout()
	due := q - max(q/4, 300)
	lk := n.link
	if !n.IsMaster() || n.numSlots == 0 || lk == nil || !lk.up || now-n.pongAt <= due ||
		now-n.pingAt <= min(due, max(q/8, 100)) {
		return false
	}
	pending := n.PingSent
	s.sendPing(now, lk, busv1.Type_TYPE_PING)
	if pending != 0 {
		n.PingSent = pending
	}
	return true
}

// lastHeard is what the periodic random PING ranks nodes by: the last
// PONG, or for a slot-serving primary the last answer to our own PING
// (so those pings keep the quorum rule's evidence fresh too).
func (s *State) lastHeard(n *Node) int64 {
	if n.IsMaster() && n.numSlots > 0 {
		return n.pongAt
	}
	return n.PongRecv
}

// LastOwnPong is when node id last answered one of our own PINGs (unix
// ms, 0: never): the minority rule's evidence.
func (s *State) LastOwnPong(id string) int64 {
	if n := s.nodes[id]; n != nil {
		return n.pongAt
	}
	return 0
}

// WriteLease is until when (unix ms) this node may serve its slots on the
// evidence it has: a quorum timeout after the last PONG from a majority of
// the slot-serving primaries, myself counted. The event loops check it
// with every command, so a node stalled past it (a SIGSTOP, a long pause)
// refuses writes the moment it resumes, before the next Tick turns its
// cluster state fail. 0: no limit (not a slot-serving primary, or the only
// one).
func (s *State) WriteLease() int64 {
	me := s.myself
	if !me.IsMaster() || me.numSlots == 0 || s.started == 0 {
		return 0
	}
	q := s.quorumTimeout()
	need := s.size/2 + 1 - 1 // others needed besides myself
	if need <= 0 {
		return 0
	}
	var until []int64
	for _, n := range s.sorted {
		if n == me || !n.IsMaster() || n.numSlots == 0 || n.Flags&(FlagFail|FlagPFail) != 0 {
			continue
		}
		until = append(until, max(n.pongAt, s.started)+q)
	}
	if len(until) < need {
		return s.now // not enough primaries left: nothing to lease
	}
	slices.Sort(until)
	return until[len(until)-need]
}
