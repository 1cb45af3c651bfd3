package engine

import (
	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/slots"
)

// nextOwnSlot is the next slot of this shard after slot, in SCAN order,
// that holds keys, or -1.
func (s *Shard) NextOwnSlot(slot int) int {
	for slot += s.n; slot < slots.NumSlots; slot += s.n {
		if ks := s.spaces[slot]; ks != nil && ks.Len() > 0 {
			return slot
		}
	}
	return -1
}

// firstSlotAfterShard is the first slot, in SCAN order, of the shards after
// shard id that holds keys, or -1. It reads the shared per-slot counts: a
// key that was present before the scan began is counted there.
func (g *Group) FirstSlotAfterShard(id int) int {
	n := len(g.shards)
	for j := id + 1; j < n; j++ {
		for slot := j; slot < slots.NumSlots; slot += n {
			if g.counts[slot].Load() > 0 {
				return slot
			}
		}
	}
	return -1
}

// expired reports whether e's TTL has passed at now.
func Expired(e *keyspace.Entry, now int64) bool { return e.Expire != 0 && e.Expire <= now }

// randomKey draws a key of this shard: a slot with probability proportional
// to its size, then a key in it. Expired keys that are drawn are deleted and
// the draw repeats (as Redis does); after a few misses a walk finds a live
// key, deleting the expired ones it passes, so the work stays proportional
// to the keys removed. It returns the key and the shard's key count (0 when
// the shard has no live key).
func (s *Shard) RandomKey(now int64) (string, int64) {
	for try := 0; try < 32; try++ {
		total := 0
		for slot := s.ID; slot < slots.NumSlots; slot += s.n {
			if ks := s.spaces[slot]; ks != nil {
				total += ks.Len()
			}
		}
		if total == 0 {
			return "", 0
		}
		r := s.rng.IntN(total)
		for slot := s.ID; slot < slots.NumSlots; slot += s.n {
			ks := s.spaces[slot]
			if ks == nil || r >= ks.Len() {
				if ks != nil {
					r -= ks.Len()
				}
				continue
			}
			e := ks.Random(s.rng)
			if !Expired(e, now) {
				return e.Key(), int64(total)
			}
			s.ReapExpired(slot, ks, e)
			break
		}
	}
	var key string
	found := false
	s.ForEachSlot(func(slot int, ks *keyspace.Keyspace) {
		if found {
			return
		}
		ks.ForEach(func(e *keyspace.Entry) bool {
			if Expired(e, now) {
				s.ReapExpired(slot, ks, e)
				return true
			}
			key, found = e.Key(), true
			return false
		})
	})
	if !found {
		return "", 0
	}
	total := 0
	s.ForEachSlot(func(_ int, ks *keyspace.Keyspace) { total += ks.Len() })
	return key, int64(total)
}
