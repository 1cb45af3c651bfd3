package engine

import "github.com/slotd/slotd/actors/engine/keyspace"

// KeyCounts is what a shard reports for INFO keyspace.
type KeyCounts struct {
	Keys, Expires int64
	TTLSum, TTLN  int64 // sampled remaining TTLs (ms)
}

// CountKeys counts the shard's keys and keys with a TTL in each database
// (by index), and samples the remaining TTLs at now (unix ms) for INFO
// keyspace's avg_ttl.
func (s *Shard) CountKeys(now int64) []KeyCounts {
	out := make([]KeyCounts, len(s.dbs))
	s.ForEachDB(func(db int) { out[db] = s.countDBKeys(now) })
	return out
}

func (s *Shard) countDBKeys(now int64) KeyCounts {
	var kc KeyCounts
	samples, steps := 64, 1024 // TTLs to sample, buckets to visit
	s.ForEachSlot(func(_ int, ks *keyspace.Keyspace) {
		kc.Keys += int64(ks.Len())
		n := ks.ExpiresLen()
		kc.Expires += int64(n)
		for cursor := uint64(0); n > 0 && samples > 0 && steps > 0; steps-- {
			cursor = ks.ScanExpires(cursor, func(e *keyspace.Entry) {
				if samples > 0 && e.Expire > now {
					kc.TTLSum += e.Expire - now
					kc.TTLN++
					samples--
				}
			})
			if cursor == 0 {
				break
			}
		}
	})
	return kc
}
