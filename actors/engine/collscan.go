package engine

import (
	"math"
	"strconv"
)

// maxRandomReply caps the elements SRANDMEMBER / ZRANDMEMBER / HRANDFIELD
// produce for a negative count. Redis builds such replies until the
// client's output buffer limit closes the connection; here the reply is
// built in one buffer first, so an absurd count is refused instead of
// exhausting memory.
const maxRandomReply = 1 << 24

// Error texts of the count arguments.
const (
	ErrMustBePositive = "ERR value is out of range, must be positive"
	errLongRange      = "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
	errOutOfRange     = "ERR value is out of range"
)

// randRepeats is the number of independent draws (repeats allowed) that a
// negative count, or 1, asks SRANDMEMBER / ZRANDMEMBER / HRANDFIELD for, or
// false after refusing more than maxRandomReply.
func (c *Call) RandRepeats(n int64) (int64, bool) {
	if n < 0 {
		n = -n
	}
	if n > maxRandomReply {
		c.W.Error(errOutOfRange)
		return 0, false
	}
	return n, true
}

// parseRandWith parses the "count [WITHSCORES|WITHVALUES]" of ZRANDMEMBER
// and HRANDFIELD (word is the flag, lower-case): the count as
// parseRandCount reads it and whether the flag was given; with it the
// count must lie within ±LONG_MAX/2, as Redis checks before doubling it.
func (c *Call) ParseRandWith(word string) (n int64, with, ok bool) {
	if n, ok = ParseRandCount(c, c.Args[2]); !ok {
		return 0, false, false
	}
	if len(c.Args) > 4 || (len(c.Args) == 4 && !EqFold(Cstr(c.Args[3]), word)) {
		c.W.Error(ErrSyntax)
		return 0, false, false
	}
	if len(c.Args) == 4 {
		if n < -math.MaxInt64/2 || n > math.MaxInt64/2 {
			c.W.Error(errOutOfRange)
			return 0, false, false
		}
		with = true
	}
	return n, with, true
}

// randomDistinct picks n distinct members of a collection of size members
// in random order: by shuffling a full listing when n is a large part of
// it, else by drawing until n distinct ones turned up (Redis's two cases).
func RandomDistinct(c *Call, size, n int, draw func() string, all func() []string) []string {
	if n*3 > size {
		ms := all()
		for i := 0; i < n; i++ {
			j := i + c.S.rng.IntN(len(ms)-i)
			ms[i], ms[j] = ms[j], ms[i]
		}
		return ms[:n]
	}
	seen := make(map[string]struct{}, n)
	out := make([]string, 0, n)
	for len(out) < n {
		m := draw()
		if _, dup := seen[m]; !dup {
			seen[m] = struct{}{}
			out = append(out, m)
		}
	}
	return out
}

// collScan holds the options of SSCAN / ZSCAN / HSCAN.
type CollScan struct {
	Count   int64
	Pattern []byte // nil: every member
}

// parseCollScan parses [MATCH pattern] [COUNT count] from argument 3.
func parseCollScan(c *Call) (CollScan, bool) {
	o := CollScan{Count: 10}
	args := c.Args
	for i := 3; i < len(args); i += 2 {
		if i+1 >= len(args) {
			c.W.Error(ErrSyntax)
			return o, false
		}
		switch opt, v := Cstr(args[i]), args[i+1]; {
		case EqFold(opt, "count"):
			n, ok := c.IntArg(v)
			if !ok {
				return o, false
			}
			if n < 1 {
				c.W.Error(ErrSyntax)
				return o, false
			}
			o.Count = n
		case EqFold(opt, "match"):
			o.Pattern = v
			if len(v) == 1 && v[0] == '*' {
				o.Pattern = nil
			}
		default:
			c.W.Error(ErrSyntax)
			return o, false
		}
	}
	return o, true
}

// startCollScan begins SSCAN / ZSCAN / HSCAN key cursor [MATCH pattern]
// [COUNT count] in Redis's order: the cursor, then the key (looked up
// with read; a missing one gets the empty reply), then the options. ok is
// false when the reply has been written.
func StartCollScan[T any](c *Call, read func(key []byte) (*T, bool)) (cur uint64, v *T, o CollScan, ok bool) {
	if cur, ok = ParseCursor(c.Args[2]); !ok {
		c.W.Error("ERR invalid cursor")
		return
	}
	if v, ok = read(c.Args[1]); !ok {
		return
	}
	if v == nil {
		c.WriteEmptyScan()
		return cur, nil, o, false
	}
	o, ok = parseCollScan(c)
	return
}

// writeEmptyScan is the reply to SSCAN/ZSCAN/HSCAN of a missing key.
func (c *Call) WriteEmptyScan() {
	c.W.Array(2)
	c.W.BulkString("0")
	c.W.Array(0)
}

// writeScanReply writes [cursor, items].
func (c *Call) WriteScanReply(cur uint64, items []string) {
	var tmp [20]byte
	c.W.Array(2)
	c.W.Bulk(strconv.AppendUint(tmp[:0], cur, 10))
	c.W.Array(len(items))
	for _, it := range items {
		c.W.BulkString(it)
	}
}

// scanSteps runs step until the cursor is 0, count items were gathered, or
// 10*count*mult steps were taken (Redis's bound on sparse tables; it
// doubles COUNT for the member/score pairs of ZSCAN).
func ScanSteps(cur uint64, count, mult int64, have func() int, step func(uint64) uint64) uint64 {
	budget := count * 10 * mult
	if count > 1<<58 {
		budget = 1 << 62
	}
	for {
		cur = step(cur)
		if cur == 0 || budget == 0 || int64(have()) >= count {
			return cur
		}
		budget--
	}
}

// parseRandCount parses the count of SRANDMEMBER / ZRANDMEMBER /
// HRANDFIELD (any long but LONG_MIN).
func ParseRandCount(c *Call, arg []byte) (int64, bool) {
	n, ok := c.IntArg(arg)
	if !ok {
		return 0, false
	}
	if n == -1<<63 {
		c.W.Error(errLongRange)
		return 0, false
	}
	return n, true
}
