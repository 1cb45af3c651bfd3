package bus

import (
	"encoding/binary"
	"encoding/hex"
	"sort"

	busv1 "github.com/slotd/slotd/proto/slotd/bus/v1"
)

// processGossip applies a gossip section, as Redis's
// clusterProcessGossipSection. sender is nil when the frame came from an
// unknown node (a MEET): its gossip may refresh what we know but never adds
// nodes.
//
// For a known node: failure reports (only primaries' count), a newer pong
// time when we have no doubt about the node ourselves, and a new address
// when we cannot reach it but the sender can. An unknown node is added
// under its real id (and dialed by the next Tick) if the sender is known,
// the entry has an address, and CLUSTER FORGET did not ban the id.
func (s *State) processGossip(now int64, sender *Node, entries []*busv1.Gossip) {
	for _, g := range entries {
		if g == nil || !ValidID(g.Id) {
			continue
		}
		flags := fromWire(g.Flags)
		n := s.nodes[g.Id]
		if n == nil {
			if sender == nil || flags&(FlagNoAddr|FlagHandshake|FlagMyself) != 0 || g.Ip == "" ||
				s.isBanned(g.Id) {
				continue
			}
			// PFAIL is the sender's private suspicion; FAIL and the role
			// are cluster-wide facts.
			n = &Node{ID: g.Id, Flags: flags & (FlagMaster | FlagSlave | FlagFail | FlagNoFailover),
				IP: g.Ip, Port: int(g.Port), CPort: int(g.Cport), Hostname: g.Hostname, ctime: now, inFreed: now}
			if n.Failed() {
				n.failTime = now
			}
			s.addNode(n)
			s.fx.Save = true
			continue
		}
		if n.Flags&FlagHandshake != 0 {
			continue
		}
		if sender != nil && sender.IsMaster() && n != s.myself {
			if flags&(FlagFail|FlagPFail) != 0 {
				s.addFailureReport(now, n, sender)
				s.markFailingIfNeeded(now, n)
			} else {
				s.delFailureReport(now, n, sender)
			}
		}
		if n != s.myself && flags&(FlagFail|FlagPFail) == 0 && n.PingSent == 0 && s.failureReports(now, n) == 0 {
			// Someone heard from it more recently than we did (and not in
			// our future).
			if g.PongReceived <= now+500 && g.PongReceived > n.PongRecv {
				n.PongRecv = g.PongReceived
			}
		}
		if n.Flags&(FlagFail|FlagPFail) != 0 && flags&(FlagNoAddr|FlagFail|FlagPFail) == 0 && g.Ip != "" &&
			(n.IP != g.Ip || n.Port != int(g.Port) || n.CPort != int(g.Cport)) {
			// We cannot reach it, the sender can, at another address.
			s.closeLink(n.link)
			n.IP, n.Port, n.CPort = g.Ip, int(g.Port), int(g.Cport)
			n.Flags &^= FlagNoAddr
			s.fx.Save = true
			s.fx.Publish = true
		}
	}
}

// failReportValidity is how long a failure report counts, in node timeouts.
const failReportValidity = 2

// addFailureReport records (or refreshes) sender's report that n fails.
func (s *State) addFailureReport(now int64, n, sender *Node) {
	for i := range n.reports {
		if n.reports[i].from == sender {
			n.reports[i].time = now
			return
		}
	}
	n.reports = append(n.reports, failReport{from: sender, time: now})
}

// delFailureReport drops sender's report about n, if any.
func (s *State) delFailureReport(now int64, n, sender *Node) {
	for i := range n.reports {
		if n.reports[i].from == sender {
			n.reports = append(n.reports[:i], n.reports[i+1:]...)
			s.expireReports(now, n)
			return
		}
	}
}

// expireReports drops reports older than the validity window.
func (s *State) expireReports(now int64, n *Node) {
	limit := s.nodeTimeout() * failReportValidity
	kept := n.reports[:0]
	for _, r := range n.reports {
		if now-r.time <= limit {
			kept = append(kept, r)
		}
	}
	clear(n.reports[len(kept):])
	n.reports = kept
}

// failureReports is the number of valid failure reports about n.
func (s *State) failureReports(now int64, n *Node) int {
	if len(n.reports) == 0 {
		return 0
	}
	s.expireReports(now, n)
	return len(n.reports)
}

// CountFailureReports is CLUSTER COUNT-FAILURE-REPORTS: how many primaries
// currently report node id as failing.
func (s *State) CountFailureReports(id string) (int, error) {
	n := s.nodes[id]
	if n == nil {
		return 0, Error("ERR Unknown node " + id)
	}
	return s.failureReports(s.now, n), nil
}

// BanTTL is how long CLUSTER FORGET keeps gossip from re-adding a node (ms).
const BanTTL = 60000

// ban puts id on the FORGET ban list until now+BanTTL.
func (s *State) ban(now int64, id string) {
	s.cleanBans(now)
	s.banned[id] = now + BanTTL
}

// isBanned reports whether id is on the ban list.
func (s *State) isBanned(id string) bool {
	until, ok := s.banned[id]
	if !ok {
		return false
	}
	if until < s.now {
		delete(s.banned, id)
		return false
	}
	return true
}

// cleanBans drops expired bans.
func (s *State) cleanBans(now int64) {
	for id, until := range s.banned {
		if until < now {
			delete(s.banned, id)
		}
	}
}

// randomID returns a new 40-hex-digit id.
func (s *State) randomID() string {
	var b [24]byte
	for i := 0; i < len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], s.rng.Uint64())
	}
	return hex.EncodeToString(b[:20])
}

// delNode removes n from the table (Redis's clusterDelNode): its slots
// become unassigned, open slots towards it are closed, its failure reports
// are withdrawn, its replicas lose their primary, and its links are closed.
func (s *State) delNode(n *Node) {
	if n == s.myself {
		return
	}
	for slot, m := range s.migrating {
		if m == n {
			delete(s.migrating, slot)
		}
	}
	for slot, m := range s.importing {
		if m == n {
			delete(s.importing, slot)
		}
	}
	s.delNodeSlots(n)
	for _, o := range s.sorted {
		if o == n {
			continue
		}
		for i := range o.reports {
			if o.reports[i].from == n {
				o.reports = append(o.reports[:i], o.reports[i+1:]...)
				break
			}
		}
		if o.MasterID == n.ID {
			o.MasterID = ""
		}
	}
	s.closeLink(n.link)
	s.closeLink(n.inLink)
	s.removeNode(n)
	if n.Flags&FlagHandshake == 0 {
		s.fx.Save = true
		s.fx.Publish = true
	}
	s.updateState()
}

// removeNode takes n out of the map and the sorted list.
func (s *State) removeNode(n *Node) {
	delete(s.nodes, n.ID)
	i := sort.Search(len(s.sorted), func(i int) bool { return s.sorted[i].ID >= n.ID })
	if i < len(s.sorted) && s.sorted[i] == n {
		s.sorted = append(s.sorted[:i], s.sorted[i+1:]...)
	}
}

// renameNode gives n a new id (a completed handshake, a hard reset).
func (s *State) renameNode(n *Node, id string) {
	s.removeNode(n)
	n.ID = id
	s.addNode(n)
}
