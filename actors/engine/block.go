package engine

import (
	"github.com/slotd/slotd/netio/command"
	"time"

	"github.com/slotd/slotd/netio/batch"
	"github.com/slotd/slotd/netio/resp"
)

// Blocking commands (BLPOP and friends). The event loop stops reading a
// client's input after a blocking command, so it is always the last command
// of its batch: when it cannot be served the shard parks the whole batch,
// without reporting it done, until a write signals one of its keys, its
// timeout fires, or the client goes away.

// Blocked is one parked command. The shard's Host arms its timeout and
// hands it back to Timeout when it fires.
type Blocked struct {
	b       *batch.Batch
	cmd     *batch.Cmd
	keys    []DBKey
	cancel  func() // disarms the timeout (nil: none)
	done    bool
	timeout func(c *Call) // writes the timeout reply
}

// Block parks the current command: keys are what it waits on, timeout 0
// waits forever; onTimeout writes the reply when the timeout fires (a null
// array for BLPOP). The handler must return right after calling Block and
// must not have written a reply. Inside MULTI (c.Cmd.InTx) commands never
// block: the handler should reply as if the timeout fired at once.
func (c *Call) Block(keys [][]byte, timeout time.Duration, onTimeout func(c *Call)) {
	s := c.S
	s.parked = true
	if s.rerun != nil && s.rerun.cmd == c.Cmd {
		return // still waiting: keep the original place in line
	}
	bl := &Blocked{b: s.cur, cmd: c.Cmd, timeout: onTimeout}
	for _, k := range keys {
		ks := DBKey{s.db, string(k)}
		bl.keys = append(bl.keys, ks)
		if s.blocked == nil {
			s.blocked = map[DBKey][]*Blocked{}
		}
		s.blocked[ks] = append(s.blocked[ks], bl)
	}
	if timeout > 0 {
		bl.cancel = s.host.After(timeout, bl)
	}
	s.Stats.Blocked.Add(1)
}

// CanBlock reports whether the current command may block (false inside a
// transaction or script, where blocking commands behave as if timed out).
func (c *Call) CanBlock() bool { return !c.Cmd.NoBlock }

// wake re-runs the commands blocked on keys signalled by the last command,
// oldest first. A re-run either serves (its batch completes) or blocks
// again, keeping its place in line.
func (s *Shard) wake() {
	saved, savedDB := s.cur, s.db
	defer s.UseDB(savedDB)
	for len(s.ready) > 0 {
		key := s.ready[0]
		s.ready = s.ready[1:]
		s.wakeKey = key.Key
		for _, bl := range append([]*Blocked(nil), s.blocked[key]...) {
			if bl.done {
				continue
			}
			s.rerun = bl
			s.cur = bl.b
			s.restartClock()
			if !s.rerunSafe(bl) {
				continue // it panicked: answered and finished (contain.go)
			}
			s.rerun = nil
			if s.parked {
				s.parked = false
				continue
			}
			s.unpark(bl)
			s.finish(bl.b)
		}
	}
	s.ready = s.ready[:0]
	s.cur = saved
}

// unpark removes bl from every key it waits on and stops its timer.
func (s *Shard) unpark(bl *Blocked) {
	bl.done = true
	if bl.cancel != nil {
		bl.cancel()
	}
	for _, k := range bl.keys {
		list := s.blocked[k]
		for i, x := range list {
			if x == bl {
				list = append(list[:i:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(s.blocked, k)
		} else {
			s.blocked[k] = list
		}
	}
	s.Stats.Blocked.Add(-1)
}

// Timeout answers bl at now (unix ms) as its command does when its time is
// up, unless it was served meanwhile.
func (s *Shard) Timeout(bl *Blocked, now int64) {
	if bl.done {
		return
	}
	s.unpark(bl)
	s.now = now
	b := bl.b
	b.Out.Proto = int(bl.cmd.Proto)
	s.UseDB(int(bl.cmd.DB))
	c := &s.call
	*c = Call{Args: bl.cmd.Args, W: &b.Out, Slot: int(bl.cmd.Slot), Now: s.now, S: s, Cmd: bl.cmd}
	mark := len(b.Out.B)
	bl.timeout(c)
	s.countServed(bl.cmd, b.Out.B[mark:])
	b.Ends = append(b.Ends, len(b.Out.B))
	s.finish(b)
}

// parkedOf finds the parked command of batch b (nil: none, it was served).
func (s *Shard) parkedOf(b *batch.Batch) *Blocked {
	for _, list := range s.blocked {
		for _, bl := range list {
			if bl.b == b && !bl.done {
				return bl
			}
		}
	}
	return nil
}

// CancelBlocked drops a parked batch whose client disconnected.
func (s *Shard) CancelBlocked(b *batch.Batch) {
	if bl := s.parkedOf(b); bl != nil {
		s.answerParked(bl, func(w *resp.Writer) { w.Null() })
	}
}

// answerParked completes bl's batch with the reply reply writes.
func (s *Shard) answerParked(bl *Blocked, reply func(w *resp.Writer)) {
	s.unpark(bl)
	b := bl.b
	b.Out.Proto = int(bl.cmd.Proto)
	mark := len(b.Out.B)
	reply(&b.Out)
	s.countServed(bl.cmd, b.Out.B[mark:])
	b.Ends = append(b.Ends, len(b.Out.B))
	s.finish(b)
}

// countServed counts a parked command answered without running it again
// (its timeout, CLIENT UNBLOCK, its key or group going away) as one call,
// as Redis updates a blocked command's statistics when it is unblocked
// (calls, and failed_calls for an error reply); the run that parked it
// counted nothing.
func (s *Shard) countServed(cmd *batch.Cmd, reply []byte) {
	if stats := s.group.CmdStats; stats != nil && cmd.Spec.Exec == command.Shard {
		stats.Called(cmd.Spec, 0, reply)
		stats.Latency(cmd.Spec, 0)
	}
}

// ErrUnblocked is the reply of a command CLIENT UNBLOCK ... ERROR wakes.
const ErrUnblocked = "UNBLOCKED client unblocked via CLIENT UNBLOCK"

// Unblock wakes the command parked in batch b as CLIENT UNBLOCK does: with
// the reply its timeout gives (TIMEOUT) or with ErrUnblocked (ERROR). It
// reports false when b is not parked here (it was served meanwhile).
func (s *Shard) Unblock(b *batch.Batch, withError bool) bool {
	bl := s.parkedOf(b)
	if bl == nil {
		return false
	}
	if withError {
		s.answerParked(bl, func(w *resp.Writer) { w.Error(ErrUnblocked) })
	} else {
		s.Timeout(bl, s.group.clock()/1000)
	}
	return true
}

// signalBlocked notes that key may now serve blocked clients.
func (s *Shard) signalBlocked(key []byte) {
	if len(s.blocked) == 0 {
		return
	}
	if _, ok := s.blocked[DBKey{s.db, string(key)}]; ok {
		s.ready = append(s.ready, DBKey{s.db, string(key)})
	}
}

// BlockedClients is the number of parked commands (INFO blocked_clients).
func (g *Group) BlockedClients() int64 {
	var n int64
	for _, s := range g.shards {
		n += s.Stats.Blocked.Load()
	}
	return n
}

// SignalAllBlocked gives every parked command of the current database a
// chance to run again (after FLUSHALL/FLUSHDB, which deletes keys without
// naming them): a group read on a stream that is gone answers that it no
// longer exists, as in Redis.
func (s *Shard) SignalAllBlocked() {
	for k := range s.blocked {
		if k.DB == s.db {
			s.ready = append(s.ready, k)
		}
	}
}

// InScript reports whether the command runs inside a script.
func (c *Call) InScript() bool { return c.Cmd.NoBlock && c.S.script.active > 0 }

// Rerunning reports whether this is a parked command run again because a
// key it waits on was signalled.
func (c *Call) Rerunning() bool { return c.S.rerun != nil && c.S.rerun.cmd == c.Cmd }

// WakeKey is the key whose signal re-runs parked commands right now.
func (s *Shard) WakeKey() string { return s.wakeKey }

// SignalBlocked notes that key may now serve blocked clients.
func (s *Shard) SignalBlocked(key []byte) { s.signalBlocked(key) }
