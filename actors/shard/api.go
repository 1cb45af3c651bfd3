package shard

import (
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/rdb"
	"github.com/slotd/slotd/netio/batch"
	"github.com/slotd/slotd/slots"
)

// The Group's requests to its shards, one named message each (ops.go).

// AttachAOF makes a the log of shard i and turns record collection on.
func (g *Group) AttachAOF(i int, a engine.AOF, done func()) { g.TellThen(i, AttachAOF{AOF: a}, done) }

// DetachAOF stops shard i's log.
func (g *Group) DetachAOF(i int, done func()) { g.TellThen(i, DetachAOF{}, done) }

// RecordSlots is SaveSlots producing commands (an AOF base without an RDB
// preamble). reply runs in the shard's turn and must not block.
func (g *Group) RecordSlots(i, from, budget int, reply func(engine.RecordChunk)) {
	g.Tell(i, RecordSlots{From: from, Budget: budget, Reply: reply})
}

// SaveSlots serializes shard i's slots from slot from on, whole slots at a
// time until about budget bytes, and calls reply with the records (in the
// shard's turn: it must not block). Expired keys are left out.
func (g *Group) SaveSlots(i, from, budget int, opt rdb.Options, reply func(engine.SaveChunk)) {
	g.Tell(i, SaveSlots{From: from, Budget: budget, Opt: opt, Reply: reply})
}

// LoadKeys stores keys (all of shard i's slots) in shard i, replacing
// existing ones, and calls reply with the number stored and the first
// value that could not be built (in the shard's turn).
func (g *Group) LoadKeys(i int, keys []engine.LoadedKey, reply func(n int, err error)) {
	g.Tell(i, LoadKeys{Keys: keys, Reply: reply})
}

// Apply runs b, a batch of the primary's stream, in shard i.
func (g *Group) Apply(i int, b *engine.ApplyBatch) { g.Tell(i, Apply{B: b}) }

// Barrier calls done once every shard has handled every message sent to it
// before (by the same goroutine).
func (g *Group) Barrier(done func()) { g.Broadcast(Barrier{}, done) }

// EnableStreams turns the streams on, with a backlog of size bytes split
// evenly across the shards (16KB at least each).
func (g *Group) EnableStreams(size int64, done func()) {
	g.MarkStreamsOn()
	g.Broadcast(EnableStream{Per: engine.BacklogShare(size, g.N())}, done)
}

// SetReplica switches replica mode in every shard.
func (g *Group) SetReplica(on bool, done func()) {
	g.MarkReplica(on)
	g.Broadcast(SetReplica{On: on}, done)
}

// ResetStreams empties the backlogs and, when offsets is not nil, moves the
// streams to those offsets. Every feed is dropped.
func (g *Group) ResetStreams(offsets []int64, done func()) {
	g.Broadcast(ResetStream{Offsets: offsets}, done)
}

// Attach connects sink to shard i's stream (engine.Shard.AttachFeed).
func (g *Group) Attach(i int, sink engine.Sink, from int64, reply func(ok bool, start int64)) {
	g.Tell(i, AttachFeed{Sink: sink, From: from, Reply: reply})
}

// Covers reports whether shard i's backlog holds its stream from offset.
func (g *Group) Covers(i int, offset int64, reply func(bool)) {
	g.Tell(i, Covers{Offset: offset, Reply: reply})
}

// OffsetsAfter reports every shard's stream offset once each has handled
// what was sent to it before (WAIT: the writes its client made before).
func (g *Group) OffsetsAfter(reply func([]int64)) {
	out := make([]int64, g.N())
	for i := range out {
		g.Tell(i, ReadOffset{Reply: func(off int64) { out[i] = off }})
	}
	g.Barrier(func() { reply(out) })
}

// Detach forgets sink in every shard.
func (g *Group) Detach(sink engine.Sink, done func()) { g.Broadcast(DetachFeed{Sink: sink}, done) }

// Snapshot sends sink the next slots of shard i (engine.Shard.Snapshot).
func (g *Group) Snapshot(i int, sink engine.Sink, budget int, reply func(done bool)) {
	g.Tell(i, Snapshot{Sink: sink, Budget: budget, Reply: reply})
}

// DropAll deletes every key (a replica starting a full sync).
func (g *Group) DropAll(done func()) { g.Broadcast(DropAll{}, done) }

// StreamAdmin puts a slot-less record in shard i's stream
// (engine.Shard.StreamAdmin).
func (g *Group) StreamAdmin(i int, args [][]byte, done func(streamed bool)) {
	g.Tell(i, StreamAdmin{Args: args, Reply: done})
}

// RedirectBlocked tells every shard to check its blocked clients against
// the routing table just published.
func (g *Group) RedirectBlocked() { g.Broadcast(RedirectBlocked{}, nil) }

// DropSlotLogged deletes the keys of slot, which this node no longer
// serves, logging the flush in the AOF.
func (g *Group) DropSlotLogged(slot int) { g.Tell(g.Of(slot), DropSlotLogged{Slot: slot}) }

// Unwatch drops ws's records in shard i.
func (g *Group) Unwatch(i int, ws *batch.WatchState) { g.Tell(i, Unwatch{WS: ws}) }

// CancelBlocked drops b, parked in shard i, whose client went away.
func (g *Group) CancelBlocked(i int, b *batch.Batch) { g.Tell(i, CancelBlocked{B: b}) }

// Unblock wakes b, parked in shard i, for CLIENT UNBLOCK (see Unblock).
func (g *Group) Unblock(i int, b *batch.Batch, withError bool, reply func(ok bool)) {
	g.Tell(i, Unblock{B: b, Error: withError, Reply: reply})
}

// InTurn runs step in shard i's turn; traces name it by its type.
func (g *Group) InTurn(i int, step Turn) { g.Tell(i, InTurn{Step: step}) }

// Inspect runs fn with shard i's state in its turn: a test-only hook.
func (g *Group) Inspect(i int, fn func(*engine.Shard)) { g.Tell(i, Inspect{Fn: fn}) }

// Populate is DEBUG POPULATE: count string keys prefix:N holding
// "value:N" (zero-padded or cut to size bytes when size >= 0), leaving
// existing keys alone. The keys are built on a goroutine of its own and
// handed to the shards in batches; done runs when every shard stored its
// share.
func (g *Group) Populate(count int64, prefix string, size int64, done func()) {
	go func() {
		pending := make([][]engine.LoadedKey, g.N())
		var wg sync.WaitGroup
		flush := func(i int) {
			if len(pending[i]) == 0 {
				return
			}
			wg.Add(1)
			g.LoadKeys(i, pending[i], func(int, error) { wg.Done() })
			pending[i] = nil
		}
		for j := int64(0); j < count; j++ {
			n := strconv.FormatInt(j, 10)
			key := []byte(prefix + ":" + n)
			val := []byte("value:" + n)
			if size >= 0 {
				v := make([]byte, size)
				copy(v, val)
				val = v
			}
			slot := slots.HashSlot(key)
			i := g.Of(slot)
			pending[i] = append(pending[i], engine.LoadedKey{Slot: slot, Key: key, Keep: true,
				Obj: &rdb.Object{Kind: rdb.KindString, Str: val}})
			if len(pending[i]) >= 1024 {
				flush(i)
			}
		}
		for i := range pending {
			flush(i)
		}
		wg.Wait()
		done()
	}()
}

// CountKeys counts shard i's keys in each database at now for INFO
// keyspace: keys, expires, the sum and number of sampled TTLs, by database.
func (g *Group) CountKeys(i int, now int64, reply func(perDB [][4]int64)) {
	g.Tell(i, CountKeys{Now: now, Reply: func(kcs []engine.KeyCounts) {
		out := make([][4]int64, len(kcs))
		for db, kc := range kcs {
			out[db] = [4]int64{kc.Keys, kc.Expires, kc.TTLSum, kc.TTLN}
		}
		reply(out)
	}})
}

// Totals sums the shards' keyspace counters (INFO stats).
func (g *Group) Totals() (hits, misses, expired, expiredStale, commands int64) {
	for i := 0; i < g.N(); i++ {
		st := &g.Shard(i).Stats
		hits += st.Hits.Load()
		misses += st.Misses.Load()
		expired += st.Expired.Load()
		expiredStale += st.ExpiredStale.Load()
		commands += st.Commands.Load()
	}
	return
}

// ResetTotals zeroes the counters Totals sums (CONFIG RESETSTAT).
func (g *Group) ResetTotals() {
	for i := 0; i < g.N(); i++ {
		st := &g.Shard(i).Stats
		for _, c := range []*atomic.Int64{&st.Hits, &st.Misses, &st.Expired, &st.ExpiredStale, &st.Commands, &st.Evicted} {
			c.Store(0)
		}
	}
}

// TrackedKeys is the number of keys in the tracking tables.
func (g *Group) TrackedKeys() int64 { return g.Tracking.Keys() }

// AddBcastClients counts clients entering (+1) or leaving (-1) BCAST
// tracking.
func (g *Group) AddBcastClients(delta int64) { g.Tracking.BcastClients.Add(delta) }

// SetActiveExpire is DEBUG SET-ACTIVE-EXPIRE: off leaves only lazy expiry.
func (g *Group) SetActiveExpire(on bool) { g.NoActiveExpire.Store(!on) }
