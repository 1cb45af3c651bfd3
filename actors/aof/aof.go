// Package aof is slotd's append-only file. Each shard actor appends the
// records of its writes (its replication stream: deterministic rewrites
// of relative TTLs and random picks, DELs of expired keys) as RESP
// commands to its own incr file, so shards never contend on a file. A
// manifest in appenddirname (manifest.go) ties the files together: per
// shard, a base file (an RDB file of the shard's slots) and incr files
// replayed after it.
//
// appendfsync always holds each actor turn's replies until an fsync
// covering its records completes (group commit, log.go); everysec fsyncs
// once a second in the background; no leaves it to the kernel. Records
// are written with write(2) in the turn that made them, so a killed
// process loses nothing the kernel already has.
//
// A rewrite (BGREWRITEAOF, automatic growth, CONFIG SET appendonly yes)
// snapshots each shard's slots into a new base a few slots per actor turn
// while clients are served; records of slots already snapshotted also go
// to a new incr file, and once every shard is done the new manifest
// replaces the old one atomically (rewrite.go). Start-up replays the files
// in parallel per shard before clients are accepted (load.go).
package aof

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/slotd/slotd/actors/persist"
	"github.com/slotd/slotd/actors/shard"
	"github.com/slotd/slotd/netio/config"
)

// Fsync policies (appendfsync).
const (
	policyEverysec int32 = iota
	policyAlways
	policyNo
)

// Replies of BGREWRITEAOF.
var (
	ErrRewriteInProgress = errors.New("ERR Background append only file rewriting already in progress")
	// ErrScheduled is not an error for the client: the rewrite starts once
	// the running snapshot ends.
	ErrScheduled = errors.New("Background append only file rewriting scheduled")
)

// Manager owns a node's append-only file.
type Manager struct {
	g   *shard.Group
	cfg *config.Config
	log zerolog.Logger
	p   *persist.Manager
	// endDB is the database each shard's incr file ended in when loaded.
	endDB map[int]int

	mu   sync.Mutex // on, logs, man
	on   bool
	logs []*shardLog
	man  manifest

	policy    atomic.Int32
	rewriting atomic.Bool
	scheduled atomic.Bool
	cancel    atomic.Bool
	rwWG      sync.WaitGroup
	rwStart   atomic.Int64 // unix ms, 0 when none
	lastRwSec atomic.Int64
	lastRwOK  atomic.Bool
	rewrites  atomic.Int64
	failures  atomic.Int64
	// Write and fsync errors (MISCONF while either lasts).
	failingLogs atomic.Int32
	writeErr    atomic.Pointer[string] // the last write error, as strerror words
	syncErr     atomic.Pointer[string]
	// OnFault runs when Fault may have changed (set before Open).
	OnFault func()
	// open opens an incr file (SetFileOpener); fatal ends the process
	// after an error it cannot survive (SetFatal); dead: fatal was called.
	open  atomic.Pointer[Opener]
	fatal atomic.Pointer[func(msg string)]
	dead  atomic.Bool

	baseSize  atomic.Int64 // bytes of the current bases
	rwBase    atomic.Int64 // AOF size right after the last rewrite
	bgRewrite chan struct{}

	stop     chan struct{}
	stopOnce sync.Once
}

// New returns the manager of g's AOF. It does nothing until Open.
func New(g *shard.Group, cfg *config.Config, log zerolog.Logger, p *persist.Manager) *Manager {
	m := &Manager{g: g, cfg: cfg, log: log, p: p, stop: make(chan struct{}), bgRewrite: make(chan struct{}, 1)}
	m.lastRwSec.Store(-1)
	m.lastRwOK.Store(true)
	m.setPolicy(cfg.String("appendfsync"))
	cfg.OnChange("appendfsync", m.setPolicy)
	cfg.OnApply("appendonly", func(v string) error {
		if v == "yes" {
			return m.Enable()
		}
		m.Disable()
		return nil
	})
	return m
}

func (m *Manager) setPolicy(v string) {
	switch v {
	case "always":
		m.policy.Store(policyAlways)
	case "no":
		m.policy.Store(policyNo)
	default:
		m.policy.Store(policyEverysec)
	}
}

// File is an open incr file: records are appended with Write and made
// durable with Sync.
type File interface {
	Write(p []byte) (int, error)
	Sync() error
	Close() error
}

// Opener opens an incr file as os.OpenFile does.
type Opener func(path string, flag int, perm os.FileMode) (File, error)

// SetFileOpener makes the AOF open its incr files with open (nil: the
// operating system's files) from the next file it opens on.
func (m *Manager) SetFileOpener(open Opener) {
	if open == nil {
		m.open.Store(nil)
		return
	}
	m.open.Store(&open)
}

func (m *Manager) openFile(path string, flag int, perm os.FileMode) (File, error) {
	if p := m.open.Load(); p != nil {
		return (*p)(path, flag, perm)
	}
	f, err := os.OpenFile(path, flag, perm)
	if err != nil {
		return nil, err // not a nil *os.File in an interface
	}
	return f, nil
}

// SetFatal sets what an error the AOF cannot survive does (a write or an
// fsync failing under appendfsync always): fatal logs msg and ends the
// process, as Redis exits. Replies waiting for that fsync are never
// released.
func (m *Manager) SetFatal(fatal func(msg string)) { m.fatal.Store(&fatal) }

func (m *Manager) die(msg string) {
	if m.dead.Swap(true) {
		return // once
	}
	if p := m.fatal.Load(); p != nil {
		(*p)(msg)
		return
	}
	m.log.Error().Msg(msg)
	os.Exit(1)
}

// Rewriting reports whether a rewrite runs.
func (m *Manager) Rewriting() bool { return m.rewriting.Load() }

// Policy is the appendfsync policy.
func (m *Manager) Policy() int32 { return m.policy.Load() }

// Always reports appendfsync always.
func (m *Manager) Always() bool { return m.policy.Load() == policyAlways }

func (m *Manager) noSyncOnRewrite() bool { return m.cfg.Bool("no-appendfsync-on-rewrite") }

// Dir is the AOF directory: dir/appenddirname.
func (m *Manager) Dir() string {
	return filepath.Join(m.cfg.String("dir"), m.cfg.String("appenddirname"))
}

func (m *Manager) prefix() string { return m.cfg.String("appendfilename") }

func (m *Manager) manifestPath() string { return filepath.Join(m.Dir(), m.prefix()+".manifest") }

// Enabled reports whether the AOF is on.
func (m *Manager) Enabled() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.on
}

// Open is the start-up step with appendonly yes: the existing AOF is
// replayed and logging starts. Without an AOF (or when it was written by
// a different number of shards), a rewrite creates one before Open
// returns. It must run before clients are accepted.
func (m *Manager) Open() error {
	if err := os.MkdirAll(m.Dir(), 0o755); err != nil {
		return err
	}
	found, err := m.load()
	if err != nil {
		return err
	}
	return m.startLogging(found)
}

// startLogging attaches the logs after a load: to the existing files, or
// to new ones written by a rewrite when there was no AOF or its layout
// differs.
func (m *Manager) startLogging(found bool) error {
	if found && m.man.shardCount() == m.g.N() {
		if err := m.attachExisting(); err != nil {
			return err
		}
	} else {
		m.attach(nil)
		if found {
			m.log.Warn().Msgf("The AOF was written by %d shards, this node runs %d: rewriting it",
				m.man.shardCount(), m.g.N())
		} else {
			m.log.Info().Msg("Creating AOF base and incr files on server start")
		}
		if err := m.rewriteNow(); err != nil {
			return err
		}
	}
	m.deleteOrphans()
	return nil
}

// Reload is DEBUG LOADAOF: the AOF is fsync'd and closed, the dataset
// emptied and loaded again from the files. Writes that arrive meanwhile
// may be lost (Redis blocks the server; this does not).
func (m *Manager) Reload() error {
	if !m.Enabled() {
		return errors.New("ERR the append only file is off (appendonly no)")
	}
	m.Disable()
	done := make(chan struct{})
	m.g.DropAll(func() { close(done) })
	<-done
	found, err := m.load()
	if err != nil {
		return err
	}
	return m.startLogging(found)
}

// Start runs the automatic rewrites (auto-aof-rewrite-percentage and
// -min-size) and scheduled ones.
func (m *Manager) Start() {
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-m.stop:
				return
			case <-t.C:
			case <-m.bgRewrite:
			}
			if m.rewriting.Load() || m.p.Busy() {
				continue
			}
			if m.scheduled.Load() {
				m.scheduled.Store(false)
				m.startRewrite()
				continue
			}
			if m.autoRewriteDue() {
				m.log.Info().Msgf("Starting automatic rewriting of AOF on %d%% growth",
					m.cfg.Int("auto-aof-rewrite-percentage"))
				m.startRewrite()
			}
		}
	}()
}

func (m *Manager) autoRewriteDue() bool {
	perc := m.cfg.Int("auto-aof-rewrite-percentage")
	if perc <= 0 || !m.Enabled() || !m.lastRwOK.Load() && m.failures.Load() > 0 &&
		time.Since(time.UnixMilli(m.rwStart.Load())) < 5*time.Second {
		return false
	}
	cur := m.currentSize()
	if cur < m.cfg.Int("auto-aof-rewrite-min-size") {
		return false
	}
	base := max(m.rwBase.Load(), 1)
	return (cur-base)*100/base >= perc
}

// currentSize is the bytes of the bases and incr files in use.
func (m *Manager) currentSize() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.baseSize.Load()
	for _, l := range m.logs {
		n += l.size.Load()
	}
	return n
}

// attachExisting opens each shard's last incr file for appending and
// attaches the logs.
func (m *Manager) attachExisting() error {
	files := make([]File, m.g.N())
	names := make([]string, m.g.N())
	sizes := make([]int64, m.g.N())
	gen := m.man.gen()
	var newEntries []fileEntry
	for i := range files {
		incrs := m.man.incrs(i)
		name := ""
		if len(incrs) > 0 {
			name = incrs[len(incrs)-1].Name
		} else {
			name = incrName(m.prefix(), gen, i)
			newEntries = append(newEntries, fileEntry{Name: name, Seq: gen, Type: 'i', Shard: i})
		}
		path := filepath.Join(m.Dir(), name)
		f, err := m.openFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			for _, o := range files[:i] {
				_ = o.Close()
			}
			return err
		}
		t0 := time.Now()
		st, err := os.Stat(path)
		m.g.Latency.Since("aof-fstat", t0)
		if err == nil {
			sizes[i] = st.Size()
		}
		files[i], names[i] = f, name
	}
	if len(newEntries) > 0 {
		man := manifest{Files: append(append([]fileEntry(nil), m.man.Files...), newEntries...)}
		if err := m.writeManifest(man); err != nil {
			return err
		}
		m.man = man
	}
	logs := make([]*shardLog, len(files))
	for i := range files {
		logs[i] = newShardLog(m, i, files[i], names[i], sizes[i])
		// The shard's stream starts in DB 0; the file may end in another.
		logs[i].db = m.endDB[i]
		logs[i].curSelect = logs[i].db != 0
	}
	m.attach(logs)
	m.rwBase.Store(m.currentSize())
	return nil
}

// attach hooks logs (nil: fresh ones without a current file) into the
// shards and waits.
func (m *Manager) attach(logs []*shardLog) {
	if logs == nil {
		logs = make([]*shardLog, m.g.N())
		for i := range logs {
			logs[i] = newShardLog(m, i, nil, "", 0)
		}
	}
	var wg sync.WaitGroup
	for i, l := range logs {
		wg.Add(1)
		m.g.AttachAOF(i, l, wg.Done)
	}
	wg.Wait()
	m.mu.Lock()
	m.logs, m.on = logs, true
	m.mu.Unlock()
}

// Enable turns the AOF on at run time (CONFIG SET appendonly yes): like
// Redis, it starts with a rewrite, which writes the first base.
func (m *Manager) Enable() error {
	if m.Enabled() {
		return nil
	}
	if err := os.MkdirAll(m.Dir(), 0o755); err != nil {
		return err
	}
	m.waitRewrite()
	m.attach(nil)
	m.startRewrite()
	return nil
}

// Disable turns the AOF off: a running rewrite is abandoned, the logs are
// detached, fsync'd and closed.
func (m *Manager) Disable() {
	m.waitRewrite()
	m.mu.Lock()
	logs := m.logs
	m.logs, m.on = nil, false
	m.mu.Unlock()
	if logs == nil {
		return
	}
	var wg sync.WaitGroup
	for i := range logs {
		wg.Add(1)
		m.g.DetachAOF(i, wg.Done)
	}
	waitTimeout(&wg, 5*time.Second)
	for _, l := range logs {
		l.close()
	}
	// Off: no AOF error refuses writes any more.
	m.failingLogs.Store(0)
	m.syncErr.Store(nil)
	m.fault()
}

// waitRewrite cancels a running rewrite and waits for it to end.
func (m *Manager) waitRewrite() {
	m.cancel.Store(true)
	m.rwWG.Wait()
	m.cancel.Store(false)
}

// Stop ends the background work and closes the files after a last fsync
// (the node is shutting down).
func (m *Manager) Stop() {
	m.stopOnce.Do(func() {
		close(m.stop)
		if m.Enabled() {
			m.log.Info().Msg("Calling fsync() on the AOF file.")
		}
		m.Disable()
	})
}

// logFailing counts the shard logs with unwritten records (a log's state
// changed; err is the write error when it starts failing).
func (m *Manager) logFailing(on bool, err error) {
	if on {
		if err != nil {
			msg := errnoText(err)
			m.writeErr.Store(&msg)
		}
		if m.failingLogs.Add(1) == 1 {
			m.log.Warn().Err(err).Msg("Error writing to the AOF file")
			m.fault()
		}
		return
	}
	if m.failingLogs.Add(-1) == 0 {
		m.log.Info().Msg("AOF write error looks solved, slotd can write again.")
		m.fault()
	}
}

// fsyncFailed reports an fsync error (EINVAL is none: a file that cannot
// be fsync'd, which Redis ignores too).
func fsyncFailed(err error) bool { return err != nil && !errors.Is(err, syscall.EINVAL) }

func (m *Manager) synced(err error) {
	if !fsyncFailed(err) {
		err = nil
	}
	if err == nil {
		if m.syncErr.Swap(nil) != nil {
			m.log.Info().Msg("AOF fsync error looks solved, slotd can write again.")
			m.fault()
		}
		return
	}
	msg := errnoText(err)
	if m.syncErr.Swap(&msg) == nil {
		m.log.Warn().Err(err).Msg("Can't persist AOF for fsync error")
		m.fault()
	}
}

func (m *Manager) fault() {
	if f := m.OnFault; f != nil {
		f()
	}
}

// writeOK is aof_last_write_status.
func (m *Manager) writeOK() bool { return m.failingLogs.Load() == 0 && m.syncErr.Load() == nil }

// Fault is the error that refuses writes while the AOF cannot be written
// or fsync'd, as Redis words it; "" when all is well or the AOF is off.
func (m *Manager) Fault() string {
	if m.writeOK() || !m.Enabled() {
		return ""
	}
	e := m.syncErr.Load()
	if m.failingLogs.Load() > 0 {
		if w := m.writeErr.Load(); w != nil {
			e = w
		}
	}
	text := "Input/output error"
	if e != nil {
		text = *e
	}
	return "MISCONF Errors writing to the AOF file: " + text
}

// errnoText words a file error as C's strerror does (Go's texts are the
// same words in lower case).
func errnoText(err error) string {
	var errno syscall.Errno
	msg := err.Error()
	if errors.As(err, &errno) {
		msg = errno.Error()
	}
	if msg != "" && msg[0] >= 'a' && msg[0] <= 'z' {
		msg = string(msg[0]-'a'+'A') + msg[1:]
	}
	return msg
}

// Info returns the aof_* fields of INFO persistence, in Redis's order.
func (m *Manager) Info() [][2]string {
	b := func(v bool) string {
		if v {
			return "1"
		}
		return "0"
	}
	st := func(ok bool) string {
		if ok {
			return "ok"
		}
		return "err"
	}
	cur := int64(-1)
	if s := m.rwStart.Load(); s != 0 && m.rewriting.Load() {
		cur = (time.Now().UnixMilli() - s) / 1000
	}
	on := m.Enabled()
	out := [][2]string{
		{"aof_enabled", b(on)},
		{"aof_rewrite_in_progress", b(m.rewriting.Load())},
		{"aof_rewrite_scheduled", b(m.scheduled.Load())},
		{"aof_last_rewrite_time_sec", strconv.FormatInt(m.lastRwSec.Load(), 10)},
		{"aof_current_rewrite_time_sec", strconv.FormatInt(cur, 10)},
		{"aof_last_bgrewrite_status", st(m.lastRwOK.Load())},
		{"aof_rewrites", strconv.FormatInt(m.rewrites.Load(), 10)},
		{"aof_rewrites_consecutive_failures", strconv.FormatInt(m.failures.Load(), 10)},
		{"aof_last_write_status", st(m.writeOK())},
		{"aof_last_cow_size", "0"},
		{"module_fork_in_progress", "0"},
		{"module_fork_last_cow_size", "0"},
	}
	if on {
		out = append(out,
			[2]string{"aof_current_size", strconv.FormatInt(m.currentSize(), 10)},
			[2]string{"aof_base_size", strconv.FormatInt(m.rwBase.Load(), 10)},
			[2]string{"aof_pending_rewrite", b(m.scheduled.Load())},
			[2]string{"aof_buffer_length", "0"},
			[2]string{"aof_pending_bio_fsync", "0"},
			[2]string{"aof_delayed_fsync", "0"})
	}
	return out
}

func waitTimeout(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}
