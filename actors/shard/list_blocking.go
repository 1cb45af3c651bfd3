package shard

import (
	"math"
	"math/big"
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
		withArgError(&command.Spec{Name: "blmpop", Arity: -5, Flags: []string{"write", "blocking", "movablekeys"},
			Categories: cats, Group: "list", Since: "7.0.0",
			Summary: "Pop elements from a list, or block until one is available",
			Keys:    listNumKeysAt(2), Exec: command.Shard, Handler: Handler(cmdBLMPop)}, mpopArgErrors(2, false, true)),
	)
}

// parseTimeout reads a blocking timeout in seconds (a float) the way Redis
// 7.0 does, replying with its error texts. Zero means forever. Redis reads
// a long double (string2ld) and converts ceil(seconds*1000) to long long
// without a range check: out of range (inf, 1e400, ≥ 2^63 ms) that gives
// LLONG_MIN, answered "timeout is negative", and a negative fraction of a
// millisecond rounds up to 0, which blocks forever. A positive timeout
// too far away to add to the clock (also the wrap-around Redis gets near
// 2^63 ms) never fires either.
func (c *Call) parseTimeout(arg []byte) (time.Duration, bool) {
	f, st := parseLD(arg)
	if st == ldInvalid {
		c.W.Error("ERR timeout is not a float or out of range")
		return 0, false
	}
	if st == ldInfinite {
		c.W.Error("ERR timeout is negative")
		return 0, false
	}
	ms := newLD().Mul(f, ldFromInt64(1000))
	n, acc := ms.Int(nil) // truncated toward zero
	if ms.Sign() > 0 && acc == big.Below {
		n.Add(n, big.NewInt(1)) // ceil
	}
	if !n.IsInt64() || n.Sign() < 0 {
		c.W.Error("ERR timeout is negative")
		return 0, false
	}
	v := n.Int64()
	if v > math.MaxInt64/int64(time.Millisecond) {
		return 0, true
	}
	return time.Duration(v) * time.Millisecond, true
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
	from, to, ok := c.parseMoveEnds()
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
