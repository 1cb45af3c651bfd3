package engine

import (
	"fmt"
	"runtime/debug"

	"github.com/slotd/slotd/netio/batch"
	"github.com/slotd/slotd/netio/command"
)

// Applying the primary's stream on a replica. actors/repl parses the
// records it receives and hands each shard actor, in order, a batch of the
// commands of the slots it owns. They run through the ordinary handlers,
// flagged as coming from the master: no expiry by the local clock, no
// blocking, replies discarded. Each stream record is appended unchanged to
// this node's own stream (so replicas of this replica, and siblings after
// a promotion, can continue from it); snapshot records are not.

// Replicated is one command to apply.
type Replicated struct {
	Spec *command.Spec // nil for MULTI/EXEC markers and FLUSHSLOTS
	// Payload is the command as a RESP array (a record's payload); the
	// shard splits it into arguments itself, so a replica allocates no
	// argument vectors per command.
	Payload []byte
	Slot    int
	// Raw is the record as received, appended to this node's stream (nil
	// for snapshot records).
	Raw []byte
	// Flush lists the slots a FLUSHSLOTS record drops.
	Flush []int
	// DB is the database the record applies to (the stream's last
	// SELECT); Select marks a SELECT record relayed as it was received.
	DB     int
	Select bool
	// Swap is a SWAPDB of databases DB and SwapWith.
	Swap     bool
	SwapWith int
}

// ApplyBatch is a batch of replicated commands for one shard.
type ApplyBatch struct {
	Cmds []Replicated
	// Offset >= 0 aligns the shard's stream offset with the primary's once
	// the batch's records are appended (replica and primary have the same
	// shard count, so their streams are the same bytes). A gap (records of
	// slots not yet snapshotted during a full sync) restarts the backlog.
	Offset int64
	// Done is called in the shard's turn once the batch is applied.
	Done func()
}

// Apply runs b, a batch of the primary's stream, in the shard.
func (s *Shard) Apply(b *ApplyBatch) {
	r := &s.repl
	saved := s.db
	defer s.UseDB(saved)
	for i := range b.Cmds {
		rc := &b.Cmds[i]
		if rc.DB != s.db && rc.DB >= 0 && rc.DB < len(s.dbs) {
			s.UseDB(rc.DB)
		}
		switch {
		case rc.Select:
			if rc.Raw != nil && r.on {
				r.pending = append(r.pending, rc.Raw...)
				r.nrec++
				r.db = rc.DB
			}
			continue
		case rc.Swap:
			if rc.SwapWith >= 0 && rc.SwapWith < len(s.dbs) {
				s.SwapDBs(rc.DB, rc.SwapWith)
				if len(s.ready) > 0 {
					s.wake()
				}
			}
		case rc.Flush != nil:
			for _, slot := range rc.Flush {
				if slot%s.n == s.ID {
					s.DropSlot(slot)
				}
			}
			if rc.Raw == nil {
				s.aofFlushSlots(rc.Flush)
			}
		case rc.Spec != nil:
			s.applyOne(rc)
			if rc.Raw == nil {
				s.aofDirect(rc.Slot, rc.Payload) // a full sync's snapshot record
			}
		}
		if rc.Raw != nil && r.on {
			if r.db != s.db && !rc.Swap {
				r.selectDB()
			}
			r.pending = append(r.pending, rc.Raw...)
			r.nrec++
		}
	}
	if b.Offset >= 0 && r.on {
		want := b.Offset - int64(len(r.pending))
		if r.offset.Load() != want {
			r.backlog.reset(len(r.backlog.buf), want)
			r.offset.Store(want)
		}
	}
	if b.Done != nil {
		b.Done()
	}
}

func (s *Shard) applyOne(rc *Replicated) {
	args, ok := SplitCommand(rc.Payload, s.applyArgs[:0])
	s.applyArgs = args
	if !ok || len(args) == 0 {
		s.log.Warn().Msg("malformed command in the replication stream")
		return
	}
	cmd := &s.applyCmd
	*cmd = batch.Cmd{Spec: rc.Spec, Args: args, Slot: int32(rc.Slot), Proto: 2, NoBlock: true}
	// The primary is the writer: no client's NOLOOP applies (tracking).
	s.trackWriter(cmd)
	w := &s.applyOut
	w.B, w.Proto = w.B[:0], 2
	c := &s.call
	*c = Call{Args: args, W: w, Slot: rc.Slot, S: s, Cmd: cmd, master: true}
	func() {
		defer func() {
			if p := recover(); p != nil {
				w.B = w.B[:0]
				w.Error(fmt.Sprintf("ERR internal error executing '%s'", rc.Spec.Name))
				s.log.Error().Str("command", rc.Spec.Name).Interface("panic", p).
					Str("stack", string(debug.Stack())).Msg("replicated command panicked")
			}
		}()
		handlerOf(rc.Spec)(c)
	}()
	failed := len(w.B) > 0 && w.B[0] == '-'
	if failed {
		s.applyErrors++
		if now := s.group.nowMS(); now-s.applyErrAt > 1000 {
			s.applyErrAt = now
			s.log.Warn().Str("command", rc.Spec.Name).Str("reply", string(trimCRLF(w.B))).
				Int64("errors", s.applyErrors).Msg("command from the primary failed on this replica")
		}
	}
	changed := rc.Spec.Write() && (!c.unchanged || c.signalled) && !failed
	if changed {
		s.Stats.Dirty.Add(1) // save rules count a replica's writes too
	}
	if changed && (len(s.blocked) > 0 || len(s.watched) > 0 || s.trackingActive()) {
		s.keyIdx, _ = rc.Spec.KeyIndexes(s.keyIdx[:0], args)
		for _, k := range s.keyIdx {
			s.signal(args[k])
		}
		if len(s.ready) > 0 {
			s.wake()
		}
	}
	if cap(w.B) > 1<<16 {
		w.B = nil
	}
}

// SplitCommand splits a RESP array of bulk strings (a record's payload)
// into its arguments, appended to dst; they point into p.
func SplitCommand(p []byte, dst [][]byte) ([][]byte, bool) {
	n, p, ok := respLen(p, '*')
	if !ok {
		return dst, false
	}
	for i := 0; i < n; i++ {
		var l int
		if l, p, ok = respLen(p, '$'); !ok || len(p) < l+2 {
			return dst, false
		}
		dst = append(dst, p[:l:l])
		p = p[l+2:]
	}
	return dst, true
}

func respLen(p []byte, c byte) (int, []byte, bool) {
	if len(p) < 3 || p[0] != c {
		return 0, p, false
	}
	n, i := 0, 1
	for ; i < len(p) && p[i] != '\r'; i++ {
		d := p[i]
		if d < '0' || d > '9' {
			return 0, p, false
		}
		n = n*10 + int(d-'0')
	}
	if i+1 >= len(p) || p[i+1] != '\n' {
		return 0, p, false
	}
	return n, p[i+2:], true
}

func trimCRLF(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
