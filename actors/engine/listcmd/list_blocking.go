package listcmd

import (
	"time"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/netio/command"
)

// Blocking list commands: serve now when a list has elements, else park
// (Call.Block) until a write to one of the keys wakes the command, which
// then simply runs again, or until the timeout.

func registerListBlocking() {
	blockFlags := []string{"write", "blocking"}
	cats := []string{"write", "list", "slow", "blocking"}
	command.Register(
		engine.Handle(&command.Spec{Name: "blpop", Arity: -3, Flags: blockFlags, First: 1, Last: -2, Step: 1, Categories: cats,
			Group: "list", Since: "2.0.0", Summary: "Remove and get the first element in a list, or block until one is available",
			Exec: command.Shard}, cmdBLPop),
		engine.Handle(&command.Spec{Name: "brpop", Arity: -3, Flags: blockFlags, First: 1, Last: -2, Step: 1, Categories: cats,
			Group: "list", Since: "2.0.0", Summary: "Remove and get the last element in a list, or block until one is available",
			Exec: command.Shard}, cmdBRPop),
		engine.Handle(&command.Spec{Name: "blmove", Arity: 6, Flags: []string{"write", "denyoom", "blocking"}, First: 1, Last: 2, Step: 1,
			Categories: cats, Group: "list", Since: "6.2.0",
			Summary: "Pop an element from a list, push it to another list and return it; or block until one is available",
			Exec:    command.Shard}, cmdBLMove),
		engine.Handle(&command.Spec{Name: "brpoplpush", Arity: 4, Flags: []string{"write", "denyoom", "blocking"}, First: 1, Last: 2, Step: 1,
			Categories: cats, Group: "list", Since: "2.2.0",
			Summary: "Pop an element from a list, push it to another list and return it; or block until one is available",
			Exec:    command.Shard}, cmdBRPopLPush),
		engine.WithArgError(engine.Handle(&command.Spec{Name: "blmpop", Arity: -5, Flags: []string{"write", "blocking", "movablekeys"},
			Categories: cats, Group: "list", Since: "7.0.0",
			Summary: "Pop elements from a list, or block until one is available",
			Keys:    listNumKeysAt(2), Exec: command.Shard}, cmdBLMPop), engine.MpopArgErrors(2, true, parseLMPopArgs)),
	)
}

func cmdBLPop(c *engine.Call) { blockingPop(c, listHead) }
func cmdBRPop(c *engine.Call) { blockingPop(c, listTail) }

func blockingPop(c *engine.Call, end listEnd) {
	d, ok := c.ParseTimeout(c.Args[len(c.Args)-1])
	if !ok {
		return
	}
	keys := c.Args[1 : len(c.Args)-1]
	if popFirstNonEmpty(c, keys, end, 1, popKeyElement) {
		return
	}
	c.BlockOrTimeout(keys, d)
}

func cmdBLMove(c *engine.Call) {
	from, to, ok := parseMoveEnds(c)
	if !ok {
		return
	}
	d, ok := c.ParseTimeout(c.Args[5])
	if !ok {
		return
	}
	if moveNow(c, c.Args[1], c.Args[2], from, to) {
		return
	}
	blockMove(c, d)
}

func cmdBRPopLPush(c *engine.Call) {
	d, ok := c.ParseTimeout(c.Args[3])
	if !ok {
		return
	}
	if moveNow(c, c.Args[1], c.Args[2], listTail, listHead) {
		return
	}
	blockMove(c, d)
}

// blockMove parks BLMOVE/BRPOPLPUSH on their source. When they may not
// block (inside MULTI) Redis answers a null bulk, not the null array of a
// timeout.
func blockMove(c *engine.Call, d time.Duration) {
	if !c.CanBlock() {
		c.W.Null()
		return
	}
	c.BlockOrTimeout(c.Args[1:2], d)
}

func cmdBLMPop(c *engine.Call) {
	// Redis checks the other arguments before the timeout.
	a, ok := parseMPop(c, 2)
	if !ok {
		return
	}
	d, ok := c.ParseTimeout(c.Args[1])
	if !ok {
		return
	}
	if popFirstNonEmpty(c, a.keys, a.end, a.count, popKeyElements) {
		return
	}
	c.BlockOrTimeout(a.keys, d)
}
