package bus

import "github.com/slotd/slotd/slots"

// Open slots across a failover (Valkey 8): when the primary on the other
// side of a migration is replaced by one of its replicas, this node's
// migrating/importing state follows the new primary instead of pointing at
// a failed node or a replica. updateSlotsConfigWith calls
// repairOpenSlots with every slot claim it processes:
//
//   - importing from X, and a node of X's shard now claims the slot with a
//     greater configEpoch (X failed over): the slot is rebound to the
//     claimer (rather than left alone as Redis 7.0 does for an importing
//     slot) and imported from it;
//   - migrating to X, and a primary of X's shard that does not claim the
//     slot announces a greater configEpoch than X, or X is now a replica
//     (X failed over): the slot migrates to the announcer;
//   - importing from X, and X stops claiming the slot while this node is a
//     primary (and no third node took it): X gave it away but this node
//     missed the SETSLOT NODE that closes the import (it was promoted in the
//     meantime); the import is closed and, if the slot is not ours yet,
//     taken with a new configEpoch.

// sameShard reports whether a and b are one shard: the same shard id, or a
// primary and its replica.
func (s *State) sameShard(a, b *Node) bool {
	if a == b || (a.ShardID != "" && a.ShardID == b.ShardID) {
		return true
	}
	pa, pb := a, b
	if m := s.master(a); m != nil {
		pa = m
	}
	if m := s.master(b); m != nil {
		pb = m
	}
	return pa == pb
}

// keepImporting reports whether a claim of slot by sender must leave the
// slot alone because this node imports it (Redis 7.0: the admin closes the
// import), which is so unless sender took over the import source's shard.
func (s *State) keepImporting(slot int, sender *Node) bool {
	from := s.importing[slot]
	return from != nil && (from == sender || !s.sameShard(from, sender))
}

// repairOpenSlots applies the rules above for sender's claim (epoch, the
// slots it claims); it reports whether slot ownership changed.
func (s *State) repairOpenSlots(sender *Node, epoch uint64, claimed *slots.Set) (owned bool) {
	if !sender.IsMaster() {
		return false
	}
	changed := false
	for slot, to := range s.migrating {
		if to != sender && !claimed.Has(slot) && (to.ConfigEpoch < epoch || to.IsReplica()) &&
			s.sameShard(to, sender) {
			s.migrating[slot] = sender
			changed = true
		}
	}
	for slot, from := range s.importing {
		switch {
		case from != sender && claimed.Has(slot) && s.sameShard(from, sender):
			s.importing[slot] = sender
			changed = true
		case from == sender && !claimed.Has(slot) && s.myself.IsMaster() &&
			(s.owner[slot] == sender || s.owner[slot] == s.myself || s.owner[slot] == nil):
			delete(s.importing, slot)
			changed = true
			if s.owner[slot] != s.myself {
				s.delSlot(slot)
				s.addSlot(s.myself, slot)
				s.BumpEpoch()
				owned = true
			}
		}
	}
	if changed {
		s.fx.Save = true
		s.fx.Publish = true
	}
	return owned
}
