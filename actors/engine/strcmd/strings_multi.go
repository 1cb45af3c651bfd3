package strcmd

import (
	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/netio/command"
)

// Multi-key string commands. Dispatch has already refused keys in different
// slots (CROSSSLOT), so each runs whole inside one keyspace.

func registerStringsMulti() {
	mget := strSpec("mget", -2, "Get the values of all the given keys", "1.0.0", cmdMGet, "readonly", "fast")
	mget.Last = -1
	mget.Tips = []string{"request_policy:multi_shard"}

	mset := strSpec("mset", -3, "Set multiple keys to multiple values", "1.0.1", cmdMSet, "write", "denyoom")
	mset.Last, mset.Step = -1, 2
	mset.Tips = []string{"request_policy:multi_shard", "response_policy:all_succeeded"}

	msetnx := strSpec("msetnx", -3, "Set multiple keys to multiple values, only if none of the keys exist",
		"1.0.1", cmdMSetNX, "write", "denyoom")
	msetnx.Last, msetnx.Step = -1, 2
	msetnx.Tips = []string{"request_policy:multi_shard", "response_policy:agg_min"}

	command.Register(mget, mset, msetnx)
}

// cmdMGet replies with one bulk per key; missing keys and keys of other
// types are nil.
func cmdMGet(c *engine.Call) {
	c.W.Array(len(c.Args) - 1)
	for _, k := range c.Args[1:] {
		e := c.Lookup(k)
		if e == nil || e.Kind != keyspace.KindString {
			c.W.Null()
			continue
		}
		c.W.Bulk(e.Str)
	}
}

func cmdMSet(c *engine.Call) {
	if !msetArity(c) {
		return
	}
	msetAll(c)
	c.W.OK()
}

// cmdMSetNX sets every pair only if none of the keys exists (1), else
// nothing (0).
func cmdMSetNX(c *engine.Call) {
	if !msetArity(c) {
		return
	}
	for j := 1; j < len(c.Args); j += 2 {
		if c.LookupWrite(c.Args[j]) != nil {
			c.Unchanged()
			c.W.Int(0)
			return
		}
	}
	msetAll(c)
	c.W.Int(1)
}

// msetArity rejects a key without a value (the spec's arity only says "at
// least 3").
func msetArity(c *engine.Call) bool {
	if len(c.Args)%2 == 0 {
		c.W.Error("ERR wrong number of arguments for '" + c.Cmd.Spec.Name + "' command")
		return false
	}
	return true
}

func msetAll(c *engine.Call) {
	for j := 1; j < len(c.Args); j += 2 {
		k := c.Args[j]
		setString(c, k, c.LookupWrite(k), c.Args[j+1], false)
		c.Notify(engine.NotifyString, "set", k)
	}
}
