package bus

import busv1 "github.com/slotd/slotd/proto/slotd/bus/v1"

// Failure detection, as in the specification's "Fault tolerance" section:
//
//   - a node whose PING has been pending, and from which no frame at all
//     arrived, for longer than the node timeout is flagged PFAIL (our own
//     suspicion, spread in every gossip section);
//   - primaries' PFAIL/FAIL gossip about a node is kept as failure reports,
//     valid for 2 × node timeout;
//   - PFAIL turns into FAIL when a majority of the slot-serving primaries
//     (myself included, if a primary) reports it; the FAIL is broadcast and
//     every node that hears it flags the node FAIL at once;
//   - FAIL is lifted when the node is reachable again and it is a replica,
//     or a primary without slots, or a primary that still serves its slots
//     2 × node timeout after it was flagged (nobody failed it over):
//     clearFailureIfNeeded.

// detectFailure flags n PFAIL when its PING has been pending for longer
// than the node timeout with no frame received from it meanwhile.
func (s *State) detectFailure(now int64, n *Node) {
	if n.PingSent == 0 {
		return
	}
	delay := min(now-n.PingSent, now-n.dataRecv)
	if delay <= s.nodeTimeout() || n.Flags&(FlagPFail|FlagFail) != 0 {
		return
	}
	n.Flags |= FlagPFail
	s.fx.Save = true
	s.updateState()
	// Our failure report travels in the gossip of every PING; send one to
	// every other reachable primary now rather than at their next
	// scheduled ping (up to NODE_TIMEOUT/2 away), so the FAIL quorum forms
	// within a tick of the primaries' own detection. (Redis waits for the
	// schedule; this costs one PING per primary per PFAIL.)
	for _, m := range s.sorted {
		if m != n && m != s.myself && m.IsMaster() && m.Flags&(FlagPFail|FlagFail|FlagHandshake|FlagNoAddr) == 0 &&
			m.link != nil && m.link.up {
			pending := m.PingSent
			s.sendPing(now, m.link, busv1.Type_TYPE_PING)
			if pending != 0 {
				m.PingSent = pending // an older unanswered ping keeps counting
			}
		}
	}
}

// markFailingIfNeeded turns n's PFAIL into FAIL once enough primaries
// agree, and tells everybody.
func (s *State) markFailingIfNeeded(now int64, n *Node) {
	if n.Flags&FlagPFail == 0 || n.Failed() {
		return
	}
	quorum := s.size/2 + 1
	reports := s.failureReports(now, n)
	if s.myself.IsMaster() {
		reports++
	}
	if reports < quorum {
		return
	}
	n.Flags = n.Flags&^FlagPFail | FlagFail
	n.failTime = now
	// A replica relays it too: the reports it counted come from primaries.
	s.sendFail(n)
	s.fx.Save = true
	s.updateState()
}

// sendFail broadcasts that n is failing.
func (s *State) sendFail(n *Node) {
	f := &busv1.Frame{Header: s.header(busv1.Type_TYPE_FAIL), Fail: &busv1.Fail{Id: n.ID}}
	s.broadcast(f)
}

// broadcast sends f to every node we have an outbound link to.
func (s *State) broadcast(f *busv1.Frame) {
	for _, n := range s.sorted {
		if n == s.myself || n.Flags&FlagHandshake != 0 {
			continue
		}
		s.send(n.link, f)
	}
}

// Rejoin delay bounds (ms): a primary back from a minority waits the node
// timeout, clamped to these, before it takes writes again.
const (
	minRejoinDelay = 500
	maxRejoinDelay = 5000
)

func (s *State) rejoinDelay() int64 {
	return min(max(s.nodeTimeout(), minRejoinDelay), maxRejoinDelay)
}
