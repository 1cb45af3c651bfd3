package engine

import (
	"encoding/binary"
	"runtime/debug"
	"strconv"

	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/netio/batch"
	"github.com/slotd/slotd/slots"
)

// The append-only file as a shard sees it. actors/aof implements the
// files; the shard hands it, at the end of each turn, the records of that
// turn (the same records the replication stream carries, so relative TTLs,
// random picks and expiry are already deterministic), and under
// appendfsync always holds the turn's replies until they are on disk.
//
// Group commit: a batch that completes while an AOF is attached in
// always mode is not reported done at once; at the end of the turn, after
// the records were written, the held batches are handed to AfterSync,
// which releases them (in order) once an fsync covering everything
// written so far completes. Reads that follow an unsynced write wait
// too, so no client sees a value that a crash could still lose.

// AOF is one shard's append-only log.
type AOF interface {
	// Append takes one turn's records (RecordHeader framing); it is
	// called in the shard's turn and must not keep recs.
	Append(recs []byte)
	// Always reports appendfsync always: replies wait for the fsync.
	Always() bool
	// AfterSync calls fn once everything appended so far is durable
	// (at once when it already is, or when not in always mode and
	// nothing waits). Callbacks run in the order they were queued.
	AfterSync(fn func())
}

// AttachAOF makes a the log of shard i and turns record collection on
// (the streams; no backlog is kept unless replication enabled one).
func (s *Shard) AttachAOF(a AOF) {
	s.releaseHeld()
	s.aof = a
	s.repl.on = true
	s.ResetStreamDB() // a new file starts in DB 0
}

// DetachAOF stops shard i's log; record collection goes back off unless
// replication turned the streams on.
func (s *Shard) DetachAOF() {
	s.releaseHeld()
	s.aof = nil
	if !s.group.streamsOn.Load() {
		s.repl.on = false
		s.repl.pending, s.repl.nrec = s.repl.pending[:0], 0
	}
}

// holdBatch keeps b's replies until the turn's records are on disk; it
// reports false when no AOF in always mode is attached.
func (s *Shard) holdBatch(b *batch.Batch) bool {
	if s.aof == nil || !s.aof.Always() {
		return false
	}
	s.aofHeld = append(s.aofHeld, b)
	return true
}

// releaseHeld hands the held batches to the log once the turn's records
// were appended (publish runs first).
func (s *Shard) releaseHeld() {
	if len(s.aofHeld) == 0 || (s.repl.wrapping && s.aof != nil) {
		return // a transaction's records are not appended yet
	}
	held := s.aofHeld
	s.aofHeld = nil
	release := func() {
		for _, b := range held {
			b.Done.BatchDone(b)
		}
	}
	if s.aof == nil {
		release()
		return
	}
	s.aof.AfterSync(release)
}

// aofAppend hands the turn's records to the log (from publish).
func (s *Shard) aofAppend() {
	if r := &s.repl; s.aof != nil && len(r.pending) > r.aofMark {
		s.aof.Append(r.pending[r.aofMark:])
	}
}

// aofDirect logs a record that is not part of the stream (a replica's
// full sync: snapshot records and the flush before them), after the
// stream records collected so far in this turn.
func (s *Shard) aofDirect(slot int, payload []byte) {
	if s.aof == nil {
		return
	}
	r := &s.repl
	if len(r.pending) > r.aofMark {
		s.aof.Append(r.pending[r.aofMark:])
		r.aofMark = len(r.pending)
	}
	if slot < 0 {
		slot = SlotNone
	}
	// The record is in the current database; the file goes on in the
	// stream's (the records around it are the stream's).
	other := s.db != r.db
	var num [20]byte
	if other {
		s.aof.Append(AppendRecord(nil, -1, [][]byte{cmdSELECT, strconv.AppendInt(num[:0], int64(s.db), 10)}))
	}
	rec := append(r.scratch[:0], 0, 0, 0, 0, 0, 0)
	binary.LittleEndian.PutUint16(rec, uint16(slot))
	binary.LittleEndian.PutUint32(rec[2:], uint32(len(payload)))
	rec = append(rec, payload...)
	r.scratch = rec
	s.aof.Append(rec)
	if other && r.db >= 0 {
		s.aof.Append(AppendRecord(nil, -1, [][]byte{cmdSELECT, strconv.AppendInt(num[:0], int64(r.db), 10)}))
	}
}

// aofFlushSlots logs FLUSHSLOTS for those of list that are this shard's.
func (s *Shard) aofFlushSlots(list []int) {
	if s.aof == nil || len(list) == 0 {
		return
	}
	args := [][]byte{[]byte(FlushSlots)}
	for _, slot := range list {
		if slot%s.n == s.ID {
			args = append(args, strconv.AppendInt(nil, int64(slot), 10))
		}
	}
	if len(args) > 1 {
		rec := AppendRecord(nil, -1, args)
		s.aofDirect(-1, rec[RecordHeader:])
	}
}

// slotsWithKeys lists this shard's slots that hold keys.
func (s *Shard) slotsWithKeys() []int {
	var out []int
	s.ForEachSlot(func(slot int, _ *keyspace.Keyspace) { out = append(out, slot) })
	return out
}

// DropSlotLogged is DropSlot for a slot this node no longer serves (a
// newer owner claimed it): the AOF logs the flush, so a restart does not
// bring the keys back.
func (s *Shard) DropSlotLogged(slot int) int {
	n := 0
	s.ForEachDB(func(int) {
		if s.spaces[slot] != nil && s.spaces[slot].Len() > 0 {
			s.aofFlushSlots([]int{slot})
		}
		n += s.DropSlot(slot)
	})
	return n
}

// RecordChunk is one turn's output of RecordSlots.
type RecordChunk struct {
	// B holds framed records (RecordHeader) that recreate the keys.
	B []byte
	// Next is the next slot to write; slots.NumSlots when the shard is done.
	Next int
	Err  any
}

// RecordSlots is SaveSlots producing commands instead of RDB records (an
// AOF base with aof-use-rdb-preamble no): shard i's slots from from on,
// whole slots at a time until about budget bytes. reply runs in the
// shard's turn and must not block. Expired keys are left out.
func (s *Shard) RecordSlots(from, budget int) RecordChunk {
	var ch RecordChunk
	func() {
		defer func() {
			if p := recover(); p != nil {
				s.log.Error().Interface("panic", p).Str("stack", string(debug.Stack())).Msg("rewrite panicked")
				ch.Err = p
			}
		}()
		w := recWriter{}
		now := s.group.nowMS()
		slot := max(from, s.ID)
		cur := 0 // each chunk starts and ends in DB 0
		for ; slot < slots.NumSlots && len(w.b) < budget; slot += s.n {
			s.eachDBOf(slot, func(db int, ks *keyspace.Keyspace) {
				if db != cur {
					w.selectDB(db)
					cur = db
				}
				ks.ForEach(func(e *keyspace.Entry) bool {
					if e.Expire == 0 || e.Expire > now {
						w.entry(slot, e)
					}
					return true
				})
			})
		}
		if cur != 0 {
			w.selectDB(0)
		}
		ch.B, ch.Next = w.b, min(slot, slots.NumSlots)
	}()
	return ch
}
