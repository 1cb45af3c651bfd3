package aof

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/rdb"
	"github.com/slotd/slotd/actors/persist"
	"github.com/slotd/slotd/actors/shard"
	"github.com/slotd/slotd/slots"
)

// chunkBudget bounds the bytes one shard turn serializes for a base (whole
// slots at a time), as for BGSAVE: clients wait little between turns.
const chunkBudget = 32 << 10

// Rewrite is BGREWRITEAOF: it starts a rewrite in the background, or
// schedules one while a snapshot is being written.
func (m *Manager) Rewrite() error {
	if m.rewriting.Load() {
		return ErrRewriteInProgress
	}
	if m.p.Busy() {
		m.scheduled.Store(true)
		return ErrScheduled
	}
	if !m.startRewrite() {
		return ErrRewriteInProgress
	}
	return nil
}

// startRewrite runs a rewrite in the background; false if one runs.
func (m *Manager) startRewrite() bool {
	if !m.rewriting.CompareAndSwap(false, true) {
		return false
	}
	m.rwWG.Add(1)
	go func() {
		defer m.rwWG.Done()
		_ = m.doRewrite()
	}()
	return true
}

// rewriteNow rewrites and waits (start-up).
func (m *Manager) rewriteNow() error {
	for !m.rewriting.CompareAndSwap(false, true) {
		m.rwWG.Wait()
	}
	m.rwWG.Add(1)
	defer m.rwWG.Done()
	return m.doRewrite()
}

// doRewrite writes a new base per shard (and, with the AOF on, starts new
// incr files), then switches the manifest. The caller set rewriting.
func (m *Manager) doRewrite() (err error) {
	start := time.Now()
	m.rwStart.Store(start.UnixMilli())
	m.mu.Lock()
	logs := m.logs
	old := m.man
	m.mu.Unlock()
	gen := old.gen() + 1
	defer func() {
		m.rewriting.Store(false)
		m.lastRwSec.Store(int64(time.Since(start).Seconds()))
		m.lastRwOK.Store(err == nil)
		if err != nil {
			m.failures.Add(1)
			m.log.Warn().Err(err).Msg("Background AOF rewrite failed")
			return
		}
		m.failures.Store(0)
		m.rewrites.Add(1)
		m.log.Info().Msg("Background AOF rewrite finished successfully")
	}()
	m.log.Info().Msg("Background append only file rewriting started")
	if err := os.MkdirAll(m.Dir(), 0o755); err != nil {
		return err
	}
	n := m.g.N()
	rdbBase := m.cfg.Bool("aof-use-rdb-preamble")
	errs := make([]error, n)
	sizes := make([]int64, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		var l *shardLog
		if logs != nil {
			l = logs[i]
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sizes[i], errs[i] = m.rewriteShard(i, gen, l, rdbBase)
		}()
	}
	wg.Wait()
	man := manifest{}
	var total int64
	for i := 0; i < n; i++ {
		man.Files = append(man.Files, fileEntry{Name: baseName(m.prefix(), gen, i, rdbBase), Seq: gen, Type: 'b', Shard: i})
		if logs != nil {
			man.Files = append(man.Files, fileEntry{Name: incrName(m.prefix(), gen, i), Seq: gen, Type: 'i', Shard: i})
		}
		total += sizes[i]
	}
	err = errors.Join(errs...)
	if err == nil {
		err = m.writeManifest(man)
	}
	if err != nil {
		if logs != nil {
			m.eachLog(logs, abortStep)
		}
		for _, e := range man.Files {
			if !old.has(e.Name) {
				_ = os.Remove(filepath.Join(m.Dir(), e.Name))
			}
		}
		return err
	}
	if logs != nil {
		m.eachLog(logs, finishStep)
	}
	m.mu.Lock()
	m.man = man
	m.mu.Unlock()
	m.baseSize.Store(total)
	m.rwBase.Store(m.currentSize())
	for _, e := range old.Files {
		if !man.has(e.Name) {
			_ = os.Remove(filepath.Join(m.Dir(), e.Name))
		}
	}
	return nil
}

// eachLog runs the step step makes for every log in the log's shard's
// turn and waits.
func (m *Manager) eachLog(logs []*shardLog, step func(*shardLog, *sync.WaitGroup) shard.Turn) {
	var wg sync.WaitGroup
	for i, l := range logs {
		wg.Add(1)
		m.g.InTurn(i, step(l, &wg))
	}
	waitTimeout(&wg, 10*time.Second)
}

// The steps the AOF runs in a shard's turn (shard.InTurn): switching a
// shard's log files must not run beside the shard's writes.
type (
	// beginRewrite makes the log append to incr (named name) too, from
	// the shard's next write on; done is closed after.
	beginRewrite struct {
		log  *shardLog
		incr File
		name string
		done chan struct{}
	}
	// finishRewrite makes the rewrite's incr file the log's only file.
	finishRewrite struct {
		log *shardLog
		wg  *sync.WaitGroup
	}
	// abortRewrite drops the rewrite's incr file.
	abortRewrite struct {
		log *shardLog
		wg  *sync.WaitGroup
	}
	// retryLog retries the log's failed writes.
	retryLog struct{ log *shardLog }
)

func (s beginRewrite) RunInTurn()  { s.log.beginRewrite(s.incr, s.name); close(s.done) }
func (s finishRewrite) RunInTurn() { s.log.finishRewrite(); s.wg.Done() }
func (s abortRewrite) RunInTurn()  { s.log.abortRewrite(); s.wg.Done() }
func (s retryLog) RunInTurn()      { s.log.retry() }

func finishStep(l *shardLog, wg *sync.WaitGroup) shard.Turn { return finishRewrite{log: l, wg: wg} }
func abortStep(l *shardLog, wg *sync.WaitGroup) shard.Turn  { return abortRewrite{log: l, wg: wg} }

// rewriteShard writes shard i's new base (and opens its new incr file
// when l is not nil) and returns the base's size.
func (m *Manager) rewriteShard(i int, gen int64, l *shardLog, rdbBase bool) (int64, error) {
	dir := m.Dir()
	path := filepath.Join(dir, baseName(m.prefix(), gen, i, rdbBase))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return 0, fmt.Errorf("opening the AOF base %s: %w", path, err)
	}
	defer f.Close()
	if l != nil {
		name := incrName(m.prefix(), gen, i)
		incr, err := m.openFile(filepath.Join(dir, name), os.O_CREATE|os.O_WRONLY|os.O_TRUNC|os.O_APPEND, 0o644)
		if err != nil {
			return 0, fmt.Errorf("opening the AOF incr file %s: %w", name, err)
		}
		done := make(chan struct{})
		m.g.InTurn(i, beginRewrite{log: l, incr: incr, name: name, done: done})
		select {
		case <-done:
		case <-m.stop:
			_ = incr.Close()
			return 0, errors.New("the node is stopping")
		}
	}
	w := bufio.NewWriterSize(f, 256<<10)
	var size int64
	if rdbBase {
		size, err = m.writeRDBBase(w, i, l)
	} else {
		size, err = m.writeRESPBase(w, i, l)
	}
	if err != nil {
		return 0, err
	}
	if err := w.Flush(); err != nil {
		return 0, err
	}
	if err := f.Sync(); err != nil {
		return 0, err
	}
	return size, nil
}

// writeRDBBase writes shard i's slots as an RDB file, marking them
// snapped in l (when not nil) in the turn that serialized them.
func (m *Manager) writeRDBBase(w *bufio.Writer, i int, l *shardLog) (int64, error) {
	hdr := persist.AppendHeader(nil, 0, true)
	crc := rdb.CRC64(0, hdr)
	size := int64(len(hdr))
	if _, err := w.Write(hdr); err != nil {
		return 0, err
	}
	opt := rdb.Options{Compress: m.cfg.Bool("rdbcompression"), ListFill: int(m.cfg.Int("list-max-listpack-size"))}
	err := m.walkShard(i, l, func(from int, reply func(baseChunk)) {
		m.g.SaveSlots(i, from, chunkBudget, opt, func(ch engine.SaveChunk) { reply(baseChunk{ch.B, ch.Next, ch.Err, ch.Keys}) })
	}, func(b []byte) error {
		crc = rdb.CRC64(crc, b)
		size += int64(len(b))
		_, err := w.Write(b)
		return err
	})
	if err != nil {
		return 0, err
	}
	tail, _ := persist.AppendFooter(nil, crc)
	size += int64(len(tail))
	_, err = w.Write(tail)
	return size, err
}

// writeRESPBase writes shard i's slots as commands (RPUSH/HSET/SADD/ZADD
// in chunks, SET, PEXPIREAT), as Redis does with aof-use-rdb-preamble no.
func (m *Manager) writeRESPBase(w *bufio.Writer, i int, l *shardLog) (int64, error) {
	var size int64
	err := m.walkShard(i, l, func(from int, reply func(baseChunk)) {
		m.g.RecordSlots(i, from, chunkBudget, func(ch engine.RecordChunk) { reply(baseChunk{b: ch.B, next: ch.Next, err: ch.Err}) })
	}, func(recs []byte) error {
		for len(recs) > 0 {
			_, _, payload, rest, ok := engine.NextRecord(recs)
			if !ok {
				break
			}
			recs = rest
			size += int64(len(payload))
			if _, err := w.Write(payload); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return size, nil
}

// baseChunk is one shard turn's part of a base, in either form: the bytes,
// the next slot to ask for, and the panic that stopped serialization.
type baseChunk struct {
	b    []byte
	next int
	err  any
	keys int // keys in b, when known (rdb-key-save-delay)
}

// walkShard asks shard i for its slots a chunk at a time (fetch asks from
// slot from on; the shard calls reply in its turn), marks each chunk's
// slots snapped in l (when not nil) in that same turn, and hands the bytes
// to write. It stops on cancellation, node stop or a serialization error.
func (m *Manager) walkShard(i int, l *shardLog, fetch func(from int, reply func(baseChunk)),
	write func([]byte) error) error {
	n := m.g.N()
	replies := make(chan baseChunk, 1)
	for from := 0; from < slots.NumSlots; {
		if m.cancel.Load() {
			return errors.New("rewrite cancelled")
		}
		start := from
		fetch(from, func(ch baseChunk) {
			if l != nil && ch.err == nil {
				l.markSnapped(start, ch.next, n)
			}
			replies <- ch
		})
		var ch baseChunk
		select {
		case ch = <-replies:
		case <-m.stop:
			return errors.New("the node is stopping")
		}
		if ch.err != nil {
			return fmt.Errorf("serializing shard %d: %v", i, ch.err)
		}
		if err := write(ch.b); err != nil {
			return err
		}
		persist.KeyDelay(m.cfg.Int("rdb-key-save-delay"), ch.keys)
		from = ch.next
	}
	return nil
}

// writeManifest replaces the manifest atomically: temp file, fsync,
// rename, fsync of the directory.
func (m *Manager) writeManifest(man manifest) error {
	dir := m.Dir()
	tmp := filepath.Join(dir, "temp-"+m.prefix()+".manifest")
	if err := os.WriteFile(tmp, man.encode(), 0o644); err != nil {
		return err
	}
	f, err := os.Open(tmp)
	if err == nil {
		err = f.Sync()
		_ = f.Close()
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, m.manifestPath()); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// deleteOrphans removes files of this AOF's naming that the manifest does
// not list (left by a rewrite that a crash interrupted).
func (m *Manager) deleteOrphans() {
	ents, err := os.ReadDir(m.Dir())
	if err != nil {
		return
	}
	p := m.prefix() + "."
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, p) || name == m.prefix()+".manifest" || m.man.has(name) {
			continue
		}
		if strings.HasSuffix(name, ".base.rdb") || strings.HasSuffix(name, ".incr.aof") {
			m.log.Info().Msgf("Removing the history file %s in the background", name)
			_ = os.Remove(filepath.Join(m.Dir(), name))
		}
	}
}
