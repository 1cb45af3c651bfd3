package engine

import (
	"runtime/debug"

	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/netio/batch"
	"github.com/slotd/slotd/slots"
)

// Crash containment. A panic while a batch runs (a bug in a command's
// handler) must not take the node down nor leave other clients waiting, and
// a write that panicked half-way must not leave the replicas and the AOF
// with another dataset than the shard's memory.
//
// Cost: one deferred recover per batch (runGuarded), none per command. The
// guard knows which command was running without any per-command
// bookkeeping: command i of a batch is the one whose reply has not ended
// (len(b.Ends) == i) and whose Call the shard set up (s.call.Cmd ==
// &b.Cmds[i]).
//
// What a contained panic does:
//   - In a command's handler: the command's partial reply is replaced by
//     "-ERR internal error executing '<name>'" (counted as a failed call),
//     then every key the command declares (its key specs) is restated in the
//     replication stream and the AOF: a DEL, then the records that rebuild
//     the key's value as the shard holds it now (nothing more when the key
//     is gone), wrapped in MULTI/EXEC with the command's partial records.
//     The key is thus whatever the handler left in memory, everywhere; a
//     value that cannot be serialized any more is deleted (and the DEL
//     streamed). WATCHers of those keys are dirtied and blocked clients
//     woken. The rest of the batch then runs as usual.
//   - Anywhere else in a batch's turn (the bookkeeping around a command):
//     the command in progress has its keys restated the same way and every
//     command of the batch not answered yet gets the same error without
//     running, so the client's replies stay in order.
//   - A command called by a script (redis.call) fails as it did before,
//     with its keys restated in the script's wrapped records.
//
// Each contained panic is logged once with its stack and counted in
// Stats.Panics (INFO stats: contained_panics).

// runSafe runs b from command start to its end, containing panics.
func (s *Shard) runSafe(b *batch.Batch, start int) {
	for start >= 0 {
		p, stack := s.runGuarded(b, start)
		if p == nil {
			return
		}
		start = s.contain(b, p, stack)
	}
}

// runGuarded is runFrom under a recover; it returns the panic's value and
// stack, nil when none.
func (s *Shard) runGuarded(b *batch.Batch, start int) (p any, stack []byte) {
	defer func() {
		if p = recover(); p != nil {
			stack = debug.Stack()
		}
	}()
	s.runFrom(b, start)
	return nil, nil
}

// errInternal is the reply of a command whose execution panicked.
func errInternal(name string) string { return "ERR internal error executing '" + name + "'" }

// contain answers the command that panicked (or the rest of the batch) and
// returns the index from which the batch goes on, -1 when it is done.
func (s *Shard) contain(b *batch.Batch, p any, stack []byte) int {
	s.Stats.Panics.Add(1)
	k := len(b.Ends)
	inCmd := k < len(b.Cmds) && s.call.Cmd == &b.Cmds[k]
	name := ""
	if k < len(b.Cmds) {
		name = b.Cmds[k].Spec.Name
	}
	s.log.Error().Str("command", name).Bool("in_handler", inCmd).Interface("panic", p).
		Str("stack", string(stack)).Msg("command panicked: contained, the client got an error")
	s.unparkPanicked(b)
	if s.finished == b {
		return -1 // the batch was already handed back
	}
	if inCmd {
		cmd := &b.Cmds[k]
		s.answerPanicked(b, cmd)
		if s.repl.txLeft > 0 {
			s.txStep()
		}
		if s.txHold > 0 {
			s.txHold--
		}
		if len(s.ready) > 0 && s.txHold == 0 {
			s.wake()
		}
		s.restartClock()
		return k + 1
	}
	// Outside a handler: restate what the command in progress may have
	// touched, then answer the rest without running it.
	for i := range b.Cmds[:min(k+1, len(b.Cmds))] {
		if c := &b.Cmds[i]; c == s.call.Cmd {
			s.restate(c)
		}
	}
	s.closeWraps(s.call.Slot)
	s.txHold = 0
	for i := k; i < len(b.Cmds); i++ {
		b.Out.B = b.Out.B[:replyStart(b, i)]
		b.Out.Error(errInternal(b.Cmds[i].Spec.Name))
		b.Ends = append(b.Ends, len(b.Out.B))
	}
	if len(s.ready) > 0 {
		s.wake()
	}
	s.finish(b)
	return -1
}

// replyStart is where command i's reply starts in b.Out.
func replyStart(b *batch.Batch, i int) int {
	if i == 0 || len(b.Ends) < i {
		if len(b.Ends) > 0 {
			return b.Ends[len(b.Ends)-1]
		}
		return 0
	}
	return b.Ends[i-1]
}

// answerPanicked replaces the partial reply of cmd, the next command of b
// to answer, with the internal error, restates its keys and ends its reply.
func (s *Shard) answerPanicked(b *batch.Batch, cmd *batch.Cmd) {
	b.Out.B = b.Out.B[:replyStart(b, len(b.Ends))]
	b.Out.Proto = int(cmd.Proto)
	b.Out.Error(errInternal(cmd.Spec.Name))
	s.restate(cmd)
	s.closeScriptWrap(int(cmd.Slot))
	if st := s.group.CmdStats; st != nil {
		st.Called(cmd.Spec, 0, b.Out.B[replyStart(b, len(b.Ends)):])
	}
	b.Ends = append(b.Ends, len(b.Out.B))
}

// unparkPanicked drops the parked record of b when the command that
// panicked had called Block first.
func (s *Shard) unparkPanicked(b *batch.Batch) {
	s.parked = false
	if len(s.blocked) > 0 {
		if bl := s.parkedOf(b); bl != nil {
			s.unpark(bl)
		}
	}
}

// closeScriptWrap ends a script's MULTI/EXEC wrap left open by a panic
// (a transaction's wrap ends with its last command, txStep).
func (s *Shard) closeScriptWrap(slot int) {
	if r := &s.repl; r.wrapping && r.txLeft == 0 {
		s.wrapEnd(r.wrapMark, r.wrapRec, slot)
	}
}

// closeWraps ends every wrap left open: the rest of a transaction will not
// run.
func (s *Shard) closeWraps(slot int) {
	if r := &s.repl; r.txLeft > 0 {
		r.txLeft = 1
		s.txStep()
	}
	s.closeScriptWrap(slot)
}

// rerunSafe is a blocked command's re-run (wake) under a recover; a panic
// answers it with the internal error and completes its batch, and it
// returns false then.
func (s *Shard) rerunSafe(bl *Blocked) (ok bool) {
	defer func() {
		if ok {
			return
		}
		p := recover()
		if p == nil {
			return
		}
		s.Stats.Panics.Add(1)
		s.log.Error().Str("command", bl.cmd.Spec.Name).Interface("panic", p).Str("stack", string(debug.Stack())).
			Msg("blocked command panicked when re-run: contained, the client got an error")
		s.rerun, s.parked = nil, false
		b := bl.b
		if !bl.done {
			s.unpark(bl)
		}
		if len(b.Ends) < len(b.Cmds) {
			s.answerPanicked(b, bl.cmd)
		}
		s.finish(b)
	}()
	s.runOne(bl.b, bl.cmd)
	return true
}

// restate streams the current state of every key cmd declares (see the
// comment at the top) and signals them.
func (s *Shard) restate(cmd *batch.Cmd) {
	if !cmd.Spec.Write() || s.replica {
		return
	}
	idx, err := cmd.Spec.KeyIndexes(nil, cmd.Args)
	if err != nil || len(idx) == 0 {
		return
	}
	if int(cmd.DB) != s.db {
		s.UseDB(int(cmd.DB))
	}
	mark, nrec := s.wrapStart()
	slot := int(cmd.Slot)
	for _, i := range idx {
		key := cmd.Args[i]
		slot = slots.HashSlot(key)
		s.restateKey(slot, key)
	}
	s.wrapEnd(mark, nrec, slot)
	s.Stats.Dirty.Add(1)
}

// restateKey streams DEL key and the records that rebuild key's value; a
// value that panics when serialized is deleted instead.
func (s *Shard) restateKey(slot int, key []byte) {
	s.streamKey(slot, key)
	s.signal(key)
}

// streamKey streams DEL key and the records that rebuild key's value; a
// value that panics when serialized is deleted instead.
func (s *Shard) streamKey(slot int, key []byte) {
	ks := s.spaces[slot]
	var e *keyspace.Entry
	if ks != nil {
		e = s.index.Lookup(ks, key)
	}
	if s.Streaming() {
		s.repl.record(slot, [][]byte{CmdDEL, key})
		if e != nil && !s.recordEntry(slot, e) {
			s.log.Error().Str("key", string(key)).Msg("value left by a panicked command cannot be serialized: deleted")
			if ks.Delete(key) != nil {
				s.removed(slot)
			}
		}
	}
}

// recordEntry appends the records that rebuild e to the stream; false when
// serializing it panicked (nothing is appended then).
func (s *Shard) recordEntry(slot int, e *keyspace.Entry) (ok bool) {
	r := &s.repl
	mark := len(r.pending)
	defer func() {
		if !ok && recover() != nil {
			r.pending = r.pending[:mark]
		}
	}()
	w := recWriter{b: r.pending, exact: true}
	w.entry(slot, e)
	for rest := w.b[mark:]; len(rest) > 0; {
		var more bool
		if _, _, _, rest, more = NextRecord(rest); !more {
			break
		}
		r.nrec++
	}
	r.pending = w.b
	return true
}

// Panics is the number of panics contained in the group's shards.
func (g *Group) Panics() int64 {
	var n int64
	for _, s := range g.shards {
		n += s.Stats.Panics.Load()
	}
	return n
}
