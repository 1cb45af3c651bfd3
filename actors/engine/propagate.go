package engine

import (
	"encoding/binary"
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/slots"
)

// Replication streams.
//
// Each shard actor appends the effects of its writes to its own stream: a
// sequence of records, each one command in RESP with the slot it belongs
// to, so a replica can route it to whichever of its own actors owns that
// slot. A stream's offset counts its bytes; the node's replication offset
// is the sum over the shards. By default a write that changed something
// is streamed as it was sent; handlers replace that with c.Propagate when
// the original would not replay deterministically (relative TTLs, random
// picks, blocking forms), and lazy or active expiry streams DEL.
//
// Records of one actor turn are collected in pending and published at the
// end of the turn: appended to the backlog ring (partial resync) and
// pushed to every attached feed (Sink). Streams are off until the first
// replica attaches (Redis keeps no backlog before that either), so a node
// without replicas does no encoding at all.

// Record framing: slot (uint16 LE, SlotNone for slot-less records) and
// payload length (uint32 LE), then the RESP array.
const (
	RecordHeader = 6
	SlotNone     = 0xFFFF
)

// Frame kinds a shard hands to its sinks.
const (
	FrameStream   = 'S' // stream records; offset is the stream offset after them
	FrameSnapshot = 'D' // records that recreate keys of snapshotted slots (full sync)
	FrameSynced   = 'E' // every slot of the shard has been snapshotted
)

// Sink receives one replica's share of a shard's stream. Frame is called
// inside the shard's turn; payload is only valid during the call. It
// reports false once the sink is gone, and the shard then forgets it.
type Sink interface {
	Frame(kind byte, shard int, offset int64, payload []byte) bool
}

// replShard is a shard's replication state. Only the actor touches it,
// except the atomics read by INFO.
type replShard struct {
	on       bool // streaming: a backlog exists
	pending  []byte
	nrec     int // records appended to pending so far (wrap counting)
	offset   atomic.Int64
	backlog  ring
	feeds    []*feedState
	scratch  []byte
	argBuf   [][]byte
	wrapping bool // a transaction's records are being wrapped in MULTI/EXEC
	txLeft   int  // commands left in that transaction
	txMark   int  // where its records start in pending
	txRec    int
	txSlot   int
	// wrapMark and wrapRec are the last wrapStart's mark (a panicking
	// script's wrap is closed from them, contain.go).
	wrapMark, wrapRec int
	aofMark           int // pending[:aofMark] already went to the AOF (aofDirect)
	// db is the database the stream last SELECTed (-1: unknown to its
	// readers), want the shard's current one.
	db, want int

	// Published for readers on other goroutines.
	blFirst, blLen atomic.Int64
}

// feedState is one attached sink in one shard.
type feedState struct {
	sink    Sink
	syncing bool
	next    int                         // next slot to snapshot
	snapped [slots.NumSlots / 64]uint64 // slots whose snapshot was sent
}

func (f *feedState) isSnapped(slot int) bool { return f.snapped[slot>>6]&(1<<(slot&63)) != 0 }
func (f *feedState) markSnapped(slot int)    { f.snapped[slot>>6] |= 1 << (slot & 63) }

// streaming reports whether writes of ordinary clients are streamed: the
// streams are on and this node is not a replica (whose stream carries what
// its primary sent, and whose own writes stay local, as in Redis).
func (s *Shard) Streaming() bool { return s.repl.on && !s.replica }

// ---- encoding

// appendBulkHdr writes c, n and CRLF. Lengths below 100 (argument
// counts, most keys and small values) skip strconv: encoding is on the
// path of every replicated write.
func appendBulkHdr(b []byte, c byte, n int) []byte {
	switch {
	case n < 10:
		return append(b, c, byte('0'+n), '\r', '\n')
	case n < 100:
		return append(b, c, byte('0'+n/10), byte('0'+n%10), '\r', '\n')
	}
	b = append(b, c)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}

// AppendRecord encodes one record (slot, args as a RESP array) to b.
func AppendRecord(b []byte, slot int, args [][]byte) []byte {
	if slot < 0 {
		slot = SlotNone
	}
	// One growth for the whole record instead of one per append.
	size := RecordHeader + 16
	for _, a := range args {
		size += len(a) + 16
	}
	b = slices.Grow(b, size)
	start := len(b)
	b = append(b, 0, 0, 0, 0, 0, 0)
	b = appendBulkHdr(b, '*', len(args))
	for _, a := range args {
		b = appendBulkHdr(b, '$', len(a))
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	binary.LittleEndian.PutUint16(b[start:], uint16(slot))
	binary.LittleEndian.PutUint32(b[start+2:], uint32(len(b)-start-RecordHeader))
	return b
}

// NextRecord splits the first record off b: its slot (-1 for slot-less
// records), the whole record and its RESP payload. ok is false when b does
// not start with a complete record.
func NextRecord(b []byte) (slot int, rec, payload, rest []byte, ok bool) {
	if len(b) < RecordHeader {
		return 0, nil, nil, b, false
	}
	n := int(binary.LittleEndian.Uint32(b[2:]))
	if len(b) < RecordHeader+n {
		return 0, nil, nil, b, false
	}
	slot = int(binary.LittleEndian.Uint16(b))
	if slot == SlotNone {
		slot = -1
	}
	return slot, b[:RecordHeader+n], b[RecordHeader : RecordHeader+n], b[RecordHeader+n:], true
}

func (r *replShard) record(slot int, args [][]byte) {
	if r.want != r.db {
		r.selectDB()
	}
	r.pending = AppendRecord(r.pending, slot, args)
	r.nrec++
}

// selectDB streams a SELECT of the current database (a slot-less record),
// as Redis does before the first write of another database.
func (r *replShard) selectDB() {
	var num [20]byte
	r.pending = AppendRecord(r.pending, -1, [][]byte{cmdSELECT, strconv.AppendInt(num[:0], int64(r.want), 10)})
	r.nrec++
	r.db = r.want
}

// ResetStreamDB makes the next record of the stream SELECT its database
// unless the stream is in database 0, where every reader starts (a replica
// attaching, a new AOF file).
func (s *Shard) ResetStreamDB() {
	if s.repl.db != 0 {
		s.repl.db = -1
	}
}

func (r *replShard) recordStrings(slot int, args ...string) {
	r.argBuf = r.argBuf[:0]
	for _, a := range args {
		r.argBuf = append(r.argBuf, []byte(a))
	}
	r.record(slot, r.argBuf)
	clear(r.argBuf)
}

// ---- propagation hooks used by handlers

// Propagate replaces the command's replicated form: each call streams one
// command (in this command's slot). A handler that calls it is streamed
// exactly as it says, and nothing else; calling it is also how a handler
// that changed something streams a rewrite (PEXPIREAT for EXPIRE, SREM
// for SPOP, ...).
func (c *Call) Propagate(args ...[]byte) {
	c.propagated = true
	if c.spread { // streamed as its keys' new state (spread.go)
		c.rewrote = true
		return
	}
	if c.master || !c.S.Streaming() {
		return
	}
	c.S.repl.record(c.Slot, args)
}

// PropagateStrings is Propagate with string arguments.
func (c *Call) PropagateStrings(args ...string) {
	c.propagated = true
	if c.spread { // streamed as its keys' new state (spread.go)
		c.rewrote = true
		return
	}
	if c.master || !c.S.Streaming() {
		return
	}
	c.S.repl.recordStrings(c.Slot, args...)
}

// Replicating reports whether this command's writes are streamed to
// replicas: handlers build their rewritten form only then.
func (c *Call) Replicating() bool { return !c.master && c.S.Streaming() }

// NoPropagate says the command changed nothing a replica must replay.
func (c *Call) NoPropagate() { c.propagated = true }

// FromMaster reports whether the command is being applied from the
// primary's stream on a replica: keys are never expired by the replica's
// clock then, and TTLs in the past do not delete.
func (c *Call) FromMaster() bool { return c.master }

// propagateAfter streams a command's default form once it ran: writes that
// did not call Propagate, reported a change (or signalled keys themselves)
// and did not fail are streamed as sent.
func (s *Shard) propagateAfter(c *Call, spec *command.Spec, args [][]byte, failed bool) {
	if c.spread {
		if c.rewrote || spec.Write() && !c.propagated && (!c.unchanged && !failed || c.signalled) {
			s.restateSpread(args, s.keyIdx, int(c.Cmd.DB))
		}
		s.spreadSigs = s.spreadSigs[:0]
		return
	}
	if c.propagated || c.Slot < 0 || !spec.Write() {
		return
	}
	if (c.unchanged || failed) && !c.signalled {
		return
	}
	s.repl.record(c.Slot, args)
}

// propagateExpired streams the deletion of a key removed because its TTL
// passed (lazily on access, or by the active cycle).
func (s *Shard) propagateExpired(slot int, key []byte) {
	if s.Streaming() {
		s.repl.record(slot, [][]byte{CmdDEL, key})
	}
}

var (
	CmdDEL       = []byte("DEL")
	CmdPEXPIREAT = []byte("PEXPIREAT")
	CmdPERSIST   = []byte("PERSIST")
	CmdSET       = []byte("SET")
	CmdHSET      = []byte("HSET")
	CmdSREM      = []byte("SREM")
	CmdLMOVE     = []byte("LMOVE")
	CmdRESTORE   = []byte("RESTORE")
	ArgABSTTL    = []byte("ABSTTL")
	ArgREPLACE   = []byte("REPLACE")
	ArgPXAT      = []byte("PXAT")
	ArgKEEPTTL   = []byte("KEEPTTL")
	cmdMULTI     = []byte("MULTI")
	cmdEXEC      = []byte("EXEC")
	cmdSELECT    = []byte("SELECT")
)

// reapExpired deletes e, found past its TTL by a scan or a random draw,
// and streams the deletion. On a replica nothing is deleted (only the
// primary's DEL removes keys); it reports whether e was removed.
func (s *Shard) ReapExpired(slot int, ks *keyspace.Keyspace, e *keyspace.Entry) bool {
	if s.replica {
		return false
	}
	key := e.Key()
	if !ks.DeleteEntry(e) {
		return false
	}
	s.removed(slot)
	s.Stats.Expired.Add(1)
	if len(s.watched) > 0 || s.Streaming() || s.trackingActive() {
		k := []byte(key)
		s.signalWatch(k)
		if s.trackingActive() {
			s.trackInvalidate(k)
		}
		s.propagateExpired(slot, k)
	}
	s.notify(NotifyExpired, "expired", []byte(key))
	return true
}

// FlushSlots is the slot-less record FLUSHALL and FLUSHDB stream: the
// slots it names (those that held keys) are dropped on replicas.
const FlushSlots = "FLUSHSLOTS"

// ---- MULTI/EXEC wrapping

// wrapStart returns the position from which a transaction's or script's
// records would be wrapped, or -1 when no wrapping applies.
func (s *Shard) wrapStart() (mark, nrec int) {
	r := &s.repl
	if !s.Streaming() || r.wrapping {
		return -1, 0
	}
	r.wrapping = true
	r.wrapMark, r.wrapRec = len(r.pending), r.nrec
	return len(r.pending), r.nrec
}

// wrapEnd wraps the records appended since mark in MULTI/EXEC when there
// are several of them, so a replica applies them atomically.
func (s *Shard) wrapEnd(mark, nrec, slot int) {
	if mark < 0 {
		return
	}
	r := &s.repl
	r.wrapping = false
	if r.nrec-nrec < 2 {
		return
	}
	body := len(r.pending) - mark
	multi := AppendRecord(r.scratch[:0], slot, [][]byte{cmdMULTI})
	r.scratch = multi
	r.pending = append(r.pending, multi...) // grow by the MULTI record
	copy(r.pending[mark+len(multi):], r.pending[mark:mark+body])
	copy(r.pending[mark:], multi)
	r.record(slot, [][]byte{cmdEXEC})
	r.nrec++ // the MULTI
}

// txStart is called at a transaction's start marker (n keyed commands
// follow in this batch).
func (s *Shard) txStart(n int, slot int) {
	if n <= 0 {
		return
	}
	mark, nrec := s.wrapStart()
	if mark < 0 {
		return
	}
	r := &s.repl
	r.txLeft, r.txMark, r.txRec, r.txSlot = n, mark, nrec, slot
}

// txStep counts one executed command of a wrapped transaction.
func (s *Shard) txStep() {
	r := &s.repl
	if r.txLeft == 0 {
		return
	}
	r.txLeft--
	if r.txLeft == 0 {
		s.wrapEnd(r.txMark, r.txRec, r.txSlot)
	}
}

// ---- publishing

// publish ends a turn: the turn's records go to the backlog and to every
// attached feed.
func (s *Shard) publish() {
	r := &s.repl
	if len(r.pending) == 0 {
		return
	}
	s.aofAppend()
	if !r.on {
		r.pending, r.nrec, r.aofMark = r.pending[:0], 0, 0
		return
	}
	end := r.offset.Load() + int64(len(r.pending))
	r.backlog.write(r.pending, end)
	r.offset.Store(end)
	r.blFirst.Store(r.backlog.start)
	r.blLen.Store(end - r.backlog.start)
	for i := 0; i < len(r.feeds); i++ {
		f := r.feeds[i]
		payload := r.pending
		if f.syncing {
			payload = s.filterSnapped(f, r.pending)
			if len(payload) == 0 {
				continue
			}
		}
		if !f.sink.Frame(FrameStream, s.ID, end, payload) {
			r.dropFeed(i)
			i--
		}
	}
	if cap(r.pending) > 1<<20 {
		r.pending = nil
	}
	r.pending, r.nrec, r.aofMark = r.pending[:0], 0, 0
}

// filterSnapped keeps the records of slots already snapshotted for f: the
// others reach the replica through their snapshot.
func (s *Shard) filterSnapped(f *feedState, recs []byte) []byte {
	out := s.repl.scratch[:0]
	for len(recs) > 0 {
		slot, rec, _, rest, ok := NextRecord(recs)
		if !ok {
			break
		}
		if slot < 0 || f.isSnapped(slot) {
			out = append(out, rec...)
		}
		recs = rest
	}
	s.repl.scratch = out
	return out
}

func (r *replShard) dropFeed(i int) {
	copy(r.feeds[i:], r.feeds[i+1:])
	r.feeds[len(r.feeds)-1] = nil
	r.feeds = r.feeds[:len(r.feeds)-1]
}

func (r *replShard) find(sink Sink) int {
	for i, f := range r.feeds {
		if f.sink == sink {
			return i
		}
	}
	return -1
}

// ---- backlog

// ring is a shard's backlog: the last len(buf) bytes of its stream, ending
// at the stream offset end; start is the offset of its first byte.
type ring struct {
	buf   []byte
	start int64
	end   int64
}

func (b *ring) reset(size int, offset int64) {
	if cap(b.buf) != size {
		b.buf = make([]byte, size)
	}
	b.start, b.end = offset, offset
}

// write appends p, whose last byte is at stream offset end.
func (b *ring) write(p []byte, end int64) {
	n := int64(len(b.buf))
	if n == 0 {
		b.start, b.end = end, end
		return
	}
	if int64(len(p)) >= n {
		p = p[int64(len(p))-n:]
	}
	pos := (end - int64(len(p))) % n
	k := copy(b.buf[pos:], p)
	copy(b.buf, p[k:])
	b.end = end
	if b.end-b.start > n {
		b.start = b.end - n
	}
}

// covers reports whether the bytes from offset to the end are held.
func (b *ring) covers(offset int64) bool { return offset >= b.start && offset <= b.end }

// appendFrom appends the held bytes from offset to the end to dst.
func (b *ring) appendFrom(dst []byte, offset int64) []byte {
	n := int64(len(b.buf))
	if n == 0 || offset >= b.end {
		return dst
	}
	pos := offset % n
	endPos := b.end % n
	if pos < endPos {
		return append(dst, b.buf[pos:endPos]...)
	}
	dst = append(dst, b.buf[pos:]...)
	return append(dst, b.buf[:endPos]...)
}
