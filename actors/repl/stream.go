package repl

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/persist"
	"github.com/slotd/slotd/actors/trace"
	"github.com/slotd/slotd/netio/replproto"
)

// A replica's side of the stream: frames read from the primary become
// batches for the shard actors.
//
// A full sync is spooled first, as Redis receives the RDB before it loads
// it: the frames of the snapshot (and the writes streamed after it) are
// kept until every shard's snapshot is complete, while the replica goes on
// serving its old data; only then is the old data dropped and the spool
// applied, with INFO loading:1 and clients answered LOADING. A transfer
// that fails leaves the old data untouched. repl-diskless-load picks where
// the spool lives: disabled (the default) a temporary file in dir, swapdb
// memory (INFO async_loading:1 while it fills); on-empty-db applies the
// frames as they come to a node without data (as Redis loads from the
// socket into an empty dataset) and spools to a file otherwise.

// applier turns frames into shard batches; one per session.
type applier struct {
	l       *link
	n       int // the primary's shard count
	same    bool
	batches []*engine.ApplyBatch
	read    []int64
	pending int
	synced  int
	argBuf  [][]byte
	chunk   []byte
	lastKey string // key of the last snapshot record (key-load-delay)
	// db is the database each of the primary's streams last SELECTed;
	// snapshot frames select their own (snapDB, from 0 in each frame).
	db     []int
	loaded int64 // snapshot bytes applied (events points, LoadEvents)
}

func (l *link) newApplier(n int) *applier {
	m := l.m.shards.N()
	a := &applier{l: l, n: n, same: n == m, batches: make([]*engine.ApplyBatch, m), read: l.readVec()}
	if len(l.streamDB) != n {
		l.streamDB = make([]int, n)
	}
	a.db = l.streamDB
	if len(a.read) != n {
		a.read = make([]int64, n)
	}
	return a
}

func (a *applier) flush() {
	for j, b := range a.batches {
		if b == nil {
			continue
		}
		a.l.sem <- struct{}{}
		a.l.m.shards.Apply(j, b)
		a.batches[j] = nil
	}
	a.pending = 0
	a.l.mu.Lock()
	a.l.read = append(a.l.read[:0], a.read...)
	a.l.progressed()
	a.l.mu.Unlock()
}

func (a *applier) batchFor(j int) *engine.ApplyBatch {
	b := a.batches[j]
	if b == nil {
		b = a.l.newBatch()
		a.batches[j] = b
	}
	return b
}

// payloadBuf returns room for a payload of size bytes. Payloads are carved
// from shared chunks: records point into them until the shards applied
// them, and a chunk is garbage once no batch refers to it.
func (a *applier) payloadBuf(size int) []byte {
	if len(a.chunk)+size > cap(a.chunk) {
		a.chunk = make([]byte, 0, max(size, 256<<10))
	}
	p := a.chunk[len(a.chunk) : len(a.chunk)+size : len(a.chunk)+size]
	a.chunk = a.chunk[:len(a.chunk)+size]
	return p
}

// loadedBytes counts n snapshot bytes loaded. Redis serves clients during
// a load once per loading-process-events-interval-bytes loaded; in between
// they wait (netio/loading.go).
func (a *applier) loadedBytes(n int) {
	iv := max(a.l.m.loadInterval.Int(), 1)
	before := a.loaded / iv
	a.loaded += int64(n)
	if a.loaded/iv > before {
		a.l.m.srv.LoadEvents()
	}
}

// frame applies one frame.
func (a *applier) frame(kind byte, i int, off int64, payload []byte) error {
	l := a.l
	switch kind {
	case frameStream, frameSnapshot:
		if i >= a.n {
			return fmt.Errorf("frame for shard %d of %d", i, a.n)
		}
		stream := kind == frameStream
		if stream && trace.Enabled("repl") {
			// The primary's record of the turn that wrote these records
			// has the same id (trace.StreamTrace).
			trace.Add(trace.Record{Kind: "repl", ID: "link", Sender: l.addr(),
				Message: fmt.Sprintf("apply S from %s shard=%d offset=%d bytes=%d", l.addr(), i, off, len(payload)),
				TraceID: trace.StreamTrace(i, off)})
		}
		recs := payload
		snapDB := 0
		dbOf := &snapDB
		if stream {
			dbOf = &a.db[i]
		}
		for len(recs) > 0 {
			slot, rec, body, rest, ok := engine.NextRecord(recs)
			if !ok {
				return errors.New("truncated record")
			}
			recs = rest
			a.argBuf, ok = engine.SplitCommand(body, a.argBuf[:0])
			if !ok || len(a.argBuf) == 0 {
				return errors.New("bad record")
			}
			if !stream && len(a.argBuf) > 1 && string(a.argBuf[1]) != a.lastKey {
				if delay := l.m.keyLoadDelay.Int(); delay != 0 {
					a.lastKey = string(a.argBuf[1])
					persist.KeyDelay(delay, 1)
				}
			}
			var raw []byte
			if stream {
				raw = rec
			} else {
				a.loadedBytes(len(rec))
			}
			if slot < 0 {
				switch name := string(a.argBuf[0]); {
				case strings.EqualFold(name, engine.FlushSlots):
					l.flushSlots(a.argBuf[1:], stream, *dbOf, a.batchFor)
				case strings.EqualFold(name, "select") && len(a.argBuf) == 2:
					db, err := strconv.Atoi(string(a.argBuf[1]))
					if err != nil || db < 0 || db >= l.m.shards.Databases() {
						return fmt.Errorf("the primary selects DB %q, out of the %d databases of this node",
							a.argBuf[1], l.m.shards.Databases())
					}
					*dbOf = db
					if stream && a.same {
						b := a.batchFor(i)
						b.Cmds = append(b.Cmds, engine.Replicated{Select: true, DB: db, Slot: -1, Raw: raw})
					}
				case strings.EqualFold(name, "swapdb") && len(a.argBuf) == 3:
					x, err1 := strconv.Atoi(string(a.argBuf[1]))
					y, err2 := strconv.Atoi(string(a.argBuf[2]))
					if err1 != nil || err2 != nil {
						return errors.New("bad SWAPDB record")
					}
					// Each of the primary's shards swaps its part: the same
					// shard here does, or every shard when the counts differ.
					for j := range a.batches {
						if a.same && j != i || !a.same && i != 0 {
							continue
						}
						rc := engine.Replicated{Swap: true, DB: x, SwapWith: y, Slot: -1}
						if a.same {
							rc.Raw = raw
						}
						b := a.batchFor(j)
						b.Cmds = append(b.Cmds, rc)
					}
				default:
					l.m.applySetSlot(a.argBuf) // setslot.go
				}
				continue
			}
			b := a.batchFor(slot % len(a.batches))
			b.Cmds = append(b.Cmds, engine.Replicated{Spec: l.spec(a.argBuf), Payload: body, Slot: slot, Raw: raw,
				DB: *dbOf})
		}
		if a.same {
			a.batchFor(i).Offset = off
		}
		a.read[i] = off
		a.pending += len(payload)

	case frameSynced:
		a.synced++
		if a.synced == a.n {
			a.flush()
			return l.m.syncDone(l)
		}
	case framePing:
	case frameGetAck:
		a.flush()
		select {
		case l.ackNow <- struct{}{}:
		default:
		}
	case framePublish:
		_, _, body, _, ok := engine.NextRecord(payload)
		if args, ok2 := engine.SplitCommand(body, nil); ok && ok2 && len(args) == 3 {
			sharded := strings.EqualFold(string(args[0]), "SPUBLISH")
			if sharded {
				l.m.srv.DeliverSPublish(args[1], args[2])
			} else {
				l.m.srv.DeliverPublish(args[1], args[2])
			}
			l.m.Publish(sharded, args[1], args[2])
		}
	default:
		return fmt.Errorf("unknown frame kind %q", kind)
	}
	return nil
}

// spool keeps the frames of a full sync until the snapshot is complete.
type spool struct {
	mem    []byte
	file   *os.File
	w      *bufio.Writer
	synced int
}

// newSpool opens a spool in memory, or in a temporary file in dir.
func newSpool(inMemory bool, dir string) (*spool, error) {
	if inMemory {
		return &spool{}, nil
	}
	f, err := os.CreateTemp(dir, fmt.Sprintf("temp-%d.*.sync", os.Getpid()))
	if err != nil {
		return nil, err
	}
	return &spool{file: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

func (sp *spool) add(hdr, payload []byte) error {
	if sp.file == nil {
		sp.mem = append(append(sp.mem, hdr...), payload...)
		return nil
	}
	if _, err := sp.w.Write(hdr); err != nil {
		return err
	}
	_, err := sp.w.Write(payload)
	return err
}

// reader rewinds the spool for reading.
func (sp *spool) reader() (*bufio.Reader, error) {
	if sp.file == nil {
		return bufio.NewReaderSize(&memReader{b: sp.mem}, 256<<10), nil
	}
	if err := sp.w.Flush(); err != nil {
		return nil, err
	}
	if _, err := sp.file.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return bufio.NewReaderSize(sp.file, 1<<20), nil
}

// discard frees the spool (its file is removed).
func (sp *spool) discard() {
	if sp.file != nil {
		name := sp.file.Name()
		_ = sp.file.Close()
		_ = os.Remove(name)
		sp.file = nil
	}
	sp.mem = nil
}

type memReader struct{ b []byte }

func (r *memReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

// readFrame reads one frame; the payload lands in buf(size).
func readFrame(r *bufio.Reader, hdr []byte, buf func(int) []byte) (kind byte, i int, off int64, payload []byte, err error) {
	if _, err = io.ReadFull(r, hdr); err != nil {
		return
	}
	var size int
	kind, i, off, size = parseFrameHdr(hdr)
	if size > 1<<30 {
		err = fmt.Errorf("frame of %d bytes", size)
		return
	}
	payload = buf(size)
	_, err = io.ReadFull(r, payload)
	return
}

// stream reads frames and hands their records to the shards; sp, when not
// nil, spools a full sync until its snapshot is complete.
func (l *link) stream(conn net.Conn, r *bufio.Reader, n int, ml replproto.MasterLink, sp *spool) error {
	defer func() {
		if sp != nil { // the transfer failed: the old data stays
			sp.discard()
			l.asyncLoading.Store(false)
			l.m.updateGate()
		}
	}()
	a := l.newApplier(n)
	timeout := time.Duration(l.m.cfg.Int("repl-timeout")) * time.Second
	var hdr [frameHdr]byte
	var scratch []byte
	scratchBuf := func(size int) []byte {
		if cap(scratch) < size {
			scratch = make([]byte, size)
		}
		return scratch[:size]
	}
	for {
		if l.stopped() {
			return errHalted
		}
		_ = conn.SetReadDeadline(time.Now().Add(timeout))
		buf := a.payloadBuf
		if sp != nil {
			buf = scratchBuf // copied into the spool
		}
		kind, i, off, payload, err := readFrame(r, hdr[:], buf)
		if err != nil {
			return err
		}
		now := time.Now().UnixMilli()
		l.lastIO.Store(now)
		ml.Touch(now, nil)
		if kind == frameSnapshot {
			l.syncRead.Add(int64(len(payload)))
		}
		if sp != nil && kind != framePing && kind != framePublish {
			if err := sp.add(hdr[:], payload); err != nil {
				return fmt.Errorf("writing the sync spool: %w", err)
			}
			if sp.file != nil {
				l.spooled.Add(int64(len(hdr) + len(payload)))
			}
			if kind == frameSynced {
				if sp.synced++; sp.synced == n {
					if err := l.load(a, sp); err != nil {
						return err
					}
					sp.discard()
					sp = nil
				}
			}
			continue
		}
		if err := a.frame(kind, i, off, payload); err != nil {
			return err
		}
		if r.Buffered() < frameHdr || a.pending >= applyBatchBytes {
			a.flush()
		}
	}
}

// load applies a complete spooled full sync: the old data goes, then the
// spool's frames are applied like live ones.
func (l *link) load(a *applier, sp *spool) error {
	if err := l.m.startLoad(l); err != nil {
		return err
	}
	r, err := sp.reader()
	if err != nil {
		return fmt.Errorf("reading the sync spool: %w", err)
	}
	var hdr [frameHdr]byte
	for {
		if l.stopped() {
			return errHalted
		}
		kind, i, off, payload, err := readFrame(r, hdr[:], a.payloadBuf)
		if errors.Is(err, io.EOF) {
			a.flush()
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the sync spool: %w", err)
		}
		if err := a.frame(kind, i, off, payload); err != nil {
			return err
		}
		if r.Buffered() < frameHdr || a.pending >= applyBatchBytes {
			a.flush()
		}
	}
}

// spoolFor decides how a full sync is received (repl-diskless-load): nil
// applies it as it arrives.
func (l *link) spoolFor() (*spool, error) {
	switch l.m.cfg.String("repl-diskless-load") {
	case "swapdb":
		return newSpool(true, "")
	case "on-empty-db":
		if l.m.shards.NextNonEmpty(0) < 0 {
			return nil, nil
		}
	}
	return newSpool(false, filepath.Clean(l.m.cfg.String("dir")))
}
