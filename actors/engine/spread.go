package engine

import (
	"github.com/slotd/slotd/netio/batch"
	"github.com/slotd/slotd/slots"
)

// Spread commands. Outside cluster mode Redis runs a multi-key command
// whose keys hash to different slots (RENAME, SMOVE, LMOVE, SUNIONSTORE,
// PFMERGE, MSETNX, BITOP, ...). Such a command comes with batch.Cmd.Spread
// set, and its handler reaches each key in that key's own slot and in the
// shard owning the slot: when the keys live in several shards, the event
// loop sends the command as a joint step (actors/shard), so the shard
// running it has every involved shard's state to itself. Each key's
// bookkeeping stays with its owner: key counts, memory charge, WATCH,
// blocked clients, tracking, lazy expiry.
//
// Replication and the AOF: a replica applies each shard's stream in its
// own shard, one slot at a time, so a spread write is not streamed as sent
// but as its effect on each key it declares, in the stream of the key's
// owner: DEL key and the records that rebuild its value (with its TTL),
// wrapped in MULTI/EXEC when a shard gets several.

// at returns the shard and slot holding key for c.
func (c *Call) at(key []byte) (*Shard, int) {
	if !c.spread {
		return c.S, c.Slot
	}
	slot := slots.HashSlot(key)
	o := c.S.group.shards[slot%c.S.n]
	if o.db != c.S.db { // COPY ... DB switches the running shard's database
		o.UseDB(c.S.db)
	}
	return o, slot
}

// ownerOf returns the shard owning key's slot, and the slot.
func (s *Shard) ownerOf(key []byte) (*Shard, int) {
	slot := slots.HashSlot(key)
	return s.group.shards[slot%s.n], slot
}

// spreadBegin readies the other shards that cmd's keys reach: the
// command's database, time and tracking writer.
func (s *Shard) spreadBegin(cmd *batch.Cmd, idx []int) {
	for _, k := range idx {
		o, _ := s.ownerOf(cmd.Args[k])
		if o == s {
			continue
		}
		if o.db != int(cmd.DB) {
			o.UseDB(int(cmd.DB))
		}
		o.now = s.now
		o.trackWriter(cmd)
	}
}

// spreadLive is liveKeys for a spread command.
func (s *Shard) spreadLive(args [][]byte, idx []int) uint64 {
	var bits uint64
	for i, k := range idx {
		if i >= 64 {
			break
		}
		o, slot := s.ownerOf(args[k])
		if o.index.Lookup(o.spaces[slot], args[k]) != nil {
			bits |= 1 << uint(i)
		}
	}
	return bits
}

// spreadEnd runs, in the other shards the command reached, the clients
// its writes unblocked.
func (s *Shard) spreadEnd(args [][]byte, idx []int) {
	for _, k := range idx {
		if o, _ := s.ownerOf(args[k]); o != s && len(o.ready) > 0 && o.txHold == 0 {
			o.wake()
		}
	}
}

// restateSpread streams the effect of a spread write: every key it
// declares (in the command's database) and every key it signalled (in the
// database it was signalled in: COPY ... DB), restated in its owner's
// stream as it is now (see the top of the file). Restating a key the
// command left alone streams its unchanged state: harmless.
func (s *Shard) restateSpread(args [][]byte, idx []int, db int) {
	keys := s.spreadSigs
	for _, k := range idx {
		keys = append(keys, DBKey{DB: db, Key: string(args[k])})
	}
	s.spreadSigs = keys[:0]
	done := make([]bool, len(keys))
	for i := range keys {
		if done[i] {
			continue
		}
		o, _ := s.ownerOf([]byte(keys[i].Key))
		if !o.Streaming() {
			continue
		}
		saved := o.db
		mark, nrec := o.wrapStart()
		last := 0
		for j := i; j < len(keys); j++ {
			if done[j] {
				continue
			}
			oj, slot := s.ownerOf([]byte(keys[j].Key))
			if oj != o {
				continue
			}
			for d := i; d < len(keys); d++ { // the same key again
				if keys[d] == keys[j] {
					done[d] = true
				}
			}
			if o.db != keys[j].DB {
				o.UseDB(keys[j].DB)
			}
			o.streamKey(slot, []byte(keys[j].Key))
			last = slot
		}
		o.wrapEnd(mark, nrec, last)
		if o.db != saved {
			o.UseDB(saved)
		}
	}
}
