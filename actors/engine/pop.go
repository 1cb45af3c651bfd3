package engine

import (
	"math"
	"math/big"
	"time"

	"github.com/slotd/slotd/actors/engine/types/ld"
)

// parseTimeout reads a blocking timeout in seconds (a float) the way Redis
// 7.0 does, replying with its error texts. Zero means forever. Redis reads
// a long double (string2ld) and converts ceil(seconds*1000) to long long
// without a range check: out of range (inf, 1e400, ≥ 2^63 ms) that gives
// LLONG_MIN, answered "timeout is negative", and a negative fraction of a
// millisecond rounds up to 0, which blocks forever. A positive timeout
// too far away to add to the clock (also the wrap-around Redis gets near
// 2^63 ms) never fires either.
func (c *Call) ParseTimeout(arg []byte) (time.Duration, bool) {
	f, st := ld.Parse(arg)
	if st == ld.Invalid {
		c.W.Error("ERR timeout is not a float or out of range")
		return 0, false
	}
	if st == ld.Infinite {
		c.W.Error("ERR timeout is negative")
		return 0, false
	}
	ms := ld.New().Mul(f, ld.FromInt64(1000))
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
func TimedOut(c *Call) { c.W.NullArray() }

// blockOrTimeout parks the command, or answers at once when it may not
// block (inside MULTI) — as if the timeout had fired.
func (c *Call) BlockOrTimeout(keys [][]byte, d time.Duration) {
	if !c.CanBlock() {
		TimedOut(c)
		return
	}
	c.Block(keys, d, TimedOut)
}

// mpopKeys reads the "numkeys key [key ...]" of [B]LMPOP / [B]ZMPOP from
// argument idx: the keys and the index of the direction after them, or
// false after replying the error.
func (c *Call) MpopKeys(idx int) (keys [][]byte, where int, ok bool) {
	n, msg := MpopNumkeys(c.Args, idx)
	if msg != "" {
		c.W.Error(msg)
		return nil, 0, false
	}
	where = idx + 1 + n
	return c.Args[idx+1 : where], where, true
}

// mpopNumkeys validates the numkeys of [B]LMPOP / [B]ZMPOP (at index at):
// at least one key, and room for the direction after the keys.
func MpopNumkeys(args [][]byte, at int) (int, string) {
	n, ok := ParseInt(args[at])
	if !ok || n < 1 {
		return 0, "ERR numkeys should be greater than 0"
	}
	if n >= int64(len(args)-at-1) {
		return 0, ErrSyntax
	}
	return int(n), ""
}

// mpopCount parses the optional "COUNT count" of [B]LMPOP / [B]ZMPOP from
// argument from to the end (1 when absent), replying on error.
func (c *Call) MpopCount(from int) (int64, bool) {
	args := c.Args
	count := int64(-1)
	for j := from; j < len(args); j++ {
		if count == -1 && EqFold(Cstr(args[j]), "count") && j+1 < len(args) {
			j++
			v, ok := ParseInt(args[j])
			if !ok || v < 1 {
				c.W.Error("ERR count should be greater than 0")
				return 0, false
			}
			count = v
			continue
		}
		c.W.Error(ErrSyntax)
		return 0, false
	}
	if count == -1 {
		count = 1
	}
	return count, true
}
