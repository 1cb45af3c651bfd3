package persist

import (
	"errors"
	"strconv"
	"time"

	"github.com/slotd/slotd/actors/engine/rdb"
)

// Helpers shared with actors/aof, whose base files are RDB files of one
// shard's slots, and the hooks through which it reports to INFO.

// AOF is what the snapshot manager needs of the append-only file: its
// INFO persistence fields (aof_enabled onwards) and commands.
type AOF interface {
	Info() [][2]string
	// Rewrite starts BGREWRITEAOF; the error is the client's reply.
	Rewrite() error
	// Rewriting reports a rewrite in progress (BGSAVE refuses to start).
	Rewriting() bool
	// Reload is DEBUG LOADAOF.
	Reload() error
}

// AppendHeader appends an RDB file's header: magic, version, aux fields,
// SELECTDB 0 and a RESIZEDB hint of keys. aofBase marks an AOF base file.
func AppendHeader(b []byte, keys int64, aofBase bool) []byte {
	b = append(b, "REDIS0010"...)
	aux := func(k, v string) {
		b = append(b, rdb.OpAux)
		b = rdb.AppendString(b, k, false)
		b = rdb.AppendString(b, v, false)
	}
	aux("redis-ver", "7.0.15")
	aux("redis-bits", "64")
	aux("ctime", strconv.FormatInt(time.Now().Unix(), 10))
	aux("used-mem", "0")
	if aofBase {
		aux("aof-base", "1")
	} else {
		aux("aof-base", "0")
	}
	b = append(b, rdb.OpSelectDB, 0, rdb.OpResizeDB)
	b = rdb.AppendLen(b, uint64(max(keys, 0)))
	return rdb.AppendLen(b, 0)
}

// AppendFooter appends EOF and the CRC-64 of everything before it; crc is
// the checksum of the bytes written so far (b's included).
func AppendFooter(b []byte, crc uint64) ([]byte, uint64) {
	b = append(b, rdb.OpEOF)
	crc = rdb.CRC64(crc, b[len(b)-1:])
	for j := 0; j < 8; j++ {
		b = append(b, byte(crc>>(8*j)))
	}
	return b, crc
}

// LoadRDB stores the keys of a whole RDB file held in b (an AOF's base)
// into the shards and waits for them. Keys whose expiry has passed are
// kept, as Redis keeps them from an AOF's RDB preamble: the expiry cycle
// of a primary removes them, a replica waits for its primary's DELs.
func (m *Manager) LoadRDB(b []byte) (loaded, expired int, err error) { return m.loadBytes(b, true) }

// ResetDirty makes the changes made so far count as saved (after loading
// an AOF, as Redis does).
func (m *Manager) ResetDirty() { m.dirtyAtSave.Store(m.g.Dirty()) }

// SetLoading sets INFO loading while an AOF is replayed.
func (m *Manager) SetLoading(on bool) { m.loading.Store(on) }

// Busy reports whether a snapshot is being written (a rewrite waits).
func (m *Manager) Busy() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.running
}

func (m *Manager) aofInfo() [][2]string {
	if m.AOF != nil {
		return m.AOF.Info()
	}
	return [][2]string{
		{"aof_enabled", "0"},
		{"aof_rewrite_in_progress", "0"},
		{"aof_rewrite_scheduled", "0"},
		{"aof_last_rewrite_time_sec", "-1"},
		{"aof_current_rewrite_time_sec", "-1"},
		{"aof_last_bgrewrite_status", "ok"},
		{"aof_rewrites", "0"},
		{"aof_rewrites_consecutive_failures", "0"},
		{"aof_last_write_status", "ok"},
		{"aof_last_cow_size", "0"},
		{"module_fork_in_progress", "0"},
		{"module_fork_last_cow_size", "0"},
	}
}

// RewriteAOF starts BGREWRITEAOF (ErrNoAOF without an AOF); the error is
// the client's reply.
func (m *Manager) RewriteAOF() error {
	if m.AOF == nil {
		return ErrNoAOF
	}
	return m.AOF.Rewrite()
}

// ReloadAOF is DEBUG LOADAOF (ErrNoAOF without an AOF).
func (m *Manager) ReloadAOF() error {
	if m.AOF == nil {
		return ErrNoAOF
	}
	return m.AOF.Reload()
}

// ErrNoAOF is the error of the AOF calls on a node built without one.
var ErrNoAOF = errors.New("ERR snapshots are not available on this server")

// AOFRewriting reports an AOF rewrite in progress.
func (m *Manager) AOFRewriting() bool { return m.AOF != nil && m.AOF.Rewriting() }
