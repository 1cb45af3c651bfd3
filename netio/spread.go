package netio

import (
	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/slots"
)

// Spread commands. Outside cluster mode Redis runs a multi-key command
// whose keys hash to different slots: RENAME, COPY, SMOVE, LMOVE, the
// *STORE commands, PFMERGE, MSETNX, BITOP, SINTER, ZUNION, LMPOP... Those
// that split.go cannot split into per-slot parts go, marked Spread, to the
// highest shard owning one of their keys, which reaches every key in its
// own slot and shard (actors/engine/spread.go). When the keys live in
// several shards, the group runs as a joint step that takes every shard
// with a batch in it, lowest first, and the highest runs its batch last:
// every command the read sent earlier to the other shards has run, and no
// other client sees the command half done. The group ends with it (later
// commands of the read go in the next group, which waits for this one), so
// none of them overtakes it.
//
// Still refused with CROSSSLOT over several shards: blocking commands
// (their wake-up would have to come from every shard), commands inside
// MULTI, scripts, SORT (its own rules), MIGRATE.

// spreadShards returns, for a command routed CROSSSLOT in standalone mode,
// the first key's slot and the shards its keys live in (ascending); ok is
// false when the command cannot run spread.
func (s *Server) spreadShards(spec *command.Spec, args [][]byte, inTx bool) (slot int, shards []int, ok bool) {
	if spec.ScriptCache || spec.Route != nil || spec.ActorKeys || spec.WatchCmd || spec.Isolated || spec.Name == "migrate" {
		return 0, nil, false
	}
	var idxBuf [8]int
	idx, err := spec.KeyIndexes(idxBuf[:0], args)
	if err != nil || len(idx) == 0 {
		return 0, nil, false
	}
	slot = slots.HashSlot(args[idx[0]])
	for _, k := range idx {
		i := s.shards.Of(slots.HashSlot(args[k]))
		j := 0
		for j < len(shards) && shards[j] < i {
			j++
		}
		if j == len(shards) || shards[j] != i {
			shards = append(shards, 0)
			copy(shards[j+1:], shards[j:])
			shards[j] = i
		}
	}
	if len(shards) > 1 && (inTx || spec.Blocking()) {
		return 0, nil, false
	}
	return slot, shards, true
}
