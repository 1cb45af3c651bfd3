package bus

import (
	"strings"

	busv1 "github.com/slotd/slotd/proto/slotd/bus/v1"
)

// Manual failover (CLUSTER FAILOVER). The replica runs its election
// first, while its primary still takes writes: it asks every primary for
// its vote at once, with the FORCEACK flag so that primaries vote although
// its primary is not failing. Only with the majority's votes in hand does
// it send MFSTART; the primary pauses client writes (PauseWrites effect)
// and, the moment the shell confirms the pause (WritesPaused), pings the
// replica with the PAUSED flag and the offset it stopped at (and again
// every Tick, in case that ping is lost). The replica asks its shell to
// report as soon as it has applied that much (AwaitOffset effect, answered
// by ReplApplied), then claims the slots with the election's epoch and
// sends its PONG with the new configuration to every node at once; the
// old primary, learning it, follows it and lifts the pause. So clients
// wait only for the catch-up, one durable save and two hops: the votes
// (each a durable save on its voter) are collected before the pause, where
// Redis collects them during it. No step waits for a Tick.
//
// If the primary fails while the replica holds the votes, the replica
// claims at once, as an automatic failover would (it could not catch up
// with a dead primary anyway). FORCE skips the handshake with the primary
// (no pause, no catching up); TAKEOVER skips the election: the replica
// bumps its configEpoch without consensus and takes the slots (collision
// resolution sorts out a clash). An unfinished manual failover is abandoned
// after MFTimeout, and the primary resumes writes.

// MFTimeout is how long a manual failover may take (ms); the primary
// pauses writes for twice as long at most.
const MFTimeout = 5000

// mfStartRetry is how often (ms) a replica holding the votes repeats
// MFSTART until its primary announces the paused offset (a link broken
// meanwhile loses it).
const mfStartRetry = 500

// manualFailover is the manual failover in progress, on either side.
type manualFailover struct {
	end int64 // deadline (0: none in progress)
	// Replica side. caughtUp: nothing left to catch up (FORCE), or the
	// stream applied up to masterOffset; won: the election has its votes
	// and the claim waits for caughtUp; asked: when MFSTART last went out.
	caughtUp bool
	won      bool
	asked    int64
	// masterOffset is the offset the paused primary announced (-1: none
	// yet).
	masterOffset int64
	// Primary side: the replica that asked; paused: the shell confirmed
	// that client writes are paused and the offset it reported is final
	// (WritesPaused); only then do our headers carry the PAUSED flag.
	replica *Node
	paused  bool
}

// FailoverMode is the option of CLUSTER FAILOVER.
type FailoverMode uint8

// CLUSTER FAILOVER options.
const (
	FailoverDefault FailoverMode = iota
	FailoverForce
	FailoverTakeover
)

// ParseFailover parses the arguments of CLUSTER FAILOVER after the
// subcommand, with Redis 7.0's replies; sub is the subcommand as typed.
func ParseFailover(sub string, args [][]byte) (FailoverMode, error) {
	switch {
	case len(args) == 0:
		return FailoverDefault, nil
	case len(args) > 1:
		return 0, Error("ERR unknown subcommand or wrong number of arguments for '" + sub +
			"'. Try CLUSTER HELP.")
	case strings.EqualFold(string(args[0]), "force"):
		return FailoverForce, nil
	case strings.EqualFold(string(args[0]), "takeover"):
		return FailoverTakeover, nil
	}
	return 0, Error("ERR syntax error")
}

// Failover is CLUSTER FAILOVER [FORCE|TAKEOVER], run on a replica.
func (s *State) Failover(now int64, mode FailoverMode) error {
	s.tick(now)
	me := s.myself
	m := s.master(me)
	switch {
	case me.IsMaster():
		return Error("ERR You should send CLUSTER FAILOVER to a replica")
	case m == nil:
		return Error("ERR I'm a replica but my master is unknown to me")
	case mode == FailoverDefault && (m.Failed() || m.link == nil || !m.link.up):
		return Error("ERR Master is down or failed, please use CLUSTER FAILOVER FORCE")
	}
	s.resetManualFailover()
	s.mf.end = now + MFTimeout
	switch mode {
	case FailoverTakeover:
		s.logf("Taking over the master (user request).")
		s.BumpEpoch()
		s.replaceMyMaster(now)
	case FailoverForce:
		s.logf("Forced failover user request accepted.")
		s.mf.caughtUp = true
		s.handleReplicaFailover(now)
	default:
		s.logf("Manual failover user request accepted.")
		s.handleReplicaFailover(now)
	}
	return nil
}

// ManualFailoverInProgress reports a manual failover under way (on the
// replica or the primary side).
func (s *State) ManualFailoverInProgress() bool { return s.mf.end != 0 }

// manualVotesWon: the election of a manual failover has its votes; the
// primary is asked to pause, and the claim waits until we caught up.
func (s *State) manualVotesWon(now int64) {
	if !s.mf.won {
		s.mf.won = true
		s.logf("Manual failover: election won, asking the master to pause writes.")
	}
	s.askPause(now)
}

// askPause sends MFSTART to our primary.
func (s *State) askPause(now int64) {
	m := s.master(s.myself)
	if m == nil || m.link == nil || !m.link.up {
		return
	}
	s.mf.asked = now
	s.send(m.link, &busv1.Frame{Header: s.header(busv1.Type_TYPE_MFSTART)})
}

// receiveMFStart: one of our replicas asks for a manual failover. Writes
// are paused; a repeated request changes nothing.
func (s *State) receiveMFStart(now int64, sender *Node) {
	if sender == nil || !s.myself.IsMaster() || sender.MasterID != s.myself.ID || !sender.IsReplica() {
		return
	}
	if s.mf.end != 0 && s.mf.replica == sender {
		if s.mf.paused && sender.link != nil {
			s.sendPing(now, sender.link, busv1.Type_TYPE_PING)
		}
		return
	}
	s.resetManualFailover()
	s.mf.end = now + MFTimeout
	s.mf.replica = sender
	s.fx.PauseWrites = now + 2*MFTimeout
	s.fx.UnpauseWrites = false
	s.logf("Manual failover requested by replica %.40s.", sender.ID)
}

// WritesPaused is the shell's answer to a PauseWrites effect: client
// writes are paused and every write accepted before has reached the
// replication stream, whose offset is now off. From now on our headers
// announce it with the PAUSED flag, which lets the replica claim once it
// has caught up; the replica is told at once.
func (s *State) WritesPaused(now int64, off uint64) {
	s.tick(now)
	if s.mf.end == 0 || s.mf.replica == nil || !s.myself.IsMaster() {
		return
	}
	s.replOffset = off
	s.mf.paused = true
	if lk := s.mf.replica.link; lk != nil {
		s.sendPing(now, lk, busv1.Type_TYPE_PING)
	}
}

// ManualFailoverPaused reports that a manual failover's write pause is in
// effect on this primary: the offset WritesPaused set stays as announced.
func (s *State) ManualFailoverPaused() bool { return s.mf.paused }

// mfPing keeps pinging the replica of a manual failover in progress, so it
// learns our (paused) offset quickly. It reports whether n was pinged.
func (s *State) mfPing(now int64, n *Node) bool {
	if s.mf.end == 0 || s.mf.replica != n || !s.myself.IsMaster() || n.link == nil || !n.link.up {
		return false
	}
	s.sendPing(now, n.link, busv1.Type_TYPE_PING)
	return true
}

// learnOffset records the replication offset a known sender announces;
// the first one our paused primary announces during a manual failover is
// the offset to reach.
func (s *State) learnOffset(now int64, sender *Node, h *busv1.Header) {
	sender.replOffset = h.ReplOffset
	if s.mf.end != 0 && s.myself.IsReplica() && s.myself.MasterID == sender.ID && s.mf.masterOffset < 0 &&
		h.Mflags&uint32(busv1.ManualFailoverFlag_MANUAL_FAILOVER_FLAG_PAUSED) != 0 {
		s.mf.masterOffset = int64(h.ReplOffset)
		s.logf("Received replication offset for paused master manual failover: %d", h.ReplOffset)
		s.handleManualFailover(now)
		if s.mf.end != 0 && !s.mf.caughtUp && s.myself.IsReplica() {
			s.fx.AwaitOffset = h.ReplOffset
		}
	}
}

// ReplApplied is the shell's answer to an AwaitOffset effect: this
// replica has applied its primary's stream up to off. A manual failover
// waiting for that claims the slots at once.
func (s *State) ReplApplied(now int64, off uint64) {
	s.tick(now)
	if s.myself.IsReplica() {
		s.replOffset = off
	}
	s.handleManualFailover(now)
}

// handleManualFailover moves a manual failover on (on every Tick and
// whenever the replica's offset or its primary's paused offset is
// learned): caught up with the paused primary, the replica claims if the
// votes are in; holding the votes, it repeats MFSTART until the primary
// announces its paused offset.
func (s *State) handleManualFailover(now int64) {
	if s.mf.end == 0 || s.mf.caughtUp || !s.myself.IsReplica() {
		return
	}
	if s.mf.masterOffset < 0 {
		if s.mf.won && now-s.mf.asked >= mfStartRetry {
			s.askPause(now)
		}
		return
	}
	// At or past it: a paused primary may still stream expiry DELs.
	if s.replOffset >= uint64(s.mf.masterOffset) {
		s.mf.caughtUp = true
		s.logf("All master replication stream processed, manual failover can start.")
		s.handleReplicaFailover(now)
	}
}

// checkManualFailoverTimeout abandons a manual failover past its deadline.
func (s *State) checkManualFailoverTimeout(now int64) {
	if s.mf.end != 0 && s.mf.end < now {
		s.logf("Manual failover timed out.")
		s.resetManualFailover()
	}
}

// resetManualFailover ends any manual failover; a primary that paused
// writes for one resumes them.
func (s *State) resetManualFailover() {
	if s.mf.replica != nil {
		s.fx.UnpauseWrites = true
		s.fx.PauseWrites = 0
	}
	s.mf = manualFailover{masterOffset: -1}
}
