package netio

import (
	"time"

	"github.com/slotd/slotd/netio/batch"
)

// Shards is the node's shard actors as the event loops use them
// (implemented by actors/shard.Group; the wiring hands it to New). Every
// method may be called on any goroutine; callbacks run in a shard's turn
// and must not block.
type Shards interface {
	// N is the number of shard actors and Of the one owning slot.
	N() int
	Of(slot int) int
	// Send hands a batch to shard i; it must not be touched until its
	// Completer is called.
	Send(i int, b *batch.Batch)
	// SendJoint hands bs[k] to shard shards[k] (ascending, two or more)
	// as one atomic step: no other batch runs in any of those shards
	// between the first and the last of them.
	SendJoint(shards []int, bs []*batch.Batch)
	// Barrier calls done once every shard handled what was sent before.
	Barrier(done func())
	// Unwatch drops a client's WATCH records in shard i; CancelBlocked
	// drops a parked batch whose client went away.
	Unwatch(i int, ws *batch.WatchState)
	CancelBlocked(i int, b *batch.Batch)
	// Unblock wakes b, parked in shard i (CLIENT UNBLOCK): with its
	// command's timeout reply, or with the UNBLOCKED error when withError;
	// reply (on the shard's goroutine) says whether it was still parked.
	Unblock(i int, b *batch.Batch, withError bool, reply func(ok bool))
	// ScriptBusy reports whether shard i runs a script past lua-time-limit
	// (and whose); AnyScriptBusy asks every shard.
	ScriptBusy(i int) (busy bool, owner uint64)
	AnyScriptBusy() bool
	// BlockedClients is the number of parked commands.
	BlockedClients() int64
	// CountKeys counts shard i's keys and volatile keys at now (unix ms),
	// with a sample of the remaining TTLs, for INFO keyspace: per database
	// (by index), keys, expires, the sum and the number of sampled TTLs.
	CountKeys(i int, now int64, reply func(perDB [][4]int64))
	// Totals sums the shards' keyspace counters; ResetTotals zeroes them
	// (CONFIG RESETSTAT).
	Totals() (hits, misses, expired, expiredStale, commands int64)
	// UsedMemory is the dataset's byte charge over every shard (INFO
	// used_memory_dataset, maxmemory).
	UsedMemory() int64
	// MemOverhead and SetMemOverhead are the bytes outside the dataset that
	// maxmemory counts (the clients' buffers).
	MemOverhead() int64
	SetMemOverhead(n int64)
	// Evicted is the number of keys evicted for maxmemory (INFO
	// evicted_keys).
	Evicted() int64
	// OutOfMemory reports whether the node is over maxmemory with nothing
	// the shards could evict (MULTI queueing and EXEC refuse then).
	OutOfMemory() bool
	ResetTotals()
	// Panics is the number of panics contained in the shards.
	Panics() int64
	// TrackedKeys is the number of keys in the tracking tables; BcastClients
	// counts the clients in BCAST mode.
	TrackedKeys() int64
	AddBcastClients(delta int64)
	// DropAll deletes every key (DEBUG RELOAD); Populate is DEBUG POPULATE
	// (count keys prefix:N of size bytes, existing ones left alone).
	DropAll(done func())
	Populate(count int64, prefix string, size int64, done func())
	// SetActiveExpire is DEBUG SET-ACTIVE-EXPIRE.
	SetActiveExpire(on bool)
}

// Shards is the node's shard actors (loop commands outside this package
// use them: DEBUG POPULATE, DEBUG RELOAD, INFO keyspace).
func (s *Server) Shards() Shards { return s.shards }

// Started is when the server was created (LASTSAVE before any save,
// INFO's uptime).
func (s *Server) Started() time.Time { return s.started }
