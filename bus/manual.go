package bus

import (
	"strings"

	busv1 "github.com/slotd/slotd/proto/slotd/bus/v1"
)

// Manual failover (CLUSTER FAILOVER). Without option the replica sends
// MFSTART to its primary; the primary pauses client writes (PauseWrites
// effect), and pings the replica every Tick with the PAUSED flag and the
// offset it stopped at; once the replica's own offset (SetReplOffset)
// reaches it, the replica runs an election at once, asking for votes with
// the FORCEACK flag so that primaries vote although its primary is not
// failing. FORCE skips the handshake with the primary; TAKEOVER skips the
// election: the replica bumps its configEpoch without consensus and takes
// the slots (collision resolution sorts out a clash). An unfinished manual
// failover is abandoned after MFTimeout.

// MFTimeout is how long a manual failover may take (ms); the primary
// pauses writes for twice as long at most.
const MFTimeout = 5000

// manualFailover is the manual failover in progress, on either side.
type manualFailover struct {
	end      int64 // deadline (0: none in progress)
	canStart bool  // replica: the election may start
	replica  *Node // primary: the replica that asked
	// masterOffset is the offset the paused primary announced (-1: none
	// yet).
	masterOffset int64
	// paused (primary): the shell confirmed that client writes are paused
	// and the offset it reported is final (WritesPaused); only then do our
	// headers carry the PAUSED flag.
	paused bool
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
		s.BumpEpoch()
		s.replaceMyMaster(now)
	case FailoverForce:
		s.mf.canStart = true
		s.handleReplicaFailover(now)
	default:
		s.send(m.link, &busv1.Frame{Header: s.header(busv1.Type_TYPE_MFSTART)})
	}
	return nil
}

// ManualFailoverInProgress reports a manual failover under way (on the
// replica or the primary side).
func (s *State) ManualFailoverInProgress() bool { return s.mf.end != 0 }

// receiveMFStart: one of our replicas asks for a manual failover. Writes
// are paused; the PINGs of the following Ticks tell it where we stopped.
func (s *State) receiveMFStart(now int64, sender *Node) {
	if sender == nil || !s.myself.IsMaster() || sender.MasterID != s.myself.ID || !sender.IsReplica() {
		return
	}
	s.resetManualFailover()
	s.mf.end = now + MFTimeout
	s.mf.replica = sender
	s.fx.PauseWrites = now + 2*MFTimeout
	s.fx.UnpauseWrites = false
}

// WritesPaused is the shell's answer to a PauseWrites effect: client
// writes are paused and every write accepted before has reached the
// replication stream, whose offset is now off. From now on our headers
// announce it with the PAUSED flag, which lets the replica start its
// election once it has caught up.
func (s *State) WritesPaused(off uint64) {
	if s.mf.end == 0 || s.mf.replica == nil || !s.myself.IsMaster() {
		return
	}
	s.replOffset = off
	s.mf.paused = true
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
		s.handleManualFailover(now)
	}
}

// handleManualFailover lets the election start once this replica caught
// up with its paused primary.
func (s *State) handleManualFailover(now int64) {
	if s.mf.end == 0 || s.mf.canStart || s.mf.masterOffset < 0 || !s.myself.IsReplica() {
		return
	}
	// At or past it: a paused primary may still stream expiry DELs.
	if s.replOffset >= uint64(s.mf.masterOffset) {
		s.mf.canStart = true
		s.handleReplicaFailover(now)
	}
}

// checkManualFailoverTimeout abandons a manual failover past its deadline.
func (s *State) checkManualFailoverTimeout(now int64) {
	if s.mf.end != 0 && s.mf.end < now {
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
