package shard

// Sorted sets, part 1: value helpers, score parsing and formatting, range
// parsing, OBJECT ENCODING / memory hooks. The value is an
// actors/types/zset.ZSet in Entry.Obj.
//
// Scores are parsed as Redis parses them. ZADD, ZINCRBY and WEIGHTS use
// string2d (the whole argument must be a float; no leading space; overflow,
// underflow to zero and NaN refused), while the bounds of ZRANGEBYSCORE and
// friends use plain strtod on the C string (leading space allowed, an empty
// bound is 0, overflow is ±inf). Both are emulated on top of strconv.
//
// Replies format doubles as Redis 7.0 does: "%.17g" (writeScore). ZSCAN of
// a listpack-encoded set instead shows the score text the listpack holds,
// which is Redis's d2string (integers printed as integers).

import (
	"math"
	"strconv"

	"github.com/slotd/slotd/actors/keyspace"
	"github.com/slotd/slotd/actors/types/zset"
	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/resp"
)

// zsetSpec builds the spec of a sorted-set command whose key is argument 1.
func zsetSpec(name string, arity int, summary, since string, h Handler, flags ...string) *command.Spec {
	return szSpec("sorted-set", "sortedset", name, arity, summary, since, h, flags...)
}

// zsetEncoding is OBJECT ENCODING for a sorted-set entry.
func zsetEncoding(e *keyspace.Entry) string {
	if z, ok := e.Obj.(*zset.ZSet); ok {
		return z.Encoding()
	}
	return "skiplist"
}

// zsetMemory estimates the bytes a sorted-set value takes in Redis (for
// MEMORY USAGE): a listpack of member/score pairs, or the dict plus the
// skiplist nodes (about 1.33 levels per node) and member strings.
func zsetMemory(e *keyspace.Entry) int64 {
	z, ok := e.Obj.(*zset.ZSet)
	if !ok {
		return 0
	}
	const robj = 16
	n := int64(z.Len())
	if z.Encoding() == "listpack" {
		// header and end byte; per pair about 2 bytes of entry overhead for
		// the member and a score of up to 10 bytes.
		return robj + 7 + int64(z.MemberBytes()) + n*(2+10)
	}
	return robj + 16 + 56 + 8*int64(z.Buckets()) + n*24 + // dict
		48 + n*(32+22) + // skiplist header and nodes
		int64(z.MemberBytes()) + n*4 // member sds
}

// Error texts of sorted-set arguments.
const (
	errZNaN      = "ERR resulting score is not a number (NaN)"
	errZMinMax   = "ERR min or max is not a float"
	errZLexRange = "ERR min or max not valid string range item"
	errZWeight   = "ERR weight value is not a float"
)

func (c *Call) zsetMaxEntries() int64 { return c.S.group.ZSetMaxListpackEntries.Load() }
func (c *Call) zsetMaxValue() int64   { return c.S.group.ZSetMaxListpackValue.Load() }

// zsetOf returns e's sorted set (nil when e is nil); ok is false, after
// writing WRONGTYPE, when the key holds another type.
func (c *Call) zsetOf(e *keyspace.Entry) (*zset.ZSet, bool) {
	if e == nil {
		return nil, true
	}
	if e.Kind != keyspace.KindZSet {
		c.W.Error(ErrWrongType)
		return nil, false
	}
	return e.Obj.(*zset.ZSet), true
}

func (c *Call) zsetRead(key []byte) (*zset.ZSet, bool) { return c.zsetOf(c.Lookup(key)) }

func (c *Call) zsetWrite(key []byte) (*keyspace.Entry, *zset.ZSet, bool) {
	e := c.LookupWrite(key)
	z, ok := c.zsetOf(e)
	return e, z, ok
}

// zsetCompactOK reports whether a set of n members, the longest maxLen
// bytes, fits Redis's listpack limits.
func (c *Call) zsetCompactOK(n, maxLen int) bool {
	return int64(n) <= c.zsetMaxEntries() && int64(maxLen) <= c.zsetMaxValue()
}

// zsetStoreResult stores a computed result (built uncompacted) in dst and
// replies with its size; an empty result deletes dst. Like Redis it is
// turned into a listpack when small enough.
func (c *Call) zsetStoreResult(dst []byte, z *zset.ZSet, maxLen int) {
	if z.Len() == 0 {
		c.szDeleteDst(dst)
		c.W.Int(0)
		return
	}
	if c.zsetCompactOK(z.Len(), maxLen) {
		z.MakeCompact()
	}
	c.szStoreDst(dst, keyspace.KindZSet, z)
	c.W.Int(int64(z.Len()))
}

// writeScore writes a score reply: "%.17g" (a RESP3 double or a RESP2
// bulk), inf and -inf spelled out.
func (c *Call) writeScore(f float64) { c.W.Double(f) }

// appendD2S formats f as Redis's d2string, the text a listpack stores for
// a score: integral values within ±2^62 as integers, others as "%.17g".
func appendD2S(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "nan"...)
	case math.IsInf(f, 0):
		return resp.AppendFloat(dst, f)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0"...)
		}
		return append(dst, '0')
	case f >= -(1<<62) && f <= 1<<62 && f == math.Trunc(f):
		return strconv.AppendInt(dst, int64(f), 10)
	}
	return strconv.AppendFloat(dst, f, 'g', 17, 64)
}

// cStrtod is glibc's strtod on s: it skips leading white space and converts
// the longest prefix that forms a number ("inf", "infinity", "nan[(...)]",
// hexadecimal with an optional binary exponent, or decimal). It returns the
// value, the bytes consumed (0 when nothing converts) and whether the
// result overflowed or underflowed to zero (strtod's ERANGE cases that
// Redis refuses).
func cStrtod(s []byte) (v float64, n int, erange bool) {
	i := 0
	for i < len(s) && isCSpace(s[i]) {
		i++
	}
	start := i
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	sign := 1.0
	if neg {
		sign = -1
	}
	rest := s[i:]
	switch {
	case hasPrefixFold(rest, "infinity"):
		return math.Inf(int(sign)), i + 8, false
	case hasPrefixFold(rest, "inf"):
		return math.Inf(int(sign)), i + 3, false
	case hasPrefixFold(rest, "nan"):
		j := i + 3
		if j < len(s) && s[j] == '(' {
			k := j + 1
			for k < len(s) && (isAlnum(s[k]) || s[k] == '_') {
				k++
			}
			if k < len(s) && s[k] == ')' {
				j = k + 1
			}
		}
		return math.NaN(), j, false
	}
	if len(rest) >= 2 && rest[0] == '0' && (rest[1]|0x20) == 'x' {
		if end, nonzero, ok := scanHexFloat(rest[2:]); ok {
			text := append([]byte(nil), s[start:i+2+end]...)
			if !hasBinaryExp(text) {
				text = append(text, 'p', '0')
			}
			f, err := strconv.ParseFloat(string(text), 64)
			return f, i + 2 + end, isRangeErr(err) || (f == 0 && nonzero)
		}
		return 0 * sign, i + 1, false // just the "0"
	}
	end, nonzero := scanDecFloat(rest)
	if end == 0 {
		return 0, 0, false
	}
	f, err := strconv.ParseFloat(string(s[start:i+end]), 64)
	return f, i + end, isRangeErr(err) || (f == 0 && nonzero)
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// scanDecFloat measures digits[.digits][e[±]digits] (at least one mantissa
// digit) and reports whether a mantissa digit is non-zero.
func scanDecFloat(s []byte) (int, bool) {
	i, digits := 0, 0
	nonzero := false
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		nonzero = nonzero || s[i] != '0'
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			nonzero = nonzero || s[i] != '0'
			i++
			digits++
		}
	}
	if digits == 0 {
		return 0, false
	}
	return expEnd(s, i, 'e'), nonzero
}

// scanHexFloat measures hexdigits[.hexdigits][p[±]digits] after "0x".
func scanHexFloat(s []byte) (int, bool, bool) {
	i, digits := 0, 0
	nonzero := false
	for i < len(s) && isDigitBase(s[i], 16) {
		nonzero = nonzero || s[i] != '0'
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigitBase(s[i], 16) {
			nonzero = nonzero || s[i] != '0'
			i++
			digits++
		}
	}
	if digits == 0 {
		return 0, false, false
	}
	return expEnd(s, i, 'p'), nonzero, true
}

// expEnd extends i over an exponent introduced by mark when digits follow.
func expEnd(s []byte, i int, mark byte) int {
	if i < len(s) && (s[i]|0x20) == mark {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && s[j] >= '0' && s[j] <= '9' {
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			return j
		}
	}
	return i
}

func hasBinaryExp(b []byte) bool {
	for _, c := range b {
		if c == 'p' || c == 'P' {
			return true
		}
	}
	return false
}

func hasPrefixFold(s []byte, lower string) bool {
	return len(s) >= len(lower) && eqFold(s[:len(lower)], lower)
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || (c|0x20) >= 'a' && (c|0x20) <= 'z'
}

// parseScoreArg is Redis's string2d: the whole argument must be a float.
func parseScoreArg(b []byte) (float64, bool) {
	if len(b) == 0 || isCSpace(b[0]) {
		return 0, false
	}
	v, n, erange := cStrtod(b)
	if n != len(b) || erange || math.IsNaN(v) {
		return 0, false
	}
	return v, true
}

// parseScoreBound parses a ZRANGEBYSCORE bound: "(" makes it exclusive,
// the rest is strtod on the C string and must be used up.
func parseScoreBound(b []byte) (float64, bool, bool) {
	b = cstr(b)
	ex := false
	if len(b) > 0 && b[0] == '(' {
		ex = true
		b = b[1:]
	}
	v, n, _ := cStrtod(b)
	if n != len(b) || math.IsNaN(v) {
		return 0, false, false
	}
	return v, ex, true
}

// parseScoreRange parses min and max of a score range.
func parseScoreRange(min, max []byte) (zset.ScoreRange, bool) {
	var r zset.ScoreRange
	var ok1, ok2 bool
	r.Min, r.MinEx, ok1 = parseScoreBound(min)
	r.Max, r.MaxEx, ok2 = parseScoreBound(max)
	return r, ok1 && ok2
}

// parseLexBound parses "-", "+", "(member" or "[member".
func parseLexBound(b []byte) (zset.LexBound, bool) {
	if len(b) == 0 {
		return zset.LexBound{}, false
	}
	switch b[0] {
	case '+', '-':
		if len(b) > 1 && b[1] != 0 {
			return zset.LexBound{}, false
		}
		inf := 1
		if b[0] == '-' {
			inf = -1
		}
		return zset.LexBound{Inf: inf, Ex: true}, true
	case '(':
		return zset.LexBound{Val: string(b[1:]), Ex: true}, true
	case '[':
		return zset.LexBound{Val: string(b[1:])}, true
	}
	return zset.LexBound{}, false
}

func parseLexRange(min, max []byte) (zset.LexRange, bool) {
	lo, ok1 := parseLexBound(min)
	hi, ok2 := parseLexBound(max)
	return zset.LexRange{Min: lo, Max: hi}, ok1 && ok2
}

// writeScoredItem writes one member (with its score when ws): a [member,
// score] pair in RESP3 when pairs is set, flat otherwise.
func (c *Call) writeScoredItem(member string, score float64, ws, pairs bool) {
	if ws && pairs {
		c.W.Array(2)
	}
	c.W.BulkString(member)
	if ws {
		c.writeScore(score)
	}
}

// writeScoredHeader writes the array header for n items.
func (c *Call) writeScoredHeader(n int, ws bool) {
	if ws && c.W.Proto < 3 {
		n *= 2
	}
	c.W.Array(n)
}

// writeNodes writes a member list reply, with scores when ws (flat in
// RESP2, [member, score] pairs in RESP3).
func (c *Call) writeNodes(nodes []*zset.Node, ws bool) {
	c.writeScoredHeader(len(nodes), ws)
	pairs := c.W.Proto >= 3
	for _, n := range nodes {
		c.writeScoredItem(n.Member(), n.Score(), ws, pairs)
	}
}
