package zsetcmd

import (
	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/netio/command"
)

// Blocking sorted-set pops: serve now, else park until a write to one of
// the keys (or the timeout), like the blocking list commands.

func registerZsetBlocking() {
	cats := []string{"write", "sortedset", "fast", "blocking"}
	command.Register(
		engine.Handle(&command.Spec{Name: "bzpopmin", Arity: -3, Flags: []string{"write", "noscript", "blocking", "fast"},
			First: 1, Last: -2, Step: 1, Categories: cats, Group: "sorted-set", Since: "5.0.0",
			Summary: "Remove and return the member with the lowest score from one or more sorted sets, or block until one is available",
			Exec:    command.Shard}, func(c *engine.Call) { blockingZPop(c, false) }),
		engine.Handle(&command.Spec{Name: "bzpopmax", Arity: -3, Flags: []string{"write", "noscript", "blocking", "fast"},
			First: 1, Last: -2, Step: 1, Categories: cats, Group: "sorted-set", Since: "5.0.0",
			Summary: "Remove and return the member with the highest score from one or more sorted sets, or block until one is available",
			Exec:    command.Shard}, func(c *engine.Call) { blockingZPop(c, true) }),
		engine.WithArgError(engine.NumkeysSpec(engine.Handle(&command.Spec{Name: "bzmpop", Arity: -5, Flags: []string{"write", "blocking", "movablekeys"},
			Categories: []string{"write", "sortedset", "slow", "blocking"}, Group: "sorted-set", Since: "7.0.0",
			Summary: "Remove and return members with scores in a sorted set or block until one is available",
			Exec:    command.Shard}, cmdBZMPop), 2, func(args [][]byte) (int, string) {
			return engine.MpopNumkeys(args, 2)
		}), engine.MpopArgErrors(2, true, parseZMPopArgs)),
	)
}

func blockingZPop(c *engine.Call, max bool) {
	d, ok := c.ParseTimeout(c.Args[len(c.Args)-1])
	if !ok {
		return
	}
	keys := c.Args[1 : len(c.Args)-1]
	if zpopTry(c, keys, max, 1, ZPopKeyFlat) {
		return
	}
	c.Unchanged()
	c.BlockOrTimeout(keys, d)
}

func cmdBZMPop(c *engine.Call) {
	// Redis checks the other arguments before the timeout.
	a, ok := ParseZMPop(c, 2)
	if !ok {
		return
	}
	d, ok := c.ParseTimeout(c.Args[1])
	if !ok {
		return
	}
	if zpopTry(c, a.Keys, a.Max, a.Count, ZPopKeyPairs) {
		return
	}
	c.Unchanged()
	c.BlockOrTimeout(a.Keys, d)
}
