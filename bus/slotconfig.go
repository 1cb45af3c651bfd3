package bus

import "github.com/slotd/slotd/slots"

// updateSlotsConfigWith applies the slots sender claims with configEpoch
// epoch (from its PING/PONG, or from an UPDATE about it), as Redis's
// clusterUpdateSlotsConfigWith:
//
//   - rule 1: a claimed slot nobody serves (or whose owner stopped
//     claiming it) is bound to sender;
//   - rule 2: a claimed slot served by a node with a smaller configEpoch is
//     rebound to sender;
//   - slots we are importing are left alone (the admin closes them),
//     unless the claim comes from the import source's shard (a failover,
//     setslot_repair.go);
//   - a slot sender serves but no longer claims stays bound to it but is
//     marked unclaimed, so another claim takes it without a newer epoch.
//
// If this left our primary (myself, or the primary we replicate) without
// slots, we follow the new owner: myself becomes its replica and the
// Replicate effect says so; with cluster-allow-replica-migration no only
// when the new owner's slots are exactly the ones our primary lost (a
// failover, not a resharding). A primary that lost only some of its slots must
// drop their keys (DropSlots).
func (s *State) updateSlotsConfigWith(sender *Node, epoch uint64, claimed *slots.Set) {
	if sender == s.myself {
		return // Redis discards UPDATE messages about myself
	}
	me := s.myself
	cur := me
	if !me.IsMaster() {
		cur = s.master(me)
	}
	var newMaster *Node
	var dirty []int
	changed := false
	senderSlots, migratedOurs := 0, 0
	for slot := 0; slot < slots.NumSlots; slot++ {
		owner := s.owner[slot]
		if !claimed.Has(slot) {
			if owner == sender {
				s.notClaiming.Add(slot)
			}
			continue
		}
		senderSlots++
		if owner == sender {
			s.notClaiming.Remove(slot)
			continue
		}
		if s.keepImporting(slot, sender) {
			continue
		}
		if !s.unclaimed(slot) && owner.ConfigEpoch >= epoch {
			continue
		}
		if owner == me {
			dirty = append(dirty, slot)
		}
		if owner != nil && owner == cur {
			newMaster = sender
			migratedOurs++
		}
		s.delSlot(slot)
		s.addSlot(sender, slot)
		changed = true
	}
	if len(s.migrating)+len(s.importing) > 0 && s.repairOpenSlots(sender, epoch, claimed) {
		changed = true // setslot_repair.go
	}
	if changed {
		s.slotsChanged()
	}
	switch {
	case newMaster != nil && cur.numSlots == 0 && (s.opts.AllowReplicaMigration || senderSlots == migratedOurs):
		s.setMyMaster(sender)
		s.handedOff(s.now)
	case me.IsReplica() && s.master(me) != nil && s.master(s.master(me)) != nil &&
		s.master(s.master(me)) != me:
		// Never replicate a replica: follow its primary instead.
		s.setMyMaster(s.master(s.master(me)))
	case len(dirty) > 0:
		s.fx.DropSlots = append(s.fx.DropSlots, dirty...)
	}
}

// setMyMaster turns myself into a replica of n (Redis's clusterSetMaster):
// a primary gives up its open slots; the shard id becomes n's.
func (s *State) setMyMaster(n *Node) {
	me := s.myself
	if n == me {
		return
	}
	if me.IsMaster() {
		me.Flags = me.Flags&^FlagMaster | FlagSlave
		clear(s.migrating)
		clear(s.importing)
	}
	me.MasterID = n.ID
	n.migrateTo = true
	s.resetManualFailover()
	if n.ShardID != "" {
		me.ShardID = n.ShardID
	}
	s.fx.Replicate = n.ID
	s.fx.Save = true
	s.fx.Publish = true
	s.updateState()
}
