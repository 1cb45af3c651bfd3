package engine

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

type watchRec struct {
	ws *WatchState
}

// Watch records that c.Cmd.Watch watches key (the WATCH command).
func (c *Call) Watch(key []byte) {
	s := c.S
	ws := c.Cmd.Watch
	if ws == nil {
		return
	}
	if s.watched == nil {
		s.watched = map[string][]watchRec{}
	}
	k := string(key)
	for _, r := range s.watched[k] {
		if r.ws == ws {
			return
		}
	}
	s.watched[k] = append(s.watched[k], watchRec{ws: ws})
	if e := c.peek(key); e != nil && e.Expire != 0 {
		for {
			cur := ws.expireAt.Load()
			if cur != 0 && cur <= e.Expire {
				break
			}
			if ws.expireAt.CompareAndSwap(cur, e.Expire) {
				break
			}
		}
	}
}

func (s *Shard) signalWatch(key []byte) {
	if len(s.watched) == 0 {
		return
	}
	for _, r := range s.watched[string(key)] {
		r.ws.dirty.Store(true)
	}
}

// Unwatch drops every record of ws in this shard.
func (s *Shard) Unwatch(ws *WatchState) {
	for k, recs := range s.watched {
		out := recs[:0]
		for _, r := range recs {
			if r.ws != ws {
				out = append(out, r)
			}
		}
		if len(out) == 0 {
			delete(s.watched, k)
		} else {
			s.watched[k] = out
		}
	}
}

// DirtyAllWatchers flags every WATCH state with a key in this shard
// (FLUSHALL / FLUSHDB).
func (s *Shard) DirtyAllWatchers() {
	for _, recs := range s.watched {
		for _, r := range recs {
			r.ws.dirty.Store(true)
		}
	}
}
