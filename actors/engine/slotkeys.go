package engine

import (
	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/slots"
)

// Keys a command reaches beyond its own slot. Redis's SORT reads keys named
// by its BY and GET patterns and writes its STORE destination wherever
// they hash; here a command reaches every slot of the shard actor running
// it (in cluster mode the routing has already confined it to one slot).

// ClusterMode reports whether the node runs in cluster mode.
func (c *Call) ClusterMode() bool { return c.S.group.clusterMode() }

// LocalSlot returns key's slot and whether this shard actor holds it.
func (c *Call) LocalSlot(key []byte) (int, bool) {
	slot := slots.HashSlot(key)
	return slot, slot%c.S.n == c.S.ID
}

// InSlot runs fn with a copy of c whose keys hash to slot, one of this
// actor's slots (see LocalSlot): what fn marks (Unchanged, Signal,
// Propagate) counts for c.
func (c *Call) InSlot(slot int, fn func(*Call)) {
	if slot == c.Slot {
		fn(c)
		return
	}
	sub := *c
	sub.Slot = slot
	fn(&sub)
	c.unchanged = c.unchanged || sub.unchanged
	c.signalled = c.signalled || sub.signalled
	c.propagated = c.propagated || sub.propagated
}

// LookupAny is Lookup for a key of any slot of this actor; local is false
// (and e nil) when the key's slot belongs to another shard actor.
func (c *Call) LookupAny(key []byte) (e *keyspace.Entry, local bool) {
	slot, ok := c.LocalSlot(key)
	if !ok {
		return nil, false
	}
	c.InSlot(slot, func(sc *Call) { e = sc.Lookup(key) })
	return e, true
}
