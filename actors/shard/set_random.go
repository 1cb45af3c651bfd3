package shard

// Set commands, part 3: SPOP, SRANDMEMBER and SSCAN.

import (
	"math"
	"strconv"

	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/actors/engine/types/set"
	"github.com/slotd/slotd/netio/command"
)

func init() {
	command.Register(
		szTips(setSpec("spop", -2, "Remove and return one or multiple random members from a set", "1.0.0",
			cmdSPop, "write", "fast"), "nondeterministic_output"),
		szTips(setSpec("srandmember", -2, "Get one or multiple random members from a set", "1.0.0",
			cmdSRandMember, "readonly"), "nondeterministic_output"),
		szTips(setSpec("sscan", -3, "Incrementally iterate Set elements", "2.8.0", cmdSScan, "readonly"),
			"nondeterministic_output"),
	)
}

// maxRandomReply caps the elements SRANDMEMBER / ZRANDMEMBER / HRANDFIELD
// produce for a negative count. Redis builds such replies until the
// client's output buffer limit closes the connection; here the reply is
// built in one buffer first, so an absurd count is refused instead of
// exhausting memory.
const maxRandomReply = 1 << 24

// Error texts of the count arguments.
const (
	errMustBePositive = "ERR value is out of range, must be positive"
	errLongRange      = "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
	errOutOfRange     = "ERR value is out of range"
)

// cmdSPop implements SPOP key [count].
func cmdSPop(c *Call) {
	if len(c.Args) > 3 {
		c.W.Error(ErrSyntax)
		return
	}
	key := c.Args[1]
	if len(c.Args) == 3 {
		n, ok := parseInt(c.Args[2])
		if !ok || n < 0 {
			c.W.Error(errMustBePositive)
			return
		}
		c.spopCount(key, n)
		return
	}
	e, s, ok := c.setWrite(key)
	if !ok {
		return
	}
	if e == nil {
		c.Unchanged()
		c.W.Null()
		return
	}
	m := s.Random(c.S.rng)
	s.Remove([]byte(m))
	c.W.BulkString(m)
	if s.Len() == 0 {
		c.Delete(key)
	}
	if c.Replicating() {
		c.Propagate(cmdSREM, key, []byte(m)) // the pick is random: replicas get the outcome
	}
}

// spopCount pops up to n members. Like Redis it returns the whole set when
// n covers it, pops one by one when few members are taken, and otherwise
// keeps a random remainder in a new set and returns the rest.
func (c *Call) spopCount(key []byte, n int64) {
	e, s, ok := c.setWrite(key)
	if !ok {
		return
	}
	if e == nil || n == 0 {
		c.Unchanged()
		c.W.Set(0)
		return
	}
	size := int64(s.Len())
	max := c.maxIntset()
	if n >= size {
		// Redis replies with SUNION of the key: a rebuilt set, so a small
		// integer set comes out sorted.
		all := set.NewIntset()
		s.ForEach(func(m string) bool {
			all.AddString(m, max)
			return true
		})
		c.W.Set(all.Len())
		all.ForEach(func(m string) bool {
			c.W.BulkString(m)
			return true
		})
		c.Delete(key)
		if c.Replicating() {
			c.Propagate(cmdDEL, key)
		}
		return
	}
	c.W.Set(int(n))
	remaining := size - n
	// Replicas get SREM of the popped members.
	var popped [][]byte
	if c.S.streaming() {
		popped = append(make([][]byte, 0, n+2), cmdSREM, key)
	}
	if remaining*5 > n {
		for i := int64(0); i < n; i++ {
			m := s.Random(c.S.rng)
			s.Remove([]byte(m))
			c.W.BulkString(m)
			if popped != nil {
				popped = append(popped, []byte(m))
			}
		}
		c.propagatePopped(popped)
		return
	}
	var kept *set.Set
	for i := int64(0); i < remaining; i++ {
		m := s.Random(c.S.rng)
		if kept == nil {
			kept = set.NewFor([]byte(m))
		}
		kept.AddString(m, max)
		s.Remove([]byte(m))
	}
	s.ForEach(func(m string) bool {
		c.W.BulkString(m)
		if popped != nil {
			popped = append(popped, []byte(m))
		}
		return true
	})
	e.Obj = kept
	c.propagatePopped(popped)
}

// propagatePopped streams the SREM built by spopCount (nil when the
// streams are off).
func (c *Call) propagatePopped(srem [][]byte) {
	if srem == nil {
		c.NoPropagate()
		return
	}
	c.Propagate(srem...)
}

// parseRandCount parses the count of SRANDMEMBER / ZRANDMEMBER /
// HRANDFIELD (any long but LONG_MIN).
func parseRandCount(c *Call, arg []byte) (int64, bool) {
	n, ok := c.intArg(arg)
	if !ok {
		return 0, false
	}
	if n == -1<<63 {
		c.W.Error(errLongRange)
		return 0, false
	}
	return n, true
}

// randRepeats is the number of independent draws (repeats allowed) that a
// negative count, or 1, asks SRANDMEMBER / ZRANDMEMBER / HRANDFIELD for, or
// false after refusing more than maxRandomReply.
func (c *Call) randRepeats(n int64) (int64, bool) {
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
func (c *Call) parseRandWith(word string) (n int64, with, ok bool) {
	if n, ok = parseRandCount(c, c.Args[2]); !ok {
		return 0, false, false
	}
	if len(c.Args) > 4 || (len(c.Args) == 4 && !eqFold(cstr(c.Args[3]), word)) {
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

// cmdSRandMember implements SRANDMEMBER key [count]. A negative count
// allows repeats; a positive one returns distinct members.
func cmdSRandMember(c *Call) {
	if len(c.Args) > 3 {
		c.W.Error(ErrSyntax)
		return
	}
	key := c.Args[1]
	if len(c.Args) == 2 {
		s, ok := c.setRead(key)
		if !ok {
			return
		}
		if s == nil {
			c.W.Null()
			return
		}
		c.W.BulkString(s.Random(c.S.rng))
		return
	}
	n, ok := parseRandCount(c, c.Args[2])
	if !ok {
		return
	}
	s, ok := c.setRead(key)
	if !ok {
		return
	}
	if s == nil || n == 0 {
		c.W.Array(0)
		return
	}
	if n < 0 || n == 1 {
		if n, ok = c.randRepeats(n); !ok {
			return
		}
		c.W.Array(int(n))
		for i := int64(0); i < n; i++ {
			c.W.BulkString(s.Random(c.S.rng))
		}
		return
	}
	if n >= int64(s.Len()) {
		c.W.Array(s.Len())
		s.ForEach(func(m string) bool {
			c.W.BulkString(m)
			return true
		})
		return
	}
	out := randomDistinct(c, s.Len(), int(n), func() string { return s.Random(c.S.rng) }, s.Members)
	c.W.Array(len(out))
	for _, m := range out {
		c.W.BulkString(m)
	}
}

// randomDistinct picks n distinct members of a collection of size members
// in random order: by shuffling a full listing when n is a large part of
// it, else by drawing until n distinct ones turned up (Redis's two cases).
func randomDistinct(c *Call, size, n int, draw func() string, all func() []string) []string {
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
type collScan struct {
	count   int64
	pattern []byte // nil: every member
}

// parseCollScan parses [MATCH pattern] [COUNT count] from argument 3.
func parseCollScan(c *Call) (collScan, bool) {
	o := collScan{count: 10}
	args := c.Args
	for i := 3; i < len(args); i += 2 {
		if i+1 >= len(args) {
			c.W.Error(ErrSyntax)
			return o, false
		}
		switch opt, v := cstr(args[i]), args[i+1]; {
		case eqFold(opt, "count"):
			n, ok := c.intArg(v)
			if !ok {
				return o, false
			}
			if n < 1 {
				c.W.Error(ErrSyntax)
				return o, false
			}
			o.count = n
		case eqFold(opt, "match"):
			o.pattern = v
			if len(v) == 1 && v[0] == '*' {
				o.pattern = nil
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
func startCollScan[T any](c *Call, read func(key []byte) (*T, bool)) (cur uint64, v *T, o collScan, ok bool) {
	if cur, ok = parseCursor(c.Args[2]); !ok {
		c.W.Error("ERR invalid cursor")
		return
	}
	if v, ok = read(c.Args[1]); !ok {
		return
	}
	if v == nil {
		c.writeEmptyScan()
		return cur, nil, o, false
	}
	o, ok = parseCollScan(c)
	return
}

// writeEmptyScan is the reply to SSCAN/ZSCAN/HSCAN of a missing key.
func (c *Call) writeEmptyScan() {
	c.W.Array(2)
	c.W.BulkString("0")
	c.W.Array(0)
}

// writeScanReply writes [cursor, items].
func (c *Call) writeScanReply(cur uint64, items []string) {
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
func scanSteps(cur uint64, count, mult int64, have func() int, step func(uint64) uint64) uint64 {
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

// cmdSScan implements SSCAN key cursor [MATCH pattern] [COUNT count].
func cmdSScan(c *Call) {
	cur, s, o, ok := startCollScan(c, c.setRead)
	if !ok {
		return
	}
	var ms []string
	cur = scanSteps(cur, o.count, 1, func() int { return len(ms) }, func(cur uint64) uint64 {
		return s.Scan(cur, func(m string) { ms = append(ms, m) })
	})
	if o.pattern != nil {
		kept := ms[:0]
		for _, m := range ms {
			if keyspace.MatchKey(o.pattern, m, false) {
				kept = append(kept, m)
			}
		}
		ms = kept
	}
	c.writeScanReply(cur, ms)
}
