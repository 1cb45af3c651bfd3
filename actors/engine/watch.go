package engine

import (
	"github.com/slotd/slotd/netio/batch"
	"github.com/slotd/slotd/netio/command"
)

type watchRec struct {
	ws *batch.WatchState
}

// Watch records that c.Cmd.Watch watches key (the WATCH command).
func (c *Call) Watch(key []byte) {
	s := c.S
	ws := c.Cmd.Watch
	if ws == nil {
		return
	}
	if s.watched == nil {
		s.watched = map[DBKey][]watchRec{}
	}
	k := DBKey{s.db, string(key)}
	for _, r := range s.watched[k] {
		if r.ws == ws {
			return
		}
	}
	// Looked up first: a key already past its TTL goes now, and its
	// deletion does not fail this client's EXEC (Redis 7.0 keeps such a
	// stale key as not existing for the WATCH).
	e := c.peek(key)
	s.watched[k] = append(s.watched[k], watchRec{ws: ws})
	if e != nil && e.Expire != 0 {
		ws.NoteExpire(e.Expire)
	}
}

func (s *Shard) signalWatch(key []byte) {
	if len(s.watched) == 0 {
		return
	}
	for _, r := range s.watched[DBKey{s.db, string(key)}] {
		r.ws.Dirty()
	}
}

// endWatch drops ws's records here once EXEC's marker has checked it. The
// loop leaves the records of the shard running the transaction to the
// marker rather than sending Unwatch when it parses EXEC: that message
// would reach the shard ahead of the transaction's batch, and a write (or
// a MIGRATE's delete) between the two would no longer abort it.
func (s *Shard) endWatch(ws *batch.WatchState) {
	if ws.Shards&(1<<uint(s.ID%64)) != 0 {
		s.Unwatch(ws)
	}
}

// Unwatch drops every record of ws in this shard.
func (s *Shard) Unwatch(ws *batch.WatchState) {
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
// (a full sync).
func (s *Shard) DirtyAllWatchers() {
	for _, recs := range s.watched {
		for _, r := range recs {
			r.ws.Dirty()
		}
	}
}

// WATCH runs in the shard owning its keys (netio answers it inside MULTI and
// keeps the client's WatchState; the shard records the keys).
func registerWatch() {
	command.Register(Handle(&command.Spec{Name: "watch", Arity: -2,
		Flags: []string{"noscript", "loading", "stale", "fast", "allow_busy"},
		First: 1, Last: -1, Step: 1, Categories: []string{"fast", "transaction"}, Group: "transactions",
		Since: "2.2.0", TxControl: true, WatchCmd: true, Exec: command.Shard,
		Summary: "Monitors changes to keys to determine the execution of a transaction."}, cmdWatch))
}

// cmdWatch runs in the shard owning the keys; WATCH inside MULTI never
// gets here (dispatch answers it on the loop).
func cmdWatch(c *Call) {
	for _, k := range c.Args[1:] {
		c.Watch(k)
	}
	c.W.OK()
}

// WatchRecords is the number of WATCH records the shard holds (a test
// probe: records left behind by an UNWATCH, DISCARD or EXEC are leaks).
func (s *Shard) WatchRecords() int {
	n := 0
	for _, recs := range s.watched {
		n += len(recs)
	}
	return n
}
