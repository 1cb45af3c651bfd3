package engine

// Snapshot support for actors/persist (RDB files). A save walks each
// shard's slots in turns: every turn serializes whole slots until a byte
// budget is used, so each slot is captured at one instant (per-slot
// consistency) while clients keep being served between turns. A load
// hands each shard the decoded keys of its slots in batches.

import (
	"runtime/debug"

	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/actors/engine/rdb"
	"github.com/slotd/slotd/slots"
)

// SaveChunk is one turn's output of SaveSlots.
type SaveChunk struct {
	// B holds RDB key records: optional EXPIRETIME_MS, type, key, value.
	B []byte
	// Next is the next slot to save; slots.NumSlots when the shard is done.
	Next int
	// Keys and Expires count the records in B and those with an expiry;
	// Skipped counts keys of types slotd cannot serialize.
	Keys, Expires, Skipped int
	// Err is set when serialization panicked.
	Err any
}

// SaveSlots serializes shard i's slots from slot from (a slot of shard i,
// or any slot < N to start) on, whole slots at a time until about budget
// bytes, and calls reply with the records (on the shard's goroutine: it
// must not block). Expired keys are left out.
func (s *Shard) SaveSlots(from, budget int, opt rdb.Options) SaveChunk {
	var ch SaveChunk
	func() {
		defer func() {
			if p := recover(); p != nil {
				s.log.Error().Interface("panic", p).Str("stack", string(debug.Stack())).Msg("save panicked")
				ch.Err = p
			}
		}()
		s.saveSlots(&ch, from, budget, opt)
	}()
	return ch
}

func (s *Shard) saveSlots(ch *SaveChunk, from, budget int, opt rdb.Options) {
	if from < s.ID {
		from = s.ID
	}
	now := s.group.nowMS()
	slot := from
	cur := 0 // each chunk starts and ends in DB 0 (SELECTDB records)
	for ; slot < slots.NumSlots && len(ch.B) < budget; slot += s.n {
		s.eachDBOf(slot, func(db int, ks *keyspace.Keyspace) {
			if db != cur {
				ch.B = appendSelectDB(ch.B, db)
				cur = db
			}
			s.saveKeyspace(ch, ks, now, opt)
		})
	}
	if cur != 0 {
		ch.B = appendSelectDB(ch.B, 0)
	}
	ch.Next = min(slot, slots.NumSlots)
}

// appendSelectDB appends an RDB SELECTDB record.
func appendSelectDB(b []byte, db int) []byte {
	return rdb.AppendLen(append(b, rdb.OpSelectDB), uint64(db))
}

// saveKeyspace appends the RDB records of ks's live keys to ch.
func (s *Shard) saveKeyspace(ch *SaveChunk, ks *keyspace.Keyspace, now int64, opt rdb.Options) {
	{
		ks.ForEach(func(e *keyspace.Entry) bool {
			if e.Expire != 0 && e.Expire <= now {
				return true
			}
			var p []byte
			if e.Kind != keyspace.KindString {
				var ok bool
				if p, ok = dumpEntry(e, opt); !ok {
					ch.Skipped++
					return true
				}
			}
			if e.Expire != 0 {
				ch.B = append(ch.B, rdb.OpExpireTimeMS)
				ch.B = appendLE64(ch.B, uint64(e.Expire))
				ch.Expires++
			}
			if p == nil { // strings, the common case, without a payload copy
				ch.B = append(ch.B, rdb.TypeString)
				ch.B = rdb.AppendString(ch.B, e.Key(), opt.Compress)
				ch.B = rdb.AppendString(ch.B, e.Str, opt.Compress)
			} else {
				ch.B = append(ch.B, p[0])
				ch.B = rdb.AppendString(ch.B, e.Key(), opt.Compress)
				ch.B = append(ch.B, p[1:len(p)-10]...) // value without the DUMP footer
			}
			ch.Keys++
			return true
		})
	}
}

func appendLE64(b []byte, v uint64) []byte {
	return append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24), byte(v>>32), byte(v>>40), byte(v>>48),
		byte(v>>56))
}

// LoadedKey is one key read from a snapshot.
type LoadedKey struct {
	Slot   int
	DB     int
	Key    []byte
	Expire int64 // unix ms, 0 for none
	Obj    *rdb.Object
	// Keep leaves an existing live key alone (DEBUG POPULATE).
	Keep bool
}

// LoadKeys stores keys (all of shard i's slots) in shard i, replacing
// existing ones, and calls reply with the number stored and the first
// value that could not be built (on the shard's goroutine).
func (s *Shard) LoadKeys(keys []LoadedKey) (int, error) {
	n, firstErr := 0, error(nil)
	c := &s.call
	saved := s.db
	defer s.UseDB(saved)
	for _, k := range keys {
		if k.DB != s.db {
			s.UseDB(k.DB)
		}
		*c = Call{Slot: k.Slot, Now: s.group.nowMS(), S: s}
		if k.Keep && c.peek(k.Key) != nil {
			continue
		}
		v, err := c.restoreObject(k.Obj)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		c.Delete(k.Key)
		e := c.Create(k.Key, v.Kind)
		e.Str, e.Obj = v.Str, v.Obj
		if k.Expire != 0 {
			c.SetExpire(e, k.Expire)
		}
		n++
	}
	*c = Call{}
	s.publishUsed()
	return n, firstErr
}

// Dirty is the number of changing writes so far, over all shards.
func (g *Group) Dirty() int64 {
	var n int64
	for _, s := range g.shards {
		n += s.Stats.Dirty.Load()
	}
	return n
}
