package engine

import (
	"encoding/binary"
	"math"
	"runtime/debug"
	"strconv"

	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/actors/engine/types/set"
	"github.com/slotd/slotd/actors/engine/types/stream"
	"github.com/slotd/slotd/actors/engine/types/zset"
	"github.com/slotd/slotd/slots"
)

// Replication control: the messages actors/repl sends to the shards to
// turn streams on, attach and detach replicas' feeds, and take the per-slot
// snapshots of a full sync. Every one is a message to the actor (state is
// only touched inside its turns); completion is reported by callbacks,
// which run on the shard's goroutine and must not block.

// EnableStream turns the shard's stream on with a backlog of per bytes
// (BacklogShare). The offset continues where it was. A backlog that exists
// already is resized, keeping its tail.
func (s *Shard) EnableStream(per int) {
	r := &s.repl
	if r.on && len(r.backlog.buf) == per {
		return
	}
	off := r.offset.Load()
	old := r.backlog
	var tail []byte
	if r.on {
		from := max(old.start, old.end-int64(per))
		tail = old.appendFrom(nil, from)
	}
	r.backlog = ring{}
	r.backlog.reset(per, off-int64(len(tail)))
	if len(tail) > 0 {
		r.backlog.write(tail, off)
	}
	r.on = true
	r.blFirst.Store(r.backlog.start)
	r.blLen.Store(r.backlog.end - r.backlog.start)
}

// BacklogShare is the backlog each of n shards keeps of a replication
// backlog of size bytes: an even split, 16KB at least.
func BacklogShare(size int64, n int) int { return int(max(size/int64(n), 16<<10)) }

// MarkStreamsOn records that the streams were turned on (StreamsOn).
func (g *Group) MarkStreamsOn() { g.streamsOn.Store(true) }

// StreamsOn reports whether EnableStreams ran (read without a message; the
// value may lag by a turn).
func (g *Group) StreamsOn() bool { return g.streamsOn.Load() }

// SetReplica switches the shard's replica mode: no expiry by the local clock (only the
// primary's DEL removes keys; reads still hide keys past their TTL), and
// writes of ordinary clients are not streamed.
func (s *Shard) SetReplica(on bool) {
	s.replica = on
	s.ResetStreamDB()
}

// MarkReplica records replica mode for Replica (set before the shards'
// SetReplica run).
func (g *Group) MarkReplica(on bool) { g.replica.Store(on) }

// ErrReadOnlyReplica is the reply to writes on a read-only replica.
const ErrReadOnlyReplica = "READONLY You can't write against a read only replica."

// Replica reports replica mode.
func (g *Group) Replica() bool { return g.replica.Load() }

// Offsets returns every shard's stream offset.
func (g *Group) Offsets() []int64 {
	out := make([]int64, len(g.shards))
	for i, s := range g.shards {
		out[i] = s.repl.offset.Load()
	}
	return out
}

// BacklogStats returns the sum of the shards' first held offsets and held
// bytes (INFO repl_backlog_first_byte_offset / _histlen).
func (g *Group) BacklogStats() (first, histlen int64) {
	for _, s := range g.shards {
		first += s.repl.blFirst.Load()
		histlen += s.repl.blLen.Load()
	}
	return first, histlen
}

// ResetStream empties the backlog and, when offsets is not nil, moves the
// stream to offsets[ID] (a replica that starts a full sync from a
// primary with the same shard count takes over its offsets). Every feed
// is dropped.
func (s *Shard) ResetStream(offsets []int64) {
	r := &s.repl
	off := r.offset.Load()
	if offsets != nil && s.ID < len(offsets) {
		off = offsets[s.ID]
	}
	r.offset.Store(off)
	r.backlog.reset(len(r.backlog.buf), off)
	r.blFirst.Store(off)
	r.blLen.Store(0)
	clear(r.feeds)
	r.feeds = r.feeds[:0]
}

// AttachFeed connects sink to the shard's stream. With from >= 0 it is a partial
// resync: when the backlog holds the stream from that offset, the held
// bytes are sent at once and ok is true; otherwise nothing is attached.
// With from < 0 the sink is attached for a full sync: it gets records of
// slots only once Snapshot has sent them. start is the stream offset at
// which the sink was attached.
func (s *Shard) AttachFeed(sink Sink, from int64) (ok bool, start int64) {
	r := &s.repl
	end := r.offset.Load()
	if !r.on {
		return false, end
	}
	if j := r.find(sink); j >= 0 {
		r.dropFeed(j)
	}
	s.ResetStreamDB() // a new reader may not know the stream's database
	if from >= 0 {
		if !r.backlog.covers(from) {
			return false, end
		}
		if from < end {
			s.repl.scratch = r.backlog.appendFrom(s.repl.scratch[:0], from)
			if !sink.Frame(FrameStream, s.ID, end, s.repl.scratch) {
				return false, end
			}
		}
		r.feeds = append(r.feeds, &feedState{sink: sink})
		return true, end
	}
	r.feeds = append(r.feeds, &feedState{sink: sink, syncing: true, next: s.ID})
	return true, end
}

// Covers reports whether the shard's backlog holds its stream from offset.
func (s *Shard) Covers(offset int64) bool { return s.repl.on && s.repl.backlog.covers(offset) }

// Offset is the shard's stream offset.
func (s *Shard) Offset() int64 { return s.repl.offset.Load() }

// DetachFeed forgets sink.
func (s *Shard) DetachFeed(sink Sink) {
	if j := s.repl.find(sink); j >= 0 {
		s.repl.dropFeed(j)
	}
}

// Snapshot sends sink the next slots of the shard (at least one non-empty
// slot, then more while under budget bytes), as records that recreate
// their keys, in one turn: the slot's stream records follow from then on.
// done reports that every slot of the shard has been sent (a FrameSynced
// frame follows the last snapshot frame). A sink that is not attached
// (anymore) reports done.
func (s *Shard) Snapshot(sink Sink, budget int) bool {
	j := s.repl.find(sink)
	if j < 0 {
		return true
	}
	f := s.repl.feeds[j]
	if !f.syncing {
		return true
	}
	done, ok := s.safeSnapshotStep(f, budget)
	if !ok {
		s.repl.dropFeed(s.repl.find(sink))
		done = true
	}
	return done
}

// safeSnapshotStep is snapshotStep turning a panic into a failed feed (the
// replica resyncs) instead of a lost reply.
func (s *Shard) safeSnapshotStep(f *feedState, budget int) (done, ok bool) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error().Interface("panic", p).Str("stack", string(debug.Stack())).Msg("snapshot panicked")
			done, ok = true, false
		}
	}()
	return s.snapshotStep(f, budget)
}

func (s *Shard) snapshotStep(f *feedState, budget int) (done, ok bool) {
	w := recWriter{b: s.snapBuf[:0], exact: true}
	now := s.now
	if now == 0 {
		now = s.group.nowMS()
	}
	frameDB := 0
	for f.next < slots.NumSlots && len(w.b) < budget {
		slot := f.next
		f.next += s.n
		for db, d := range s.dbs {
			if d == nil || d[slot] == nil || d[slot].Len() == 0 {
				continue
			}
			if db != frameDB {
				// Each snapshot frame starts in DB 0 on the replica.
				w.selectDB(db)
				frameDB = db
			}
			d[slot].ForEach(func(e *keyspace.Entry) bool {
				if s.replica || e.Expire == 0 || e.Expire > now {
					w.entry(slot, e)
				}
				return true
			})
		}
		f.markSnapped(slot)
	}
	if cap(w.b) <= 4<<20 {
		s.snapBuf = w.b[:0]
	} else {
		s.snapBuf = nil
	}
	off := s.repl.offset.Load()
	if len(w.b) > 0 && !f.sink.Frame(FrameSnapshot, s.ID, off, w.b) {
		return true, false
	}
	if f.next < slots.NumSlots {
		return false, true
	}
	f.syncing = false
	return true, f.sink.Frame(FrameSynced, s.ID, off, nil)
}

// DropAll deletes every key (a replica starting a full sync).
func (s *Shard) DropAll() {
	s.ForEachDB(func(int) {
		if s.replica {
			s.aofFlushSlots(s.slotsWithKeys())
		}
		for slot := s.ID; slot < slots.NumSlots; slot += s.n {
			s.DropSlot(slot)
		}
	})
	s.DirtyAllWatchers()
}

// ---- snapshot encoding

// recWriter encodes records whose argument count is known up front.
type recWriter struct {
	b     []byte
	start int
	// exact: values whose commands cannot rebuild them exactly (streams:
	// node layout, pending entries of deleted messages, seen times) go as
	// RESTORE payloads, as a replica's full sync carries them in Redis's
	// RDB. Off for AOF rewrites, which write Redis's commands.
	exact bool
}

func (w *recWriter) begin(slot, nargs int) {
	w.start = len(w.b)
	w.b = append(w.b, 0, 0, 0, 0, 0, 0)
	binary.LittleEndian.PutUint16(w.b[w.start:], uint16(slot))
	w.b = appendBulkHdr(w.b, '*', nargs)
}

func (w *recWriter) arg(a []byte) {
	w.b = appendBulkHdr(w.b, '$', len(a))
	w.b = append(w.b, a...)
	w.b = append(w.b, '\r', '\n')
}

func (w *recWriter) str(a string) {
	w.b = appendBulkHdr(w.b, '$', len(a))
	w.b = append(w.b, a...)
	w.b = append(w.b, '\r', '\n')
}

func (w *recWriter) int(n int64) {
	var tmp [20]byte
	w.arg(strconv.AppendInt(tmp[:0], n, 10))
}

func (w *recWriter) float(f float64) {
	var tmp [32]byte
	switch {
	case math.IsInf(f, 1):
		w.str("inf")
	case math.IsInf(f, -1):
		w.str("-inf")
	default:
		w.arg(strconv.AppendFloat(tmp[:0], f, 'g', -1, 64))
	}
}

// selectDB writes a SELECT record (slot-less).
func (w *recWriter) selectDB(db int) {
	w.begin(-1, 2)
	w.str("SELECT")
	w.int(int64(db))
	w.end()
}

func (w *recWriter) end() {
	binary.LittleEndian.PutUint32(w.b[w.start+2:], uint32(len(w.b)-w.start-RecordHeader))
}

// snapChunk is how many elements one snapshot record carries at most.
const snapChunk = 512

// chunkWriter splits a collection's elements into records "cmd key
// element..." of at most snapChunk elements, each element per arguments.
type chunkWriter struct {
	w         *recWriter
	slot      int
	cmd, key  string
	left, per int
	k         int // elements the open record still takes
}

// open starts a record before an element when none is open.
func (c *chunkWriter) open() {
	if c.k == 0 {
		c.k = min(c.left, snapChunk)
		c.left -= c.k
		c.w.begin(c.slot, 2+c.per*c.k)
		c.w.str(c.cmd)
		c.w.str(c.key)
	}
}

// close ends the record after its last element.
func (c *chunkWriter) close() {
	if c.k--; c.k == 0 {
		c.w.end()
	}
}

// entry writes the records that recreate e: the value in chunks of
// RPUSH/HSET/SADD/ZADD (SET for strings), then its TTL.
func (w *recWriter) entry(slot int, e *keyspace.Entry) {
	key := e.Key()
	switch e.Kind {
	case keyspace.KindString:
		n := 3
		if e.Expire != 0 {
			n = 5
		}
		w.begin(slot, n)
		w.str("SET")
		w.str(key)
		w.arg(e.Str)
		if e.Expire != 0 {
			w.str("PXAT")
			w.int(e.Expire)
		}
		w.end()
		return
	case keyspace.KindList:
		l := ListOf(e)
		cw := chunkWriter{w: w, slot: slot, cmd: "RPUSH", key: key, left: l.Len(), per: 1}
		l.Each(false, func(_ int, v string) bool {
			cw.open()
			w.str(v)
			cw.close()
			return true
		})
	case keyspace.KindHash:
		h := HashOf(e)
		cw := chunkWriter{w: w, slot: slot, cmd: "HSET", key: key, left: h.Len(), per: 2}
		h.Each(func(f, v string) bool {
			cw.open()
			w.str(f)
			w.str(v)
			cw.close()
			return true
		})
	case keyspace.KindSet:
		st := e.Obj.(*set.Set)
		cw := chunkWriter{w: w, slot: slot, cmd: "SADD", key: key, left: st.Len(), per: 1}
		st.ForEach(func(m string) bool {
			cw.open()
			w.str(m)
			cw.close()
			return true
		})
	case keyspace.KindZSet:
		z := e.Obj.(*zset.ZSet)
		cw := chunkWriter{w: w, slot: slot, cmd: "ZADD", key: key, left: z.Len(), per: 2}
		for n := z.First(); n != nil; n = n.Next() {
			cw.open()
			w.float(n.Score())
			w.str(n.Member())
			cw.close()
		}
	case keyspace.KindStream:
		if w.exact {
			w.restoreRecord(slot, key, e)
		} else {
			w.streamRecords(slot, key, e.Obj.(*stream.Stream))
		}
	default:
		return // no other type exists yet
	}
	if e.Expire != 0 {
		w.begin(slot, 3)
		w.str("PEXPIREAT")
		w.str(key)
		w.int(e.Expire)
		w.end()
	}
}
