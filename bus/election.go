package bus

import (
	busv1 "github.com/slotd/slotd/proto/slotd/bus/v1"
)

// Replica elections and votes ("Configuration handling, propagation, and
// failovers" in the specification).
//
// A replica whose primary is FAIL (or that runs a manual failover) waits
// 500 ms + random 0–500 ms + rank × 1 s — rank 0 for the replica with the
// greatest replication offset — then takes currentEpoch+1 (saved before the
// request leaves), asks every primary for its vote, and wins with votes
// from a majority of the slot-serving primaries within 2 × node timeout
// (at least 2 s). A failed attempt is retried after 4 × node timeout. The
// winner takes the election epoch as configEpoch, claims its primary's
// slots and tells everybody; the rest follow by the slot rules.
//
// A primary serving slots votes at most once per epoch (lastVoteEpoch,
// saved before the ACK leaves), only for a replica whose primary is FAIL
// (or that asks with the manual-failover flag), not twice for replicas of
// the same primary within 2 × node timeout, and not for a claim older than
// the configEpoch of a slot it claims. A refused vote is silence.

// election is this replica's failover attempt.
type election struct {
	time  int64  // when the request goes (went) out
	epoch uint64 // the epoch asked for
	sent  bool
	rank  int
	votes map[string]bool // primaries that voted for epoch
}

// replPingPeriod is repl-ping-replica-period in ms.
func (s *State) replPingPeriod() int64 {
	if s.opts.ReplPingPeriod <= 0 {
		return 10000
	}
	return s.opts.ReplPingPeriod
}

// SetReplLinkDownSince tells a replica since when (unix ms) it has had no
// data from its primary: the time its replication link went down, or its
// last interaction with the primary; 0 when the link is up. The age of the
// data decides whether it may fail over (cluster-replica-validity-factor).
func (s *State) SetReplLinkDownSince(ms int64) { s.replDownSince = ms }

// rank is this replica's position among its primary's replicas by
// replication offset: the number of (failover-capable) replicas that
// announced a greater offset than ours.
func (s *State) rank() int {
	m := s.master(s.myself)
	if m == nil {
		return 0
	}
	r := 0
	for _, n := range s.replicas(m) {
		if n != s.myself && n.Flags&FlagNoFailover == 0 && n.replOffset > s.replOffset {
			r++
		}
	}
	return r
}

// handleReplicaFailover is Redis's clusterHandleSlaveFailover, run every
// Tick and whenever a vote arrives.
func (s *State) handleReplicaFailover(now int64) {
	me := s.myself
	m := s.master(me)
	manual := s.mf.end != 0
	// A primary without slots elects a replacement too (Valkey 8's election
	// in empty shards), so no slot check here.
	if me.IsMaster() || m == nil || (!m.Failed() && !manual) || (s.opts.ReplicaNoFailover && !manual) {
		return
	}
	if s.mf.won {
		// A manual failover holds the votes of s.election: it claims once
		// caught up, or at once if the primary failed meanwhile.
		if s.mf.caughtUp || m.Failed() {
			s.winElection(now)
		}
		return
	}
	nt := s.nodeTimeout()
	if s.replDownSince != 0 && !manual {
		age := now - s.replDownSince
		// Being cut off while the primary was being detected as failing is
		// the baseline.
		if age > nt {
			age -= nt
		}
		if f := s.opts.ReplicaValidityFactor; f > 0 && age > s.replPingPeriod()+nt*f {
			return
		}
	}
	authTimeout := max(2*nt, 2000)
	retry := 2 * authTimeout
	e := &s.election
	age := now - e.time
	if age > retry {
		e.time = now + 500 + s.rng.Int64N(500)
		e.sent = false
		e.votes = nil
		e.rank = s.rank()
		e.time += int64(e.rank) * 1000
		if s.mf.end != 0 {
			// A manual failover asks at once.
			e.time, e.rank = now, 0
		}
		// Our offset may be better than what the other replicas know.
		s.pongReplicas(now)
		if s.mf.end == 0 {
			return
		}
		age = now - e.time
	}
	if !e.sent && s.mf.end == 0 {
		// Better offsets may have arrived meanwhile: only ever later.
		if r := s.rank(); r > e.rank {
			e.time += int64(r-e.rank) * 1000
			e.rank = r
		}
	}
	if now < e.time || age > authTimeout {
		return
	}
	if !e.sent {
		s.currentEpoch++
		e.epoch = s.currentEpoch
		e.sent = true
		e.votes = map[string]bool{}
		s.saveDurable()
		s.logf("Starting a failover election for epoch %d.", e.epoch)
		s.requestVotes()
		return
	}
	if len(e.votes) >= s.size/2+1 {
		if manual && !s.mf.caughtUp && !m.Failed() {
			s.manualVotesWon(now) // manual.go
			return
		}
		s.winElection(now)
	}
}

// winElection claims our primary's slots with the epoch of the election
// whose votes we hold.
func (s *State) winElection(now int64) {
	me := s.myself
	s.logf("Failover election won: I'm the new master.")
	if e := s.election.epoch; me.ConfigEpoch < e {
		me.ConfigEpoch = e
		s.logf("configEpoch set to %d after successful failover", e)
	}
	s.saveDurable() // before the PONG claiming the slots goes out
	s.replaceMyMaster(now)
}

// requestVotes broadcasts FAILOVER_AUTH_REQUEST; its header carries our
// primary's slots and configEpoch, the claim the voters check.
func (s *State) requestVotes() {
	h := s.header(busv1.Type_TYPE_FAILOVER_AUTH_REQUEST)
	if s.mf.end != 0 {
		h.Mflags |= uint32(busv1.ManualFailoverFlag_MANUAL_FAILOVER_FLAG_FORCEACK)
	}
	s.broadcast(&busv1.Frame{Header: h})
}

// pongReplicas sends a PONG (with our offset) to the other replicas of our
// primary.
func (s *State) pongReplicas(now int64) {
	m := s.master(s.myself)
	if m == nil {
		return
	}
	for _, n := range s.replicas(m) {
		if n != s.myself {
			s.sendPing(now, n.link, busv1.Type_TYPE_PONG)
		}
	}
}

// pongAll sends a PONG with our configuration to every node we have a
// link to.
func (s *State) pongAll(now int64) {
	for _, n := range s.sorted {
		if n == s.myself || n.Flags&FlagHandshake != 0 {
			continue
		}
		s.sendPing(now, n.link, busv1.Type_TYPE_PONG)
	}
}

// replaceMyMaster turns this replica into the primary of its primary's
// slots (Redis's clusterFailoverReplaceYourMaster).
func (s *State) replaceMyMaster(now int64) {
	me := s.myself
	old := s.master(me)
	if me.IsMaster() || old == nil {
		return
	}
	s.setNodeAsMaster(me)
	owned := old.Slots
	owned.ForEach(func(slot int) {
		s.delSlot(slot)
		s.addSlot(me, slot)
	})
	s.slotsChanged()
	s.fx.Promote = true
	s.fx.Replicate = ""
	s.pongAll(now)
	s.resetManualFailover()
	s.election = election{}
}

// receiveAuthRequest decides on a vote (Redis's
// clusterSendFailoverAuthIfNeeded). Any refusal is silence, logged with
// Redis's words.
func (s *State) receiveAuthRequest(now int64, sender *Node, h *busv1.Header) {
	me := s.myself
	if sender == nil || me.IsReplica() || me.numSlots == 0 {
		return // only slot-serving primaries vote
	}
	// Our currentEpoch already took the request's if it was greater.
	if h.CurrentEpoch < s.currentEpoch {
		s.logf("Failover auth denied to %.40s: reqEpoch (%d) < curEpoch(%d)", sender.ID, h.CurrentEpoch,
			s.currentEpoch)
		return
	}
	if s.lastVoteEpoch == s.currentEpoch {
		s.logf("Failover auth denied to %.40s: already voted for epoch %d", sender.ID, s.currentEpoch)
		return
	}
	m := s.master(sender)
	force := h.Mflags&uint32(busv1.ManualFailoverFlag_MANUAL_FAILOVER_FLAG_FORCEACK) != 0
	switch {
	case sender.IsMaster():
		s.logf("Failover auth denied to %.40s: it is a master node", sender.ID)
		return
	case m == nil:
		s.logf("Failover auth denied to %.40s: I don't know its master", sender.ID)
		return
	case !m.Failed() && !force:
		s.logf("Failover auth denied to %.40s: its master is up", sender.ID)
		return
	}
	if m.votedTime != 0 && now-m.votedTime < 2*s.nodeTimeout() {
		s.logf("Failover auth denied to %.40s: can't vote about this master before %d milliseconds", sender.ID,
			2*s.nodeTimeout()-(now-m.votedTime))
		return
	}
	claimed, ok := ParseSlotBitmap(h.Slots)
	if !ok {
		return
	}
	stale := -1
	claimed.ForEach(func(slot int) {
		if stale < 0 && !s.unclaimed(slot) && s.owner[slot].ConfigEpoch > h.ConfigEpoch {
			stale = slot
		}
	})
	if stale >= 0 {
		s.logf("Failover auth denied to %.40s: slot %d epoch (%d) > reqEpoch (%d)", sender.ID, stale,
			s.owner[stale].ConfigEpoch, h.ConfigEpoch)
		return
	}
	s.lastVoteEpoch = s.currentEpoch
	m.votedTime = now
	s.saveDurable() // before the ACK goes out
	s.logf("Failover auth granted to %.40s for epoch %d", sender.ID, s.currentEpoch)
	s.send(sender.link, &busv1.Frame{Header: s.header(busv1.Type_TYPE_FAILOVER_AUTH_ACK)})
}

// receiveAuthAck counts a vote from a slot-serving primary for the
// election in progress; ACKs for older epochs are stale.
func (s *State) receiveAuthAck(now int64, sender *Node, h *busv1.Header) {
	e := &s.election
	if sender == nil || !sender.IsMaster() || sender.numSlots == 0 || !e.sent || h.CurrentEpoch < e.epoch ||
		s.myself.IsMaster() {
		return
	}
	// A duplicated frame must not count twice.
	e.votes[sender.ID] = true
	s.handleReplicaFailover(now)
}

// followShardPrimary: in a shard without slots no slot claim tells the
// old primary and the other replicas who won an election, so a primary of
// our shard that announces a greater configEpoch than our primary (or
// myself) is followed (Valkey 8's elections in empty shards).
func (s *State) followShardPrimary(sender *Node, epoch uint64) {
	me := s.myself
	cur := me
	if me.IsReplica() {
		cur = s.master(me)
	}
	if cur == nil || cur == sender || cur.numSlots > 0 || !sender.IsMaster() || sender.numSlots > 0 ||
		me.ShardID == "" || sender.ShardID != me.ShardID || epoch <= cur.ConfigEpoch {
		return
	}
	s.setMyMaster(sender)
}
