package aof

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/slots"
)

// shardLog is one shard's open incr file (engine.AOF). Append runs in the
// shard's turns; a syncer goroutine fsyncs (at once under always, once a
// second under everysec) and releases the replies waiting for it.
//
// While a rewrite runs, records also go to the rewrite's new incr file,
// but only those of slots the new base already holds (snapped): the
// others reach the new base when their slot is snapshotted. The old incr
// file keeps getting every record, so the old manifest stays complete
// until the new one replaces it.
type shardLog struct {
	m  *Manager
	id int

	// Touched only in the shard's turns.
	buf, nbuf []byte
	args      [][]byte
	// db is the database the records last SELECTed; nextSelect makes a
	// rewrite's new incr file start by selecting it.
	db         int
	nextSelect bool
	// curSelect: the current file ends in another database than the
	// stream's (0 at start): its next records start with SELECT 0.
	curSelect bool
	snapped   [slots.NumSlots / 64]uint64
	// pend and npend hold what a failed write left unwritten to cur and
	// next: retried before the next record and once a second, so a full
	// disk loses nothing the node acknowledged (writes are refused with
	// MISCONF meanwhile, see Manager.Fault).
	pend, npend []byte
	failing     atomic.Bool // pend or npend is not empty

	mu       sync.Mutex
	cur      File // nil while the first rewrite runs
	next     File // the rewrite's new incr file
	curName  string
	nextName string
	written  uint64 // appends so far
	synced   uint64 // appends covered by a completed fsync
	waiters  []waiter
	retired  []File // closed by the syncer after a last fsync

	size     atomic.Int64 // bytes in cur
	nextSize atomic.Int64
	kick     chan struct{}
	quit     chan struct{}
	done     chan struct{}
}

type waiter struct {
	seq uint64
	fn  func()
}

func newShardLog(m *Manager, id int, cur File, name string, size int64) *shardLog {
	l := &shardLog{m: m, id: id, cur: cur, curName: name,
		kick: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	l.size.Store(size)
	go l.syncLoop()
	return l
}

func (l *shardLog) isSnapped(slot int) bool { return l.snapped[slot>>6]&(1<<(slot&63)) != 0 }

// Append implements engine.AOF: the records lose their framing (each file
// is plain RESP, as Redis's) and are written at once, so a killed process
// loses nothing the kernel has.
func (l *shardLog) Append(recs []byte) {
	rewriting := l.next != nil
	l.buf, l.nbuf = l.buf[:0], l.nbuf[:0]
	if rewriting && l.nextSelect {
		// The new incr file is replayed from DB 0: it starts with the
		// stream's database.
		l.nextSelect = false
		if l.db != 0 {
			l.nbuf = appendCommand(l.nbuf, [][]byte{[]byte("SELECT"), []byte(strconv.Itoa(l.db))})
		}
	}
	if l.curSelect {
		l.curSelect = false
		l.buf = appendCommand(l.buf, [][]byte{[]byte("SELECT"), []byte("0")})
		l.db = 0
	}
	for len(recs) > 0 {
		slot, _, payload, rest, ok := engine.NextRecord(recs)
		if !ok {
			break
		}
		recs = rest
		l.buf = append(l.buf, payload...)
		if slot < 0 {
			l.noteSelect(payload)
		}
		if !rewriting {
			continue
		}
		if slot >= 0 {
			if l.isSnapped(slot) {
				l.nbuf = append(l.nbuf, payload...)
			}
			continue
		}
		l.nbuf = l.slotless(l.nbuf, payload)
	}
	l.flushOut(l.buf, l.nbuf)
	l.mu.Lock()
	l.written++
	l.mu.Unlock()
	if l.m.Always() {
		l.poke()
	}
}

// flushOut writes what earlier failed writes left, then data to cur and
// ndata to next (shard's turn).
func (l *shardLog) flushOut(data, ndata []byte) {
	var err error
	if l.cur != nil {
		l.pend, err = l.writeOut(l.cur, l.pend, data, &l.size)
	}
	if l.next != nil {
		var nerr error
		l.npend, nerr = l.writeOut(l.next, l.npend, ndata, &l.nextSize)
		if err == nil {
			err = nerr
		}
	}
	if err != nil && l.m.Always() {
		// The replies of these records are held until an fsync covers
		// them: none can be released, and nothing can be rolled back.
		l.m.die("Can't recover from AOF write error when the AOF fsync policy is 'always'. Exiting...")
	}
	l.setFailing(len(l.pend) > 0 || len(l.npend) > 0, err)
}

// writeOut appends pend and data to f and returns what is still unwritten.
func (l *shardLog) writeOut(f File, pend, data []byte, size *atomic.Int64) ([]byte, error) {
	if len(pend) == 0 && len(data) == 0 {
		return pend, nil
	}
	if len(pend) > 0 {
		pend = append(pend, data...)
		data = pend
	}
	t0 := time.Now()
	n, err := f.Write(data)
	l.m.g.Latency.Since("aof-write", t0)
	size.Add(int64(n))
	if err == nil {
		return pend[:0], nil
	}
	if len(pend) > 0 {
		return pend[:copy(pend, pend[n:])], err // data is pend
	}
	return append(pend, data[n:]...), err
}

// setFailing records the log's state and tells the manager on a change.
func (l *shardLog) setFailing(on bool, err error) {
	changed := l.failing.Load() != on
	if changed {
		l.failing.Store(on)
		l.m.logFailing(on, err)
	}
	if on || changed {
		l.poke() // the syncer retries in a second, or syncs what is written now
	}
}

// retry writes what failed writes left (a shard turn scheduled by the
// syncer).
func (l *shardLog) retry() {
	if l.failing.Load() {
		l.flushOut(nil, nil)
	}
}

// slotless routes a record without a slot to the new incr file during a
// rewrite: FLUSHSLOTS keeps only the slots already in the new base (a
// flush of a slot snapshotted later is in the base already).
func (l *shardLog) slotless(dst, payload []byte) []byte {
	args, ok := engine.SplitCommand(payload, l.args[:0])
	l.args = args
	if !ok || len(args) == 0 || string(args[0]) != engine.FlushSlots {
		return append(dst, payload...)
	}
	keep := [][]byte{args[0]}
	for _, a := range args[1:] {
		if s, ok := atoiSlot(a); ok && l.isSnapped(s) {
			keep = append(keep, a)
		}
	}
	if len(keep) == 1 {
		return dst
	}
	return appendCommand(dst, keep)
}

// Always implements engine.AOF.
func (l *shardLog) Always() bool { return l.m.Always() }

// AfterSync implements engine.AOF.
func (l *shardLog) AfterSync(fn func()) {
	l.mu.Lock()
	if len(l.waiters) == 0 && (l.synced >= l.written || !l.m.Always()) {
		l.mu.Unlock()
		fn()
		return
	}
	l.waiters = append(l.waiters, waiter{seq: l.written, fn: fn})
	l.mu.Unlock()
	l.poke()
}

func (l *shardLog) poke() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

func (l *shardLog) syncLoop() {
	defer close(l.done)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-l.kick:
			l.syncOnce(false)
		case <-t.C:
			if l.failing.Load() {
				l.m.g.InTurn(l.id, retryLog{log: l})
			}
			if l.m.Policy() == policyEverysec {
				l.syncOnce(false)
			}
		case <-l.quit:
			l.syncOnce(true)
			l.mu.Lock()
			files := []File{l.cur, l.next}
			l.cur, l.next = nil, nil
			l.mu.Unlock()
			for _, f := range files {
				if f != nil {
					_ = f.Close()
				}
			}
			return
		}
	}
}

// syncOnce fsyncs what was written (unless appendfsync no, or
// no-appendfsync-on-rewrite during a rewrite) and releases the waiters
// it covers.
func (l *shardLog) syncOnce(final bool) {
	l.mu.Lock()
	target := l.written
	if l.failing.Load() {
		// Appends up to written are not all in the file: waiting replies
		// wait for the retry that writes them.
		target = l.synced
	}
	// After an fsync error, try again even with nothing new to write.
	need := target > l.synced || l.m.syncErr.Load() != nil
	files := [2]File{l.cur, l.next}
	retired := l.retired
	l.retired = nil
	l.mu.Unlock()
	if l.m.dead.Load() {
		return // a fatal AOF error: the process is exiting, nothing is released
	}
	skip := l.m.Policy() == policyNo || (l.m.noSyncOnRewrite() && l.m.rewriting.Load())
	if need && (final || !skip) {
		t0 := time.Now()
		for _, f := range files {
			if f == nil {
				continue
			}
			err := f.Sync()
			if fsyncFailed(err) && l.m.Always() {
				// Redis exits rather than acknowledge what the disk may
				// not have: the waiting replies stay unsent.
				l.m.die("Can't persist AOF for fsync error when the AOF fsync policy is 'always': " +
					errnoText(err) + ". Exiting...")
				return
			}
			l.m.synced(err)
		}
		if l.m.Policy() == policyAlways {
			l.m.g.Latency.Since("aof-fsync-always", t0)
		}
	}
	for _, f := range retired {
		_ = f.Sync()
		_ = f.Close()
	}
	l.mu.Lock()
	if target > l.synced {
		l.synced = target
	}
	k := 0
	for k < len(l.waiters) && l.waiters[k].seq <= l.synced {
		k++
	}
	ready := append([]waiter(nil), l.waiters[:k]...)
	l.waiters = append(l.waiters[:0], l.waiters[k:]...)
	more := len(l.waiters) > 0
	l.mu.Unlock()
	for _, w := range ready {
		w.fn()
	}
	if more {
		l.poke()
	}
}

// close stops the syncer after a last fsync; waiting replies are released.
func (l *shardLog) close() {
	close(l.quit)
	<-l.done
	l.mu.Lock()
	ws := l.waiters
	l.waiters = nil
	l.mu.Unlock()
	for _, w := range ws {
		w.fn()
	}
}

// ---- rewrite steps, each run in the shard's turn

func (l *shardLog) beginRewrite(f File, name string) {
	l.mu.Lock()
	l.next, l.nextName = f, name
	l.mu.Unlock()
	l.snapped = [slots.NumSlots / 64]uint64{}
	l.nextSize.Store(0)
	l.nextSelect = true
}

// noteSelect follows the database the records select (a slot-less
// record's payload).
func (l *shardLog) noteSelect(payload []byte) {
	if len(payload) < 10 || payload[0] != '*' || payload[1] != '2' {
		return
	}
	args, ok := engine.SplitCommand(payload, l.args[:0])
	l.args = args
	if ok && len(args) == 2 && strings.EqualFold(string(args[0]), "select") {
		if db, err := strconv.Atoi(string(args[1])); err == nil {
			l.db = db
		}
	}
}

// markSnapped records that the slots of this shard in [from, next) are in
// the new base.
func (l *shardLog) markSnapped(from, next, n int) {
	s := from
	if s < l.id {
		s = l.id
	}
	for ; s < next && s < slots.NumSlots; s += n {
		l.snapped[s>>6] |= 1 << (s & 63)
	}
}

// finishRewrite makes the new incr file the current one.
func (l *shardLog) finishRewrite() {
	l.mu.Lock()
	if l.cur != nil {
		l.retired = append(l.retired, l.cur)
	}
	l.cur, l.curName, l.next, l.nextName = l.next, l.nextName, nil, ""
	l.mu.Unlock()
	// What the retired file still lacked is in the new base.
	l.pend, l.npend = l.npend, nil
	l.setFailing(len(l.pend) > 0, nil)
	l.size.Store(l.nextSize.Load())
	l.poke()
}

// abortRewrite drops the new incr file.
func (l *shardLog) abortRewrite() {
	l.mu.Lock()
	if l.next != nil {
		l.retired = append(l.retired, l.next)
	}
	l.next, l.nextName = nil, ""
	l.mu.Unlock()
	l.npend = nil
	l.setFailing(len(l.pend) > 0, nil)
	l.poke()
}

// atoiSlot reads a slot number of a FLUSHSLOTS record (slotd writes them
// in canonical decimal).
func atoiSlot(b []byte) (int, bool) { return slots.ParseSlot(b) }

// appendCommand encodes args as a RESP array.
func appendCommand(b []byte, args [][]byte) []byte {
	b = append(b, '*')
	b = appendInt(b, len(args))
	for _, a := range args {
		b = append(b, '$')
		b = appendInt(b, len(a))
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	return b
}

func appendInt(b []byte, n int) []byte {
	var tmp [20]byte
	i := len(tmp)
	for {
		i--
		tmp[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	b = append(b, tmp[i:]...)
	return append(b, '\r', '\n')
}
