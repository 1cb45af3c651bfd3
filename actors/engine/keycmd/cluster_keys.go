package keycmd

// CLUSTER COUNTKEYSINSLOT and CLUSTER GETKEYSINSLOT: keyless shard commands
// routed by their slot argument to the actor that owns that slot's keyspace.
// They report the keys this node holds whether or not it serves the slot,
// as in Redis (resharding tools list the keys left in a slot it gave away).
// The CLUSTER container is registered by netio/command, so adding to it here
// needs no init ordering.

import (
	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/resp"
	"github.com/slotd/slotd/slots"
)

func registerClusterKeys() {
	command.AddSubcommand("cluster", "countkeysinslot", engine.Handle(&command.Spec{Arity: 3, Flags: []string{"stale"},
		Categories: []string{"slow"}, Group: "cluster", Since: "3.0.0",
		Summary: "Return the number of local keys in the specified hash slot",
		Exec:    command.Shard, Route: countKeysRoute}, cmdCountKeysInSlot))
	command.AddSubcommand("cluster", "getkeysinslot", engine.Handle(&command.Spec{Arity: 4, Flags: []string{"stale"},
		Categories: []string{"slow"}, Tips: []string{"nondeterministic_output"}, Group: "cluster", Since: "3.0.0",
		Summary: "Return local key names in the specified hash slot",
		Exec:    command.Shard, Route: getKeysRoute}, cmdGetKeysInSlot))
}

// countKeysRoute: CLUSTER COUNTKEYSINSLOT slot.
func countKeysRoute(args [][]byte) (int, string) {
	slot, ok := resp.ParseInt(args[2])
	if !ok {
		return 0, engine.ErrNotInt
	}
	if slot < 0 || slot >= slots.NumSlots {
		return 0, "ERR Invalid slot"
	}
	return int(slot), ""
}

// getKeysRoute: CLUSTER GETKEYSINSLOT slot count. Both arguments must be
// integers before either is range-checked.
func getKeysRoute(args [][]byte) (int, string) {
	slot, ok := resp.ParseInt(args[2])
	if !ok {
		return 0, engine.ErrNotInt
	}
	count, ok := resp.ParseInt(args[3])
	if !ok {
		return 0, engine.ErrNotInt
	}
	if count < 0 || slot < 0 || slot >= slots.NumSlots {
		return 0, "ERR Invalid slot or number of keys"
	}
	return int(slot), ""
}

// cmdCountKeysInSlot is O(1): the slot's own dictionary size.
func cmdCountKeysInSlot(c *engine.Call) {
	n := 0
	if ks := c.Keyspace(); ks != nil {
		n = ks.Len()
	}
	c.W.Int(int64(n))
}

// cmdGetKeysInSlot lists up to count keys of the slot, O(count). Keys whose
// TTL has passed but that active expiry has not reclaimed yet are skipped.
func cmdGetKeysInSlot(c *engine.Call) {
	count, _ := resp.ParseInt(c.Args[3])
	ks := c.Keyspace()
	if ks == nil || count == 0 {
		c.W.Array(0)
		return
	}
	keys := make([]string, 0, min(count, int64(ks.Len())))
	ks.ForEach(func(e *keyspace.Entry) bool {
		if e.Expire == 0 || e.Expire > c.Now {
			keys = append(keys, e.Key())
		}
		return int64(len(keys)) < count
	})
	c.W.Array(len(keys))
	for _, k := range keys {
		c.W.BulkString(k)
	}
}
