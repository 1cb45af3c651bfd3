package bus

import busv1 "github.com/slotd/slotd/proto/slotd/bus/v1"

// Failover on shutdown (SHUTDOWN FAILOVER and shutdown-on-sigterm /
// shutdown-on-sigint failover, as Valkey 9): a primary about to exit asks
// its best replica — the one that announced the greatest replication
// offset among those that are reachable and not failing — to take over,
// with a HANDOFF frame. The replica runs a manual failover as if CLUSTER
// FAILOVER had been sent to it (manual.go): it collects the votes while
// its primary still serves writes, then the primary pauses, the replica
// catches up and claims the slots, and the primary, now its replica, lifts
// the pause (its clients are redirected) and the shell lets the shutdown
// go on. Valkey's primary pauses and waits for the replica to catch up
// first, then sends it CLUSTER FAILOVER FORCE: its clients wait for the
// votes too.

// HandOff starts a failover on shutdown: it asks the best replica to take
// over and returns its id, or "" when this node is no slot-serving primary
// or has no replica that can (the shutdown then goes on without).
func (s *State) HandOff(now int64) string {
	s.tick(now)
	me := s.myself
	if !me.IsMaster() || me.numSlots == 0 {
		return ""
	}
	var best *Node
	for _, n := range s.replicas(me) {
		if n.Flags&(FlagFail|FlagPFail) != 0 || n.link == nil || !n.link.up {
			continue
		}
		if best == nil || n.replOffset > best.replOffset {
			best = n
		}
	}
	if best == nil {
		s.logf("Unable to find a replica to perform the auto failover on shutdown")
		return ""
	}
	s.logf("Failover on shutdown: asking replica %.40s to take over.", best.ID)
	s.handingOff = true
	s.send(best.link, &busv1.Frame{Header: s.header(busv1.Type_TYPE_HANDOFF)})
	return best.ID
}

// handedOff: this primary, shutting down, now replicates the replica that
// took over; every node is told at once (a PONG with our new role), so none
// keeps it as a primary without slots after it is gone.
func (s *State) handedOff(now int64) {
	if !s.handingOff {
		return
	}
	s.handingOff = false
	s.pongAll(now)
}

// receiveHandOff: our primary is shutting down and asks us to take over.
func (s *State) receiveHandOff(now int64, sender *Node) {
	me := s.myself
	if sender == nil || !me.IsReplica() || me.MasterID != sender.ID {
		return
	}
	s.logf("Manual failover requested by my master %.40s, which is shutting down.", sender.ID)
	if err := s.Failover(now, FailoverDefault); err != nil {
		s.logf("Can't start the failover requested by my master: %s", err.Error())
	}
}
