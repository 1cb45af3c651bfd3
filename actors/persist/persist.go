// Package persist writes and loads RDB snapshots (dump.rdb) in Redis 7.0's
// file format (version 10), so a dataset moves between redis-server and
// slotd by copying the file.
//
// A save asks each shard actor in turn for its keys, a few slots per actor
// turn (engine.Group.SaveSlots): clients keep being served between turns,
// and every slot is captured at one instant. The file as a whole is not one
// point in time across shards or slots — unlike a forked Redis child — but
// each slot is consistent, which is what cluster operations (migration,
// per-slot recovery) rely on. The file is written to a temporary name in
// dir, fsync'd, renamed over dbfilename, and the directory fsync'd.
//
// Loading reads the whole file into memory, checks its CRC-64 and hands
// each shard its keys in batches before the node accepts clients.
package persist

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/rdb"
	"github.com/slotd/slotd/actors/shard"
	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/config"
	"github.com/slotd/slotd/slots"
)

// ErrInProgress is returned when a save is asked for while one runs.
var ErrInProgress = command.ErrBGSaveInProgress

// chunkBudget bounds the bytes one shard turn serializes (whole slots
// are always taken, so a huge slot overshoots it): about a millisecond of
// work per turn, so clients of the shard wait little during a BGSAVE.
const chunkBudget = 32 << 10

// Manager owns the snapshot state of one node.
type Manager struct {
	g   *shard.Group
	cfg *config.Config
	log zerolog.Logger

	mu      sync.Mutex
	running bool // a save (SAVE or BGSAVE) is in progress

	lastSave       atomic.Int64 // unix seconds of the last successful save (or start-up)
	lastOK         atomic.Bool
	dirtyAtSave    atomic.Int64 // shard dirty counter at the last successful save start
	bgStart        atomic.Int64 // unix ms the running background save started, 0 if none
	lastBgDuration atomic.Int64 // seconds, -1 before the first
	bgInProgress   atomic.Bool
	saves          atomic.Int64
	loading        atomic.Bool
	// AOF is the append-only file (actors/aof), set by the node; nil
	// before it is wired.
	AOF AOF
	// ReplState, when set, tells the snapshot which replication id and
	// per-shard offsets its data matches (a frozen replica's final
	// snapshot; ok false otherwise); OnReplState gets them back from a
	// loaded dump.rdb. Both are set by the node before Load.
	ReplState   func() (id string, offsets []int64, ok bool)
	OnReplState func(id string, offsets []int64)
	// Freeze, when set, stops replication before the final snapshot and
	// returns what resumes it (FinalSave).
	Freeze func() (resume func())
	// OnFault runs when Fault may have changed (set by the node).
	OnFault   func()
	loadedAux map[string]string
	lastKeys  atomic.Int64
	stop      chan struct{}
	stopOnce  sync.Once
}

// New returns a manager for the shards of a node.
func New(g *shard.Group, cfg *config.Config, log zerolog.Logger) *Manager {
	m := &Manager{g: g, cfg: cfg, log: log, stop: make(chan struct{})}
	m.lastSave.Store(time.Now().Unix())
	m.lastOK.Store(true)
	m.lastBgDuration.Store(-1)
	return m
}

// Path is the snapshot file: dir/dbfilename.
func (m *Manager) Path() string {
	return filepath.Join(m.cfg.String("dir"), m.cfg.String("dbfilename"))
}

// Dirty is the number of changes since the last successful save.
func (m *Manager) Dirty() int64 { return m.g.Dirty() - m.dirtyAtSave.Load() }

// LastSave is the unix time of the last successful save.
func (m *Manager) LastSave() int64 { return m.lastSave.Load() }

// Loading reports whether a snapshot is being loaded.
func (m *Manager) Loading() bool { return m.loading.Load() }

// Save writes a snapshot and waits for it. It fails with ErrInProgress
// while another save runs.
func (m *Manager) Save() error {
	if !m.begin() {
		return ErrInProgress
	}
	return m.run(false)
}

// BGSave starts a snapshot in the background; done (may be nil) gets its
// result.
func (m *Manager) BGSave(done func(error)) error {
	if !m.begin() {
		return ErrInProgress
	}
	m.bgInProgress.Store(true)
	m.bgStart.Store(time.Now().UnixMilli())
	go func() {
		err := m.run(true)
		if done != nil {
			done(err)
		}
	}()
	return nil
}

// SaveWait is Save after waiting for a running save to end (shutdown).
func (m *Manager) SaveWait() error {
	for {
		err := m.Save()
		if err != ErrInProgress {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// FinalSave is the snapshot taken at shutdown: replication is frozen first
// (a replica's snapshot then records exactly where it stands, see
// ReplState); if the save fails, the node keeps running and replication
// resumes.
func (m *Manager) FinalSave() error {
	var resume func()
	if m.Freeze != nil {
		resume = m.Freeze()
	}
	err := m.SaveWait()
	if err != nil && resume != nil {
		resume()
	}
	return err
}

// InProgress reports whether a background save runs.
func (m *Manager) InProgress() bool { return m.bgInProgress.Load() }

func (m *Manager) begin() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.running {
		return false
	}
	m.running = true
	return true
}

func (m *Manager) run(bg bool) error {
	start := time.Now()
	dirty := m.g.Dirty()
	err := m.write()
	m.mu.Lock()
	m.running = false
	m.mu.Unlock()
	if bg {
		m.lastBgDuration.Store(int64(time.Since(start).Seconds()))
		m.bgStart.Store(0)
		m.bgInProgress.Store(false)
	}
	// Like Redis: only a failed background save marks the status (and
	// refuses writes); any successful save clears it.
	if (bg || err == nil) && m.lastOK.Swap(err == nil) != (err == nil) {
		m.fault()
	}
	if err != nil {
		m.log.Warn().Err(err).Msg("Failed saving the DB")
		return err
	}
	m.dirtyAtSave.Store(dirty)
	m.lastSave.Store(time.Now().Unix())
	m.saves.Add(1)
	if bg {
		m.log.Info().Msg("Background saving terminated with success")
	} else {
		m.log.Info().Msg("DB saved on disk")
	}
	return nil
}

// write produces the file.
func (m *Manager) write() error {
	path := m.Path()
	tmp := filepath.Join(filepath.Dir(path), "temp-"+strconv.Itoa(os.Getpid())+"-"+
		strconv.FormatInt(time.Now().UnixNano(), 36)+".rdb")
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("failed opening the temp RDB file %s (in server root dir %s) for saving: %w",
			filepath.Base(tmp), filepath.Dir(tmp), err)
	}
	ok := false
	defer func() {
		if !ok {
			_ = f.Close()
			t0 := time.Now()
			_ = os.Remove(tmp)
			m.g.Latency.Since("rdb-unlink-temp-file", t0)
		}
	}()
	cw := &crcWriter{w: bufio.NewWriterSize(f, 1<<20)}
	if err := m.encode(cw); err != nil {
		return err
	}
	if err := cw.w.Flush(); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	ok = true
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// crcWriter writes while keeping the file's CRC-64.
type crcWriter struct {
	w   *bufio.Writer
	crc uint64
	err error
}

func (c *crcWriter) write(b []byte) {
	if c.err != nil {
		return
	}
	c.crc = rdb.CRC64(c.crc, b)
	_, c.err = c.w.Write(b)
}

func (m *Manager) encode(cw *crcWriter) error {
	compress := m.cfg.Bool("rdbcompression")
	opt := rdb.Options{Compress: compress, ListFill: int(m.cfg.Int("list-max-listpack-size"))}
	var keys int64
	for s := 0; s < slots.NumSlots; s++ {
		keys += m.g.SlotKeys(s)
	}
	// The sizes are hints for the loader's table sizing, read before the
	// walk; the keys written may differ a little.
	b := AppendHeader(nil, keys, false)
	if m.ReplState != nil {
		if id, offs, ok := m.ReplState(); ok {
			b = appendReplAux(b, id, offs)
		}
	}
	// Function libraries go before the keys, as in Redis.
	b = m.g.Functions().AppendRecords(b, compress)
	cw.write(b)

	reply := make(chan engine.SaveChunk, 1)
	var total, skipped int
	for i := 0; i < m.g.N(); i++ {
		for from := 0; from < slots.NumSlots; {
			m.g.SaveSlots(i, from, chunkBudget, opt, func(ch engine.SaveChunk) { reply <- ch })
			var ch engine.SaveChunk
			select {
			case ch = <-reply:
			case <-m.stop:
				return errors.New("the node is stopping")
			}
			if ch.Err != nil {
				return fmt.Errorf("serializing shard %d: %v", i, ch.Err)
			}
			cw.write(ch.B)
			if cw.err != nil {
				return cw.err
			}
			KeyDelay(m.cfg.Int("rdb-key-save-delay"), ch.Keys)
			total += ch.Keys
			skipped += ch.Skipped
			from = ch.Next
		}
	}
	if skipped > 0 {
		m.log.Warn().Int("keys", skipped).Msg("keys of types RDB saving does not support were left out")
	}
	m.lastKeys.Store(int64(total))
	cw.write([]byte{rdb.OpEOF})
	sum := cw.crc
	var tail [8]byte
	for j := range tail {
		tail[j] = byte(sum >> (8 * j))
	}
	cw.write(tail[:])
	return cw.err
}

// errBgsave is Redis's refusal of writes after a failed background save.
const errBgsave = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. " +
	"Commands that may modify the data set are disabled, because this instance is configured to report errors " +
	"during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs " +
	"for details about the RDB error."

// Fault is the error that refuses writes after a failed save while save
// rules are set and stop-writes-on-bgsave-error is yes; "" otherwise.
func (m *Manager) Fault() string {
	if m.lastOK.Load() || !m.cfg.Bool("stop-writes-on-bgsave-error") || len(m.cfg.SaveParams()) == 0 {
		return ""
	}
	return errBgsave
}

func (m *Manager) fault() {
	if f := m.OnFault; f != nil {
		f()
	}
}

// Info returns the INFO persistence fields in Redis's order.
func (m *Manager) Info() [][2]string {
	b := func(v bool) string {
		if v {
			return "1"
		}
		return "0"
	}
	status := "ok"
	if !m.lastOK.Load() {
		status = "err"
	}
	cur := int64(-1)
	if s := m.bgStart.Load(); s != 0 {
		cur = (time.Now().UnixMilli() - s) / 1000
	}
	out := [][2]string{
		{"loading", b(m.loading.Load())},
		{"async_loading", "0"},
		{"current_cow_peak", "0"},
		{"current_cow_size", "0"},
		{"current_cow_size_age", "0"},
		{"current_fork_perc", "0.00"},
		{"current_save_keys_processed", "0"},
		{"current_save_keys_total", "0"},
		{"rdb_changes_since_last_save", strconv.FormatInt(m.Dirty(), 10)},
		{"rdb_bgsave_in_progress", b(m.bgInProgress.Load())},
		{"rdb_last_save_time", strconv.FormatInt(m.lastSave.Load(), 10)},
		{"rdb_last_bgsave_status", status},
		{"rdb_last_bgsave_time_sec", strconv.FormatInt(m.lastBgDuration.Load(), 10)},
		{"rdb_current_bgsave_time_sec", strconv.FormatInt(cur, 10)},
		{"rdb_saves", strconv.FormatInt(m.saves.Load(), 10)},
		{"rdb_last_cow_size", "0"},
		{"rdb_last_load_keys_expired", "0"},
		{"rdb_last_load_keys_loaded", strconv.FormatInt(m.lastKeys.Load(), 10)},
	}
	return append(out, m.aofInfo()...)
}

// Start runs the save rules (save <secs> <changes>): a background save
// starts when, for any rule, at least changes writes happened and secs
// seconds passed since the last successful save (after a failed one, Redis
// waits 5 s before retrying; so does this).
func (m *Manager) Start() {
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		lastTry := time.Time{}
		for {
			select {
			case <-m.stop:
				return
			case <-t.C:
			}
			if m.InProgress() || (!m.lastOK.Load() && time.Since(lastTry) < 5*time.Second) {
				continue
			}
			dirty, since := m.Dirty(), time.Now().Unix()-m.lastSave.Load()
			for _, p := range m.cfg.SaveParams() {
				if dirty >= p.Changes && since > p.Seconds && dirty > 0 {
					m.log.Info().Msgf("%d changes in %d seconds. Saving...", p.Changes, p.Seconds)
					lastTry = time.Now()
					_ = m.BGSave(nil)
					break
				}
			}
		}
	}()
}

// Stop ends the save-rule ticker.
func (m *Manager) Stop() { m.stopOnce.Do(func() { close(m.stop) }) }

// ShouldSaveOnShutdown reports whether save rules exist (a plain
// SHUTDOWN or SIGTERM saves then).
func (m *Manager) ShouldSaveOnShutdown() bool { return len(m.cfg.SaveParams()) > 0 }
