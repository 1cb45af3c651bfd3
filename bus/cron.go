package bus

import busv1 "github.com/slotd/slotd/proto/slotd/bus/v1"

// TickInterval is how often the owner must call Tick (ms), as Redis runs
// clusterCron ten times a second.
const TickInterval = 100

// Tick is the periodic work of Redis's clusterCron, run every TickInterval:
//
//   - a handshake not completed within the node timeout (at least 1 s) is
//     dropped;
//   - every node with an address but no outbound link is dialed;
//   - every 10th tick, one node out of 5 random samples — the one whose PONG
//     is the oldest, among those linked and without a pending PING — is
//     pinged, so each node sends about one ping a second;
//   - a link whose PING has been pending (with no traffic at all) for half
//     the node timeout is closed and dialed again;
//   - any linked node without a pending PING whose last PONG is older than
//     half the node timeout is pinged, so no node goes unheard for long,
//     and so is a slot-serving primary whose answer to our own PING is
//     older than half the quorum timeout (quorum.go);
//   - MEET is repeated until the node answers, and a node that has not
//     connected to us for a handshake timeout is sent a MEET (it may not
//     know us: Valkey's reliable-MEET rules);
//   - a node whose PING has been pending for longer than the node timeout,
//     with no frame from it meanwhile, is flagged PFAIL (failure.go);
//   - a primary pings the replica of a manual failover every tick; a
//     manual failover past its deadline is abandoned (manual.go);
//   - a replica runs its failover (election.go) and replica migration
//     (migration.go) checks;
//   - the cluster state is re-evaluated (the minority rule, the rejoin
//     delay).
func (s *State) Tick(now int64) {
	s.tick(now)
	s.iteration++
	s.updateMyselfFlags()
	timeout := s.nodeTimeout()
	handshakeTimeout := s.handshakeTimeout()

	// Iterate over a copy: nodes may be deleted on the way.
	nodes := append([]*Node(nil), s.sorted...)
	for _, n := range nodes {
		if n == s.myself || n.Flags&FlagNoAddr != 0 {
			continue
		}
		if n.Flags&FlagHandshake != 0 {
			if now-n.ctime > handshakeTimeout {
				s.delNode(n)
				continue
			}
			if lk := n.link; lk != nil && lk.up && n.meet && now-n.meetSent > handshakeTimeout/4 {
				// No answer yet: the MEET may be lost; a repeated one is
				// harmless.
				s.sendPing(now, lk, busv1.Type_TYPE_MEET)
			}
		}
		if n.link == nil && n.IP != "" && n.CPort != 0 {
			s.dial(now, n)
		}
	}

	if s.iteration%10 == 0 && len(s.sorted) > 1 {
		var oldest *Node
		for range 5 {
			n := s.sorted[s.rng.IntN(len(s.sorted))]
			if n.link == nil || !n.link.up || n.PingSent != 0 || n.Flags&(FlagMyself|FlagHandshake) != 0 {
				continue
			}
			if oldest == nil || s.lastHeard(n) < s.lastHeard(oldest) {
				oldest = n
			}
		}
		if oldest != nil {
			s.sendPing(now, oldest.link, busv1.Type_TYPE_PING)
		}
	}

	for _, n := range s.sorted {
		if n.Flags&(FlagMyself|FlagNoAddr|FlagHandshake) != 0 {
			continue
		}
		if lk := n.link; lk != nil && now-lk.ctime > timeout && n.PingSent != 0 &&
			now-n.PingSent > timeout/2 && now-n.dataRecv > timeout/2 {
			// Maybe the connection is broken while the node is alive: a
			// new one is dialed at once.
			s.closeLink(lk)
			s.dial(now, n)
			continue
		}
		if lk := n.link; lk != nil && lk.up && n.PingSent == 0 && now-n.PongRecv > timeout/2 {
			s.sendPing(now, lk, busv1.Type_TYPE_PING)
			continue
		}
		if s.quorumPing(now, n) {
			continue
		}
		if s.mfPing(now, n) {
			continue
		}
		s.detectFailure(now, n)
	}
	s.cleanBans(now)
	s.checkManualFailoverTimeout(now)
	if s.myself.IsReplica() {
		s.handleManualFailover(now)
		s.handleReplicaFailover(now)
		s.checkReplicaMigration(now)
	}
	// The minority rule (quorum.go) and the rejoin delay are timed.
	s.updateState()
}

// handshakeTimeout is how long a handshake may take (and how long a known
// node may go without connecting back before it is met again): the node
// timeout, at least a second, as in Redis.
func (s *State) handshakeTimeout() int64 { return max(s.nodeTimeout(), 1000) }
