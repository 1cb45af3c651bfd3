package batch

import (
	"sync/atomic"
)

// WatchState is one client's WATCH set. Shards owning watched keys flag it
// dirty when one of them changes; EXEC checks it inside the shard that runs
// the transaction, at the moment the transaction starts.
type WatchState struct {
	dirty atomic.Bool
	// expireAt is the earliest TTL among the watched keys when they were
	// watched (0: none): a key that expires after WATCH aborts EXEC, as in
	// Redis 7.
	expireAt atomic.Int64
	// Shards holding records for this state (bit i: shard i), so UNWATCH
	// only visits those. Written by the loop before dispatching WATCH.
	Shards uint64
	// decided is the transaction's verdict once its first marker has
	// checked: 1 runs, 2 aborted (Decide).
	decided atomic.Int32
}

// Decide is Aborted checked once for the transaction ws guards: the first
// call's answer is every later call's. A transaction over several shards
// has a marker in each, and its own writes in the first shard must not
// abort its part in the next one.
func (ws *WatchState) Decide(now int64) bool {
	if ws == nil {
		return false
	}
	if d := ws.decided.Load(); d != 0 {
		return d == 2
	}
	v := int32(1)
	if ws.Aborted(now) {
		v = 2
	}
	ws.decided.Store(v)
	return v == 2
}

// Aborted reports whether a transaction guarded by ws must not run at now.
func (ws *WatchState) Aborted(now int64) bool {
	if ws == nil {
		return false
	}
	if ws.dirty.Load() {
		return true
	}
	at := ws.expireAt.Load()
	return at != 0 && at <= now
}

// Dirty marks the state (FLUSHALL, slot loss, ...).
func (ws *WatchState) Dirty() { ws.dirty.Store(true) }

// NoteExpire records that a watched key expires at (unix ms): the
// earliest such time aborts EXEC once it has passed.
func (ws *WatchState) NoteExpire(at int64) {
	for {
		cur := ws.expireAt.Load()
		if cur != 0 && cur <= at {
			return
		}
		if ws.expireAt.CompareAndSwap(cur, at) {
			return
		}
	}
}

// Track flags of a Cmd, set by the loop from the client's tracking mode.
const (
	// TrackRead: remember the keys of this read-only command for Cmd.Client.
	TrackRead uint8 = 1 << iota
	// TrackNoLoop: do not invalidate keys this command modifies for
	// Cmd.Client itself (NOLOOP).
	TrackNoLoop
)
