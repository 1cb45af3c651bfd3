package shard

import (
	"math"
	"strconv"
	"time"

	"github.com/slotd/slotd/netio/command"
)

// Blocking list commands: serve now when a list has elements, else park
// (Call.Block) until a write to one of the keys wakes the command, which
// then simply runs again, or until the timeout.

func init() {
	blockFlags := []string{"write", "blocking"}
	cats := []string{"write", "list", "slow", "blocking"}
	command.Register(
		&command.Spec{Name: "blpop", Arity: -3, Flags: blockFlags, First: 1, Last: -2, Step: 1, Categories: cats,
			Group: "list", Since: "2.0.0", Summary: "Remove and get the first element in a list, or block until one is available",
			Exec: command.Shard, Handler: Handler(cmdBLPop)},
		&command.Spec{Name: "brpop", Arity: -3, Flags: blockFlags, First: 1, Last: -2, Step: 1, Categories: cats,
			Group: "list", Since: "2.0.0", Summary: "Remove and get the last element in a list, or block until one is available",
			Exec: command.Shard, Handler: Handler(cmdBRPop)},
		&command.Spec{Name: "blmove", Arity: 6, Flags: []string{"write", "denyoom", "blocking"}, First: 1, Last: 2, Step: 1,
			Categories: cats, Group: "list", Since: "6.2.0",
			Summary: "Pop an element from a list, push it to another list and return it; or block until one is available",
			Exec:    command.Shard, Handler: Handler(cmdBLMove)},
		&command.Spec{Name: "brpoplpush", Arity: 4, Flags: []string{"write", "denyoom", "blocking"}, First: 1, Last: 2, Step: 1,
			Categories: cats, Group: "list", Since: "2.2.0",
			Summary: "Pop an element from a list, push it to another list and return it; or block until one is available",
			Exec:    command.Shard, Handler: Handler(cmdBRPopLPush)},
		&command.Spec{Name: "blmpop", Arity: -5, Flags: []string{"write", "blocking", "movablekeys"}, Categories: cats,
			Group: "list", Since: "7.0.0", Summary: "Pop elements from a list, or block until one is available",
			Keys: listNumKeysAt(2), Exec: command.Shard, Handler: Handler(cmdBLMPop)},
	)
}

// parseTimeout reads a blocking timeout in seconds (a float) the way Redis
// does, replying with its error texts. Zero means forever.
func (c *Call) parseTimeout(arg []byte) (time.Duration, bool) {
	f, err := strconv.ParseFloat(string(arg), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		c.W.Error("ERR timeout is not a float or out of range")
		return 0, false
	}
	if f < 0 {
		c.W.Error("ERR timeout is negative")
		return 0, false
	}
	ms := f * 1000
	if ms > float64(math.MaxInt64/int64(time.Millisecond)) {
		c.W.Error("ERR timeout is out of range")
		return 0, false
	}
	d := time.Duration(ms * float64(time.Millisecond))
	if (f > 0 || nonZeroMantissa(arg)) && d <= 0 {
		// A positive timeout too small for a float64 ("1e-400") must
		// still time out, not block forever.
		d = time.Millisecond
	}
	return d, true
}

// nonZeroMantissa reports whether a decimal number has a non-zero digit
// before its exponent (ParseFloat rounds tiny values to 0).
func nonZeroMantissa(b []byte) bool {
	for _, ch := range b {
		if ch == 'e' || ch == 'E' {
			return false
		}
		if ch >= '1' && ch <= '9' {
			return true
		}
	}
	return false
}

// timedOut is the reply of every blocking list command that gave up.
func timedOut(c *Call) { c.W.NullArray() }

// blockOrTimeout parks the command, or answers at once when it may not
// block (inside MULTI) — as if the timeout had fired.
func (c *Call) blockOrTimeout(keys [][]byte, d time.Duration) {
	if !c.CanBlock() {
		timedOut(c)
		return
	}
	c.Block(keys, d, timedOut)
}

func cmdBLPop(c *Call) { blockingPop(c, listHead) }
func cmdBRPop(c *Call) { blockingPop(c, listTail) }

func blockingPop(c *Call, end listEnd) {
	d, ok := c.parseTimeout(c.Args[len(c.Args)-1])
	if !ok {
		return
	}
	keys := c.Args[1 : len(c.Args)-1]
	if c.popFirstNonEmpty(keys, end, 1, popKeyElement) {
		return
	}
	c.blockOrTimeout(keys, d)
}

func cmdBLMove(c *Call) {
	from, ok := c.parseListEnd(c.Args[3])
	if !ok {
		return
	}
	to, ok := c.parseListEnd(c.Args[4])
	if !ok {
		return
	}
	d, ok := c.parseTimeout(c.Args[5])
	if !ok {
		return
	}
	if c.moveNow(c.Args[1], c.Args[2], from, to) {
		return
	}
	c.blockMove(d)
}

func cmdBRPopLPush(c *Call) {
	d, ok := c.parseTimeout(c.Args[3])
	if !ok {
		return
	}
	if c.moveNow(c.Args[1], c.Args[2], listTail, listHead) {
		return
	}
	c.blockMove(d)
}

// blockMove parks BLMOVE/BRPOPLPUSH on their source. When they may not
// block (inside MULTI) Redis answers a null bulk, not the null array of a
// timeout.
func (c *Call) blockMove(d time.Duration) {
	if !c.CanBlock() {
		c.W.Null()
		return
	}
	c.blockOrTimeout(c.Args[1:2], d)
}

func cmdBLMPop(c *Call) {
	// Redis checks the other arguments before the timeout.
	a, ok := c.parseMPop(2)
	if !ok {
		return
	}
	d, ok := c.parseTimeout(c.Args[1])
	if !ok {
		return
	}
	if c.popFirstNonEmpty(a.keys, a.end, a.count, popKeyElements) {
		return
	}
	c.blockOrTimeout(a.keys, d)
}
