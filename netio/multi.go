package netio

import (
	"time"

	"github.com/slotd/slotd/netio/batch"
	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/slots"
)

// Transactions. Commands queued after MULTI are validated (and, in cluster
// mode, routed) when queued, as Redis does; EXEC replays them into the
// current read's group. A transaction whose commands and WATCH records are
// in one shard lands contiguously in one shard batch behind a marker and
// runs in one actor turn: atomic with respect to every other client. One
// that involves several shards (standalone: keys of any slots) starts a
// group of its own with a marker in each involved shard and runs as a
// joint step (execJoint). WATCH state is flagged by the shards owning the
// watched keys and checked by the marker when the transaction starts.

type queued struct {
	spec *command.Spec
	args [][]byte
	slot int // slot of the command's keys, -1 for keyless (and cursor-routed) commands
	// split: a multi-key command over several slots, split by EXEC
	// (standalone only, see split.go).
	split bool
}

func registerMulti() {
	// RESET leaves MULTI and forgets WATCHed keys.
	OnReset(func(x *Ctx) {
		x.C.discardTx()
		x.S.unwatchIn(x.C, x.g)
	})
	command.Register(
		Loop(&command.Spec{Name: "multi", Arity: 1, Flags: []string{"noscript", "loading", "stale", "fast", "allow_busy"},
			Categories: []string{"fast", "transaction"}, Group: "transactions", Since: "1.2.0", TxControl: true,
			Summary: "Starts a transaction."}, cmdMulti),
		Loop(&command.Spec{Name: "exec", Arity: 1, Flags: []string{"noscript", "loading", "stale", "skip_slowlog"},
			Categories: []string{"slow", "transaction"}, Group: "transactions", Since: "1.2.0", TxControl: true,
			Summary: "Executes all commands in a transaction."}, cmdExec),
		Loop(&command.Spec{Name: "discard", Arity: 1, Flags: []string{"noscript", "loading", "stale", "fast", "allow_busy"},
			Categories: []string{"fast", "transaction"}, Group: "transactions", Since: "2.0.0", TxControl: true,
			Summary: "Discards a transaction."}, cmdDiscard),
		Loop(&command.Spec{Name: "unwatch", Arity: 1, Flags: []string{"noscript", "loading", "stale", "fast", "allow_busy"},
			Categories: []string{"fast", "transaction"}, Group: "transactions", Since: "2.2.0",
			Summary: "Forgets about watched keys of a transaction."}, cmdUnwatch),
	)
}

func cmdMulti(x *Ctx) {
	if x.C.multi {
		x.W.Error("ERR MULTI calls can not be nested")
		return
	}
	x.C.multi = true
	x.C.setFlag(clientFlagMulti, true)
	x.C.multiErr = false
	x.C.txq = x.C.txq[:0]
	x.W.OK()
}

// txWrites reports whether a queued command of the transaction writes.
func (cl *client) txWrites() bool {
	for _, q := range cl.txq {
		if q.spec.WritesWith(q.args) {
			return true
		}
	}
	return false
}

func cmdDiscard(x *Ctx) {
	if !x.C.multi {
		x.W.Error("ERR DISCARD without MULTI")
		return
	}
	x.C.discardTx()
	x.S.unwatchIn(x.C, x.g)
	x.W.OK()
}

func cmdUnwatch(x *Ctx) {
	x.S.unwatchIn(x.C, x.g)
	x.W.OK()
}

func (cl *client) discardTx() {
	cl.multi = false
	cl.setFlag(clientFlagMulti, false)
	cl.multiErr = false
	for i := range cl.txq {
		cl.txq[i] = queued{}
	}
	cl.txq = cl.txq[:0]
}

// queue validates a command issued inside MULTI and queues a copy.
func (s *Server) queue(cl *client, g *group, spec *command.Spec, args [][]byte) {
	if s.shards.OutOfMemory() {
		// Queueing could use memory without bound: over maxmemory every
		// command is refused, and EXEC then aborts (Redis's
		// processCommand). DISCARD, EXEC, QUIT and RESET never get here.
		cl.multiErr = true
		s.replyErr(g, spec, errOOM)
		return
	}
	slot, split := -1, false
	if spec.Exec == command.Shard {
		sl, errMsg := s.route(cl, spec, args)
		if errMsg == errCrossSlot && spec.ArgError != nil && !s.Table.Load().Cluster && spec.ArgError(args) != "" {
			// Queued keyless: EXEC answers the argument error, as Redis.
			sl, errMsg = -1, ""
		}
		if _, ok := splitRules[spec.Name]; ok && errMsg == errCrossSlot && !s.Table.Load().Cluster {
			sl, errMsg, split = -1, "", true // split when EXEC runs it
		}
		if errMsg == errCrossSlot && !s.Table.Load().Cluster {
			if first, _, ok := s.spreadShards(spec, args, true); ok {
				sl, errMsg = first, "" // keys of one shard: spread when EXEC runs it
			}
		}
		if errMsg != "" {
			cl.multiErr = true
			s.replyErr(g, spec, errMsg)
			return
		}
		// Commands routed by an argument that is not a key (SCAN's cursor)
		// don't bind the transaction to a slot.
		if spec.Route == nil {
			slot = sl
		}
	}
	cl.txq = append(cl.txq, queued{spec: spec, args: copyArgs(args), slot: slot, split: split})
	// ASKING stays set inside MULTI (Redis clears it only outside one).
	g.local.Simple("QUEUED")
	g.endLocal()
}

// errOOM is Redis's refusal over maxmemory (engine.ErrOOM).
const errOOM = "OOM command not allowed when used memory > 'maxmemory'."

func cmdExec(x *Ctx) {
	cl, s, g := x.C, x.S, x.g
	if !cl.multi {
		x.W.Error("ERR EXEC without MULTI")
		return
	}
	q := append([]queued(nil), cl.txq...)
	aborted := cl.multiErr
	cl.discardTx()
	ws := cl.watch
	if aborted {
		s.unwatchIn(cl, g)
		x.W.Error("EXECABORT Transaction discarded because of previous errors.")
		return
	}
	// An EXEC with a denyoom command is refused over maxmemory, as that
	// command would be (execCommandAbort names why).
	for _, qc := range q {
		if qc.spec.DenyOOM() && s.shards.OutOfMemory() {
			s.unwatchIn(cl, g)
			x.W.Error("EXECABORT Transaction discarded because of: " + errOOM)
			return
		}
	}
	// In cluster mode every keyed command of the transaction must be in
	// one slot; a standalone node runs any keys, as Redis.
	slot := -1
	for _, qc := range q {
		if qc.spec.Exec != command.Shard || qc.slot < 0 {
			continue
		}
		if slot >= 0 && qc.slot != slot && s.Table.Load().Cluster {
			s.unwatchIn(cl, g)
			x.W.Error(errCrossSlot)
			return
		}
		if slot < 0 {
			slot = qc.slot
		}
	}
	x.noReply = true
	tx := txInfo{n: len(q), shard: -1}
	if ws.Aborted(time.Now().UnixMilli()) {
		tx.loopAborted = true
		g.order = append(g.order, src{kind: srcTx, idx: uint16(len(g.txs))})
		g.txs = append(g.txs, tx)
		// Keep the reply shape: the skipped entries must exist.
		for range q {
			g.endLocal()
		}
		s.unwatchIn(cl, g)
		return
	}
	if ts := s.txShards(cl, q); len(ts.list) > 1 {
		s.execJoint(cl, g, q, ts, tx)
		return
	}
	var b *batch.Batch
	marker := -1
	if slot >= 0 || ws != nil {
		if slot >= 0 {
			tx.shard = s.shards.Of(slot)
		} else {
			// No keyed command, but WATCHed keys: check the state in the
			// shard holding the watch records, after the writes this read
			// already queued there (a pipelined WATCH k; SET k; MULTI;
			// EXEC aborts).
			tx.shard = 0
			for i := 0; i < s.shards.N() && i < 64; i++ {
				if ws.Shards&(1<<uint(i)) != 0 {
					tx.shard = i
					break
				}
			}
		}
		b = g.batch(tx.shard)
		b.Add(nil, nil, slot, cl.proto, false)
		marker = len(b.Cmds) - 1
		b.Cmds[marker].Watch = ws
	}
	g.order = append(g.order, src{kind: srcTx, idx: uint16(len(g.txs))})
	g.txs = append(g.txs, tx)
	// The marker's shard drops its WATCH records itself once it has
	// checked them (engine.Shard.endWatch): an Unwatch sent now would reach
	// it ahead of this read's batch, and a write landing in between would
	// not abort the transaction. Records in no other shard: those would
	// make the transaction a joint one (txShards).
	s.unwatchBut(cl, tx.shard)
	for _, qc := range q {
		s.execute(cl, g, qc.spec, qc.args, true)
	}
	if b != nil {
		b.Cmds[marker].TxBegin = int32(len(b.Cmds) - marker - 1)
		if b.Cmds[marker].TxBegin == 0 {
			b.Cmds[marker].TxBegin = -1 // nothing to skip; keep it a marker
		}
	}
}

// txShardSet is the shards a transaction involves, ascending, with the
// first slot of its keyed commands in each (-1: none).
type txShardSet struct {
	list  []int
	first []int // by position in list
}

// txShards finds the shards that the queued commands q of cl's
// transaction run in, and those holding cl's WATCH records.
func (s *Server) txShards(cl *client, q []queued) txShardSet {
	n := s.shards.N()
	in := make([]bool, n)
	first := make([]int, n)
	for i := range first {
		first[i] = -1
	}
	add := func(i, slot int) {
		in[i] = true
		if first[i] < 0 {
			first[i] = slot
		}
	}
	for _, qc := range q {
		switch {
		case qc.spec.Exec == command.Fanout:
			for i := range in {
				in[i] = true
			}
		case qc.spec.Exec != command.Shard:
		case qc.split:
			stride := splitRules[qc.spec.Name].stride
			for k := 1; k < len(qc.args); k += stride {
				sl := slots.HashSlot(qc.args[k])
				add(s.shards.Of(sl), sl)
			}
		case qc.slot >= 0:
			add(s.shards.Of(qc.slot), qc.slot)
		default:
			// Keyless, or routed by an argument (SCAN's cursor).
			i := 0
			if sl, msg := s.route(cl, qc.spec, qc.args); msg == "" && sl >= 0 {
				i = s.shards.Of(sl)
			}
			in[i] = true
		}
	}
	if ws := cl.watch; ws != nil {
		for i := 0; i < n; i++ {
			if ws.Shards&(1<<uint(i%64)) != 0 {
				in[i] = true
			}
		}
	}
	var ts txShardSet
	for i, ok := range in {
		if ok {
			ts.list = append(ts.list, i)
			ts.first = append(ts.first, first[i])
		}
	}
	return ts
}

// txCrossShard reports whether cl's queued transaction involves several
// shards (its EXEC then runs in a group of its own, see pipelineOrder).
func (s *Server) txCrossShard(cl *client) bool {
	if s.shards.N() < 2 {
		return false
	}
	return len(s.txShards(cl, cl.txq).list) > 1
}

// execJoint replays a transaction whose commands (or WATCH records) live
// in several shards: a marker in each involved shard's batch, then the
// commands, the group running as one joint step. Every marker checks the
// same WATCH verdict (WatchState.Decide) and drops its shard's records;
// EXEC is its read's only command (pipelineOrder), so the verdict comes
// after every earlier write of the connection.
func (s *Server) execJoint(cl *client, g *group, q []queued, ts txShardSet, tx txInfo) {
	ws := cl.watch
	cl.watch = nil // each marker drops its shard's records
	g.joint = true
	markers := make([]int, len(ts.list))
	for k, i := range ts.list {
		b := g.batch(i)
		b.Add(nil, nil, ts.first[k], cl.proto, false)
		markers[k] = len(b.Cmds) - 1
		b.Cmds[markers[k]].Watch = ws
	}
	tx.shard = ts.list[0]
	tx.others = ts.list[1:]
	g.order = append(g.order, src{kind: srcTx, idx: uint16(len(g.txs))})
	g.txs = append(g.txs, tx)
	for _, qc := range q {
		s.execute(cl, g, qc.spec, qc.args, true)
	}
	for k, i := range ts.list {
		b := g.batches[i]
		m := &b.Cmds[markers[k]]
		m.TxBegin = int32(len(b.Cmds) - markers[k] - 1)
		if m.TxBegin == 0 {
			m.TxBegin = -1 // nothing to skip; keep it a marker
		}
	}
}

// watchState returns the client's WATCH state, noting that shard i holds
// records of it.
func (cl *client) watchState(i int) *batch.WatchState {
	if cl.watch == nil {
		cl.watch = &batch.WatchState{}
	}
	cl.watch.Shards |= 1 << uint(i%64)
	return cl.watch
}

// unwatch drops the client's WATCH records in every shard holding some.
func (s *Server) unwatch(cl *client) { s.unwatchBut(cl, -1) }

// unwatchIn is unwatch for a command of group g: a shard with a batch in
// g, whose WATCH may still be in it, drops the records after that batch's
// earlier commands (a marker), not ahead of them.
func (s *Server) unwatchIn(cl *client, g *group) {
	ws := cl.watch
	if ws == nil {
		return
	}
	cl.watch = nil
	for i := 0; i < s.shards.N(); i++ {
		if ws.Shards&(1<<uint(i%64)) == 0 {
			continue
		}
		if b := g.batches[i]; b != nil {
			b.Add(nil, nil, -1, cl.proto, false)
			m := &b.Cmds[len(b.Cmds)-1]
			m.Watch, m.TxBegin = ws, -1
			g.order = append(g.order, src{kind: srcMark, idx: uint16(i)})
		} else {
			s.shards.Unwatch(i, ws)
		}
	}
}

// unwatchBut is unwatch leaving shard keep (-1: none) alone.
func (s *Server) unwatchBut(cl *client, keep int) {
	ws := cl.watch
	if ws == nil {
		return
	}
	cl.watch = nil
	for i := 0; i < s.shards.N(); i++ {
		if i != keep && ws.Shards&(1<<uint(i%64)) != 0 {
			s.shards.Unwatch(i, ws)
		}
	}
}
