package engine

// maxmemory: when the dataset's charge (memory.go) over every shard passes
// maxmemory, a shard about to run a command first deletes keys of its own
// chosen by maxmemory-policy, as Redis's performEvictions: random keys, or
// the best of a pool of candidates sampled maxmemory-samples at a time per
// database (the longest idle for LRU, the least used for LFU, the soonest
// to expire for volatile-ttl). maxmemory-eviction-tenacity bounds the time
// one command spends evicting; the shard's cron goes on where it stopped.
// When nothing can be evicted, commands flagged denyoom get Redis's -OOM.
//
// Every entry keeps Redis's 24 bits of access metadata (Entry.Access): the
// LRU clock in seconds, or under an LFU policy the minute of the last
// decrement above a logarithmic counter (lfu-log-factor, lfu-decay-time),
// updated by every lookup. The time is the command's (Call.Now) or the
// cron's, the randomness the shard's source: eviction is as deterministic
// as the rest of the engine.

import (
	"math"

	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/slots"
)

// Policy is a maxmemory-policy.
type Policy int32

// The maxmemory policies.
const (
	NoEviction Policy = iota
	AllKeysLRU
	AllKeysLFU
	AllKeysRandom
	VolatileLRU
	VolatileLFU
	VolatileRandom
	VolatileTTL
)

var policyNames = [...]string{"noeviction", "allkeys-lru", "allkeys-lfu", "allkeys-random",
	"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"}

// ParsePolicy returns the policy named name (noeviction if unknown: the
// configuration has checked the name).
func ParsePolicy(name string) Policy {
	for i, n := range policyNames {
		if n == name {
			return Policy(i)
		}
	}
	return NoEviction
}

func (p Policy) String() string { return policyNames[p] }

// LFU reports whether p keeps LFU counters in Entry.Access (else LRU
// clocks).
func (p Policy) LFU() bool { return p == AllKeysLFU || p == VolatileLFU }

// LRU reports whether p is an LRU policy.
func (p Policy) LRU() bool { return p == AllKeysLRU || p == VolatileLRU }

func (p Policy) volatile() bool { return p >= VolatileLRU }

// Policy is the maxmemory-policy in force.
func (g *Group) Policy() Policy { return Policy(g.policy.Load()) }

// SetPolicy sets the maxmemory-policy.
func (g *Group) SetPolicy(p Policy) { g.policy.Store(int32(p)) }

// ErrOOM is Redis's reply to a denyoom command when memory is over
// maxmemory and nothing can be evicted.
const ErrOOM = "OOM command not allowed when used memory > 'maxmemory'."

// ---- access metadata

const (
	lruMax     = 1<<24 - 1
	lfuInitVal = 5 // a new key's LFU counter, so it is not evicted at once
)

// lruClock is Redis's LRU clock at now (unix ms): seconds, 24 bits.
func lruClock(now int64) uint32 { return uint32(now/1000) & lruMax }

// IdleMS is the time since e was last accessed, at now (unix ms), with
// Redis's resolution of a second (meaningful under a non-LFU policy).
func IdleMS(e *keyspace.Entry, now int64) int64 {
	c, lru := lruClock(now), e.Access&lruMax
	if c >= lru {
		return int64(c-lru) * 1000
	}
	return int64(c+(lruMax-lru)) * 1000
}

// lfuMinutes is Redis's LFU clock at now: minutes, 16 bits.
func lfuMinutes(now int64) uint32 { return uint32(now/60000) & 0xffff }

// LFUCounter is e's LFU counter at now, decayed by one per lfu-decay-time
// minutes since its last decrement (Redis's LFUDecrAndReturn).
func (g *Group) LFUCounter(e *keyspace.Entry, now int64) uint32 {
	ldt, counter := e.Access>>8&0xffff, e.Access&0xff
	period := g.LFUDecayTime.Load()
	if period <= 0 {
		return counter
	}
	m := lfuMinutes(now)
	elapsed := m - ldt
	if m < ldt {
		elapsed = 0xffff - ldt + m
	}
	if n := int64(elapsed) / period; n > 0 {
		if n >= int64(counter) {
			return 0
		}
		return counter - uint32(n)
	}
	return counter
}

// accessed records an access to e at now (every lookup that finds it).
func (s *Shard) accessed(e *keyspace.Entry, now int64) {
	if !s.group.Policy().LFU() {
		e.Access = lruClock(now)
		return
	}
	counter := s.group.LFUCounter(e, now)
	if counter < 255 {
		// Logarithmic increment: the higher the counter, the less likely.
		base := max(float64(counter)-lfuInitVal, 0)
		if s.rng.Float64() < 1/(base*float64(s.group.LFULogFactor.Load())+1) {
			counter++
		}
	}
	e.Access = lfuMinutes(now)<<8 | counter
}

// created gives a new entry its first access metadata.
func (s *Shard) created(e *keyspace.Entry, now int64) {
	if s.group.Policy().LFU() {
		e.Access = lfuMinutes(now)<<8 | lfuInitVal
		return
	}
	e.Access = lruClock(now)
}

// ---- eviction

// evictResult is what evict achieved.
type evictResult uint8

const (
	evictOK      evictResult = iota // under maxmemory (now or already)
	evictRunning                    // out of time: the cron goes on
	evictFail                       // over, and nothing can be evicted
)

// poolSize is the eviction pool's size (Redis's EVPOOL_SIZE).
const poolSize = 16

// poolEntry is a candidate for eviction with its score (higher: evict
// first).
type poolEntry struct {
	e     *keyspace.Entry
	score int64
	slot  int32
}

// evictState is a shard's eviction bookkeeping.
type evictState struct {
	pool   [poolSize]poolEntry // ascending by score
	n      int
	nextDB int  // the random policies' database round-robin
	later  bool // a command ran out of time: the cron continues
}

// memOver is how many bytes the charge over every shard is above
// maxmemory (≤ 0: not over, or no maxmemory). This shard's figure is
// exact, the others' as they published it at the end of their last turn.
func (s *Shard) memOver() int64 {
	limit := s.group.MaxMemory.Load()
	if limit <= 0 {
		return math.MinInt64
	}
	used := s.Used() + s.group.overhead.Load()
	for _, o := range s.group.shards {
		if o != s {
			used += o.Stats.Used.Load()
		}
	}
	return used - limit
}

// MemOverhead is what maxmemory counts beside the dataset: the clients'
// buffers, as the server last set them (SetMemOverhead).
func (g *Group) MemOverhead() int64 { return g.overhead.Load() }

// SetMemOverhead sets MemOverhead.
func (g *Group) SetMemOverhead(n int64) { g.overhead.Store(n) }

// evictionTimeLimit is the ns one call may spend evicting, from
// maxmemory-eviction-tenacity (Redis's evictionTimeLimitUs); -1: none.
func (g *Group) evictionTimeLimit() int64 {
	t := g.EvictionTenacity.Load()
	switch {
	case t <= 10:
		return 50_000 * t
	case t < 100:
		return int64(500_000 * math.Pow(1.15, float64(t-10)))
	}
	return -1
}

// evict deletes keys by the policy until the charge is under maxmemory,
// nothing is left to evict, or the time limit passes (checked every 16
// keys, as Redis does). now (unix ms) scores LRU and LFU candidates.
func (s *Shard) evict(now int64) evictResult {
	r := s.evictOnce(now)
	if failed := r == evictFail; s.Stats.EvictFailed.Load() != failed {
		s.Stats.EvictFailed.Store(failed)
	}
	return r
}

func (s *Shard) evictOnce(now int64) evictResult {
	over := s.memOver()
	if over <= 0 {
		s.evictor.later = false
		return evictOK
	}
	if s.replica && s.group.ReplicaIgnoreMaxMemory.Load() {
		return evictOK // the primary's DELs keep a replica in step
	}
	pol := s.group.Policy()
	if pol == NoEviction {
		return evictFail
	}
	saved := s.db
	defer s.UseDB(saved)
	limit, start := s.group.evictionTimeLimit(), s.group.mono()
	defer s.noteLatency("eviction-cycle", start)
	for freed := 0; over > 0; {
		e, slot := s.victim(pol, now)
		if e == nil {
			s.evictor.later = false
			return evictFail
		}
		over -= s.evictEntry(e, slot)
		if freed++; freed%16 == 0 {
			if over = s.memOver(); over > 0 && limit >= 0 && s.group.mono()-start > limit {
				s.evictor.later = true
				return evictRunning
			}
		}
	}
	s.evictor.later = false
	return evictOK
}

// victim picks the next key to evict under pol, or nil.
func (s *Shard) victim(pol Policy, now int64) (*keyspace.Entry, int) {
	volatile := pol.volatile()
	if pol == AllKeysRandom || pol == VolatileRandom {
		for i := range s.dbs {
			db := (s.evictor.nextDB + i) % len(s.dbs)
			if e, slot := s.sample(db, volatile); e != nil {
				s.evictor.nextDB = db + 1
				return e, slot
			}
		}
		return nil, -1
	}
	for {
		samples := max(int(s.group.MaxMemorySamples.Load()), 1)
		for db := range s.dbs {
			for range samples {
				e, slot := s.sample(db, volatile)
				if e == nil {
					break
				}
				s.poolInsert(e, slot, s.score(pol, e, now))
			}
		}
		if s.evictor.n == 0 {
			return nil, -1
		}
		// The best candidate still there (a pooled key may have been
		// deleted since, or lost its TTL).
		for s.evictor.n > 0 {
			s.evictor.n--
			p := s.evictor.pool[s.evictor.n]
			s.evictor.pool[s.evictor.n] = poolEntry{}
			if p.e.Live() && (!volatile || p.e.Expire != 0) {
				return p.e, int(p.slot)
			}
		}
	}
}

// score is a candidate's eviction score: higher goes first.
func (s *Shard) score(pol Policy, e *keyspace.Entry, now int64) int64 {
	switch pol {
	case VolatileTTL:
		return math.MaxInt64 - e.Expire
	case AllKeysLFU, VolatileLFU:
		return 255 - int64(s.group.LFUCounter(e, now))
	}
	return IdleMS(e, now)
}

// poolInsert adds a candidate to the pool, which keeps the best poolSize
// by ascending score; a key already pooled only gets its score updated.
func (s *Shard) poolInsert(e *keyspace.Entry, slot int, score int64) {
	ev := &s.evictor
	for i := 0; i < ev.n; i++ {
		if ev.pool[i].e == e {
			copy(ev.pool[i:ev.n-1], ev.pool[i+1:ev.n])
			ev.n--
			ev.pool[ev.n] = poolEntry{}
			break
		}
	}
	i := 0
	for i < ev.n && ev.pool[i].score < score {
		i++
	}
	switch {
	case ev.n < poolSize:
		copy(ev.pool[i+1:ev.n+1], ev.pool[i:ev.n])
		ev.n++
	case i == 0:
		return // worse than everything in a full pool
	default:
		i-- // drop the worst (first) to make room
		copy(ev.pool[:i], ev.pool[1:i+1])
	}
	ev.pool[i] = poolEntry{e: e, score: score, slot: int32(slot)}
}

// sample draws a random key of database db in this shard (one with a TTL
// when volatile): a random slot of the shard's, the next one with keys,
// a random key of it.
func (s *Shard) sample(db int, volatile bool) (*keyspace.Entry, int) {
	d := s.dbs[db]
	if d == nil || s.dbKeys[db].Load() == 0 {
		return nil, -1
	}
	nslots := (slots.NumSlots - s.ID + s.n - 1) / s.n
	first := s.rng.IntN(nslots)
	for k := 0; k < nslots; k++ {
		slot := s.ID + ((first+k)%nslots)*s.n
		ks := d[slot]
		if ks == nil {
			continue
		}
		var e *keyspace.Entry
		if volatile {
			e = ks.RandomExpire(s.rng)
		} else {
			e = ks.Random(s.rng)
		}
		if e != nil {
			return e, slot
		}
	}
	return nil, -1
}

// evictEntry deletes e, a key of slot, as an eviction and returns its
// charge.
func (s *Shard) evictEntry(e *keyspace.Entry, slot int) int64 {
	ks := e.Owner()
	db := -1
	for i, d := range s.dbs {
		if d != nil && d[slot] == ks {
			db = i
			break
		}
	}
	if db < 0 || !ks.DeleteEntry(e) {
		return 0
	}
	s.UseDB(db)
	s.removed(slot)
	s.keyEvicted(slot, []byte(e.Key()))
	return e.Charge()
}

// keyEvicted is called once per evicted key, with its database current,
// after it left the keyspace: it counts it (INFO evicted_keys), streams
// the deletion as a DEL to replicas and the AOF, and tells WATCHers and
// CLIENT TRACKING readers, as Redis's signalModifiedKey, and fires the
// 'evicted' keyspace event.
func (s *Shard) keyEvicted(slot int, key []byte) {
	s.Stats.Evicted.Add(1)
	if s.Streaming() {
		s.repl.record(slot, [][]byte{CmdDEL, key})
	}
	s.signalWatch(key)
	if s.trackingActive() {
		s.trackInvalidate(key)
	}
	s.notify(NotifyEvicted, "evicted", key)
}

// evictBefore runs before a client command: under maxmemory it evicts
// what is needed first and reports whether the command must be refused
// with -OOM (a denyoom command while nothing could be evicted). Not inside
// a transaction: Redis evicts before EXEC, not between its commands.
// The outcome is kept for the command's scripts (oomAtStart: Redis's
// pre_command_oom_state).
func (s *Shard) evictBefore(spec *command.Spec) bool {
	if s.txHold > 0 || s.repl.txLeft > 0 {
		return false
	}
	s.oomAtStart = s.evict(s.now) == evictFail
	// A fanout's parts are merged: the refusal of one would not be a reply.
	return s.oomAtStart && spec.DenyOOM() && spec.Exec == command.Shard
}

// OutOfMemory reports whether the node is over maxmemory with nothing a
// shard could evict (noeviction, or the last eviction failed): what a
// command queued in MULTI, or an EXEC with a denyoom command, is refused
// for (netio/multi.go). The shards' charges are as they last published
// them.
func (g *Group) OutOfMemory() bool {
	limit := g.MaxMemory.Load()
	if limit <= 0 {
		return false
	}
	used := g.overhead.Load()
	failed := g.Policy() == NoEviction
	for _, s := range g.shards {
		used += s.Stats.Used.Load()
		failed = failed || s.Stats.EvictFailed.Load()
	}
	return used > limit && failed
}

// Evicted is the number of keys evicted over every shard (INFO
// evicted_keys).
func (g *Group) Evicted() int64 {
	var n int64
	for _, s := range g.shards {
		n += s.Stats.Evicted.Load()
	}
	return n
}
