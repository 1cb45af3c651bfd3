package engine

import (
	"github.com/slotd/slotd/netio/batch"
	"github.com/slotd/slotd/netio/command"
)

// Command timing: commandstats, latencystats, the latency monitor and the
// slowlog. A command's time runs from the end of the one before it; a run
// of fast commands shares one clock read (closeRun), any other command is
// timed by itself (exec).

// pendingCalls are one command's successful calls and their microseconds
// since the last flushCalls.
type pendingCalls struct {
	spec        *command.Spec
	calls, usec int64
}

// called counts n runs of spec that took us µs each; an error reply (n is
// 1) is counted at once, the rest at the next flushCalls.
func (s *Shard) called(spec *command.Spec, n, us int64, reply []byte) {
	if len(reply) > 0 && reply[0] == '-' {
		s.group.CmdStats.Called(spec, us, reply)
		return
	}
	for i := range s.calls {
		if p := &s.calls[i]; p.spec == spec {
			p.calls += n
			p.usec += n * us
			return
		}
	}
	s.calls = append(s.calls, pendingCalls{spec: spec, calls: n, usec: n * us})
}

// slowCommand records a command past latency-monitor-threshold.
func (s *Shard) slowCommand(spec *command.Spec, ns int64) {
	event := "command"
	if spec.Is("fast") {
		event = "fast-command"
	}
	s.slow = append(s.slow, command.LatencySample{Event: event, Ms: ns / 1e6, At: s.group.clock() / 1e6})
}

// noteLatency records a latency-monitor sample for event, begun at start
// (the group's monotonic ns), if it took latency-monitor-threshold or more.
func (s *Shard) noteLatency(event string, start int64) {
	if lm := s.group.Latency; lm != nil && lm.Threshold.Load() > 0 {
		if ms := (s.group.mono() - start) / 1e6; lm.Wants(ms) {
			s.slow = append(s.slow, command.LatencySample{Event: event, Ms: ms, At: s.group.clock() / 1e6})
		}
	}
}

// flushSlow hands the pending latency-monitor samples to the group's
// LatencyMonitor (only samples past the threshold are ever pending).
func (s *Shard) flushSlow() {
	if len(s.slow) > 0 {
		s.group.Latency.Add(s.slow...)
		s.slow = s.slow[:0]
	}
}

// flushCalls adds the pending commandstats counts to the shared counters.
func (s *Shard) flushCalls() {
	s.closeRun()
	if len(s.calls) == 0 {
		return
	}
	for _, p := range s.calls {
		s.group.CmdStats.Add(p.spec, p.calls, p.usec)
	}
	s.calls = s.calls[:0]
}

// runTimedBytes bounds the arguments of a RunTimed command that joins a
// run: past it, copying them may take long enough to matter, so the
// command is timed by itself.
const runTimedBytes = 16 << 10

// smallArgs reports whether args add up to at most runTimedBytes.
func smallArgs(args [][]byte) bool {
	n := 0
	for _, a := range args {
		n += len(a)
	}
	return n <= runTimedBytes
}

// fastCall is a fast command run since the shard's clock was last read.
type fastCall struct {
	cmd   *batch.Cmd
	peer  batch.Peer
	reply []byte // an error reply (errorstats), else nil; any reply when timed by itself
}

// closeRun reads the clock once for the fast commands run since it was
// last read and counts each an equal share of the time (their sum is
// exact). The shard calls it before anything that reads or restarts the
// clock and before a batch's replies go (flushCalls), while the run's
// arguments are still the batch's.
func (s *Shard) closeRun() {
	if len(s.fastRun) == 0 {
		return
	}
	now := s.group.mono()
	ns := (now - s.tick) / int64(len(s.fastRun))
	s.tick = now
	run := s.fastRun
	for i := 0; i < len(run); {
		j := i + 1 // a stretch of one command without errors counts at once
		for j < len(run) && run[i].reply == nil && run[j].reply == nil && run[j].cmd.Spec == run[i].cmd.Spec {
			j++
		}
		s.timed(run[i:j], ns)
		i = j
	}
	clear(run)
	s.fastRun = run[:0]
}

// restartClock starts the shard's command clock anew (a batch starts, a
// blocked client reruns), closing any run of fast commands first.
func (s *Shard) restartClock() {
	if len(s.fastRun) > 0 {
		s.closeRun()
		return
	}
	if s.startAt != 0 {
		s.tick, s.startAt = s.startAt, 0
		return
	}
	s.tick = s.group.mono()
}

// timed counts the served runs of one command in calls (more than one
// only without an error reply), each of which took ns, in commandstats,
// latencystats, the latency monitor and the slowlog.
func (s *Shard) timed(calls []fastCall, ns int64) {
	spec := calls[0].cmd.Spec
	us, n := ns/1000, int64(len(calls))
	s.called(spec, n, us, calls[0].reply)
	if s.lat == nil {
		s.lat = s.group.CmdStats.NewLatencies()
	}
	s.lat.Record(spec, ns, n)
	if lm := s.group.Latency; lm != nil {
		if t := lm.Threshold.Load(); t > 0 && ns >= t*1e6 {
			s.slowCommand(spec, ns)
		}
	}
	if sl := s.group.SlowLog; sl.Wants(us) && !spec.Is("skip_slowlog") {
		for _, f := range calls {
			addr, name := "", ""
			if f.peer != nil {
				addr, name = f.peer.PeerAddr(), f.peer.PeerName()
			}
			sl.Add(f.cmd.Args, us, s.group.clock()/1e6, addr, name)
		}
	}
}
