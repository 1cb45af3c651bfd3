package zsetcmd

// Sorted sets, part 1: value helpers, score parsing and formatting, range
// parsing, OBJECT ENCODING / memory hooks. The value is an
// actors/engine/types/zset.ZSet in Entry.Obj.
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

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/actors/engine/types/cnum"
	"github.com/slotd/slotd/actors/engine/types/zset"
	"github.com/slotd/slotd/netio/command"
)

// zsetSpec builds the spec of a sorted-set command whose key is argument 1.
func zsetSpec(name string, arity int, summary, since string, h engine.Handler, flags ...string) *command.Spec {
	return engine.SzSpec("sorted-set", "sortedset", name, arity, summary, since, h, flags...)
}

// Error texts of sorted-set arguments.
const (
	errZNaN      = "ERR resulting score is not a number (NaN)"
	errZMinMax   = "ERR min or max is not a float"
	errZLexRange = "ERR min or max not valid string range item"
	errZWeight   = "ERR weight value is not a float"
)

// zsetOf returns e's sorted set (nil when e is nil); ok is false, after
// writing WRONGTYPE, when the key holds another type.
func zsetOf(c *engine.Call, e *keyspace.Entry) (*zset.ZSet, bool) {
	if e == nil {
		return nil, true
	}
	if e.Kind != keyspace.KindZSet {
		c.W.Error(engine.ErrWrongType)
		return nil, false
	}
	return e.Obj.(*zset.ZSet), true
}

func zsetRead(c *engine.Call, key []byte) (*zset.ZSet, bool) { return zsetOf(c, c.Lookup(key)) }

func zsetWrite(c *engine.Call, key []byte) (*keyspace.Entry, *zset.ZSet, bool) {
	e := c.LookupWrite(key)
	z, ok := zsetOf(c, e)
	return e, z, ok
}

// zsetCompactOK reports whether a set of n members, the longest maxLen
// bytes, fits Redis's listpack limits.
func zsetCompactOK(c *engine.Call, n, maxLen int) bool {
	return int64(n) <= c.ZsetMaxEntries() && int64(maxLen) <= c.ZsetMaxValue()
}

// zsetStoreResult stores a computed result (built uncompacted) in dst and
// replies with its size; an empty result deletes dst. Like Redis it is
// turned into a listpack when small enough.
func zsetStoreResult(c *engine.Call, dst []byte, z *zset.ZSet, maxLen int, event string) {
	if z.Len() == 0 {
		c.SzDeleteDst(dst)
		c.W.Int(0)
		return
	}
	if zsetCompactOK(c, z.Len(), maxLen) {
		z.MakeCompact()
	}
	c.SzStoreDst(dst, keyspace.KindZSet, z, engine.NotifyZSet, event)
	c.W.Int(int64(z.Len()))
}

// writeScore writes a score reply: "%.17g" (a RESP3 double or a RESP2
// bulk), inf and -inf spelled out.
func writeScore(c *engine.Call, f float64) { c.W.Double(f) }

// cStrtod is glibc's strtod (see cnum.Strtod).
func cStrtod(s []byte) (float64, int, bool) { return cnum.Strtod(s) }

// parseScoreArg is Redis's string2d: the whole argument must be a float.
func parseScoreArg(b []byte) (float64, bool) {
	if len(b) == 0 || cnum.IsSpace(b[0]) {
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
	b = engine.Cstr(b)
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
func writeScoredItem(c *engine.Call, member string, score float64, ws, pairs bool) {
	if ws && pairs {
		c.W.Array(2)
	}
	c.W.BulkString(member)
	if ws {
		writeScore(c, score)
	}
}

// writeScoredHeader writes the array header for n items.
func writeScoredHeader(c *engine.Call, n int, ws bool) {
	if ws && c.W.Proto < 3 {
		n *= 2
	}
	c.W.Array(n)
}

// writeNodes writes a member list reply, with scores when ws (flat in
// RESP2, [member, score] pairs in RESP3).
func writeNodes(c *engine.Call, nodes []*zset.Node, ws bool) {
	writeScoredHeader(c, len(nodes), ws)
	pairs := c.W.Proto >= 3
	for _, n := range nodes {
		writeScoredItem(c, n.Member(), n.Score(), ws, pairs)
	}
}
