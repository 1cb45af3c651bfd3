package engine

import (
	"math/big"

	"github.com/slotd/slotd/actors/engine/types/ld"
)

// SumLD is INCRBYFLOAT's and HINCRBYFLOAT's cur+incr (with their parse
// statuses) in long double arithmetic (types/ld), or false after replying
// that the increment would produce NaN or Infinity: an infinite operand or
// a sum beyond the long double range.
func (c *Call) SumLD(cur *big.Float, curSt ld.Status, incr *big.Float, incrSt ld.Status) (*big.Float, bool) {
	if curSt == ld.Infinite || incrSt == ld.Infinite {
		c.W.Error("ERR increment would produce NaN or Infinity")
		return nil, false
	}
	sum, ok := ld.Add(cur, incr)
	if !ok {
		c.W.Error("ERR increment would produce NaN or Infinity")
	}
	return sum, ok
}
