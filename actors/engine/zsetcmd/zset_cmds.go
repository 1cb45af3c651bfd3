package zsetcmd

// Sorted sets, part 2: single-key commands (ZADD, ZINCRBY, ZREM, ZSCORE,
// ZMSCORE, ZCARD, ZCOUNT, ZLEXCOUNT, ZRANK, ZREVRANK, ZREMRANGEBY*).

import (
	"math"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/actors/engine/types/zset"
	"github.com/slotd/slotd/netio/command"
)

func registerZsetCmds() {
	command.Register(
		zsetSpec("zadd", -4, "Add one or more members to a sorted set, or update its score if it already exists",
			"1.2.0", cmdZAdd, "write", "denyoom", "fast"),
		zsetSpec("zincrby", 4, "Increment the score of a member in a sorted set", "1.2.0", cmdZIncrBy,
			"write", "denyoom", "fast"),
		zsetSpec("zrem", -3, "Remove one or more members from a sorted set", "1.2.0", cmdZRem, "write", "fast"),
		zsetSpec("zscore", 3, "Get the score associated with the given member in a sorted set", "1.2.0", cmdZScore,
			"readonly", "fast"),
		zsetSpec("zmscore", -3, "Get the score associated with the given members in a sorted set", "6.2.0",
			cmdZMScore, "readonly", "fast"),
		zsetSpec("zcard", 2, "Get the number of members in a sorted set", "1.2.0", cmdZCard, "readonly", "fast"),
		zsetSpec("zcount", 4, "Count the members in a sorted set with scores within the given values", "2.0.0",
			cmdZCount, "readonly", "fast"),
		zsetSpec("zlexcount", 4, "Count the number of members in a sorted set between a given lexicographical range",
			"2.8.9", cmdZLexCount, "readonly", "fast"),
		zsetSpec("zrank", 3, "Determine the index of a member in a sorted set", "2.0.0", cmdZRank,
			"readonly", "fast"),
		zsetSpec("zrevrank", 3, "Determine the index of a member in a sorted set, with scores ordered from high to low",
			"2.0.0", cmdZRevRank, "readonly", "fast"),
		zsetSpec("zremrangebyrank", 4, "Remove all members in a sorted set within the given indexes", "2.0.0",
			cmdZRemRangeByRank, "write"),
		zsetSpec("zremrangebyscore", 4, "Remove all members in a sorted set within the given scores", "1.2.0",
			cmdZRemRangeByScore, "write"),
		zsetSpec("zremrangebylex", 4, "Remove all members in a sorted set between the given lexicographical range",
			"2.8.9", cmdZRemRangeByLex, "write"),
	)
}

// ZADD option flags.
const (
	zaddNX = 1 << iota
	zaddXX
	zaddGT
	zaddLT
	zaddIncr
)

// zaddResult says what zsetAdd did with one member.
type zaddResult uint8

const (
	zaddNop zaddResult = iota
	zaddAdded
	zaddUpdated
	zaddSame // processed, score unchanged
	zaddNaN
)

// cmdZAdd implements ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member ...
func cmdZAdd(c *engine.Call) { zadd(c, 0) }

// cmdZIncrBy is ZADD with INCR (Redis runs the same code, options parsing
// included).
func cmdZIncrBy(c *engine.Call) { zadd(c, zaddIncr) }

func zadd(c *engine.Call, flags int) {
	args := c.Args
	ch := false
	i := 2
	for ; i < len(args); i++ {
		o := engine.Cstr(args[i])
		switch {
		case engine.EqFold(o, "nx"):
			flags |= zaddNX
		case engine.EqFold(o, "xx"):
			flags |= zaddXX
		case engine.EqFold(o, "ch"):
			ch = true
		case engine.EqFold(o, "incr"):
			flags |= zaddIncr
		case engine.EqFold(o, "gt"):
			flags |= zaddGT
		case engine.EqFold(o, "lt"):
			flags |= zaddLT
		default:
			goto parsed
		}
	}
parsed:
	pairs := len(args) - i
	if pairs == 0 || pairs%2 != 0 {
		c.W.Error(engine.ErrSyntax)
		return
	}
	pairs /= 2
	nx, xx, gt, lt, incr := flags&zaddNX != 0, flags&zaddXX != 0, flags&zaddGT != 0, flags&zaddLT != 0,
		flags&zaddIncr != 0
	switch {
	case nx && xx:
		c.W.Error("ERR XX and NX options at the same time are not compatible")
		return
	case (gt && nx) || (lt && nx) || (gt && lt):
		c.W.Error("ERR GT, LT, and/or NX options at the same time are not compatible")
		return
	case incr && pairs > 1:
		c.W.Error("ERR INCR option supports a single increment-element pair")
		return
	}
	scores := make([]float64, pairs)
	for j := range scores {
		v, ok := parseScoreArg(args[i+2*j])
		if !ok {
			c.W.Error(engine.ErrNotFloat)
			return
		}
		scores[j] = v
	}
	key := args[1]
	e, z, ok := zsetWrite(c, key)
	if !ok {
		return
	}
	var added, updated, processed int64
	var score float64
	defer func() {
		switch {
		case added+updated == 0:
			c.Unchanged()
		case incr:
			c.Notify(engine.NotifyZSet, "zincr", key)
		default:
			c.Notify(engine.NotifyZSet, "zadd", key)
		}
	}()
	if e == nil && !xx {
		compact := c.ZsetMaxEntries() != 0 && int64(len(args[i+1])) <= c.ZsetMaxValue()
		z = zset.New(compact)
		c.Create(key, keyspace.KindZSet).Obj = z
	}
	if z != nil {
		for j, s := range scores {
			res, ns := zsetAdd(c, z, args[i+1+2*j], s, flags)
			switch res {
			case zaddNaN:
				c.W.Error(errZNaN)
				return
			case zaddAdded:
				added++
			case zaddUpdated:
				updated++
			}
			if res != zaddNop {
				processed++
			}
			score = ns
		}
	}
	switch {
	case incr && processed > 0:
		writeScore(c, score)
	case incr:
		c.W.Null()
	case ch:
		c.W.Int(added + updated)
	default:
		c.W.Int(added)
	}
}

// zsetAdd adds or updates one member under the ZADD flags and returns what
// happened with the member's new score. Growing a listpack-encoded set
// past zset-max-listpack-entries, or adding a member longer than
// zset-max-listpack-value, converts it for good.
func zsetAdd(c *engine.Call, z *zset.ZSet, member []byte, score float64, flags int) (zaddResult, float64) {
	if n := z.Get(member); n != nil {
		if flags&zaddNX != 0 {
			return zaddNop, 0
		}
		cur := n.Score()
		if flags&zaddIncr != 0 {
			score += cur
			if math.IsNaN(score) {
				return zaddNaN, 0
			}
		}
		if (flags&zaddLT != 0 && score >= cur) || (flags&zaddGT != 0 && score <= cur) {
			return zaddNop, 0
		}
		if score == cur {
			return zaddSame, score
		}
		z.SetScore(n, score)
		return zaddUpdated, score
	}
	if flags&zaddXX != 0 {
		return zaddNop, 0
	}
	if z.Compact && !zsetCompactOK(c, z.Len()+1, len(member)) {
		z.Compact = false
	}
	z.Add(member, score)
	return zaddAdded, score
}

func cmdZRem(c *engine.Call) {
	key := c.Args[1]
	e, z, ok := zsetWrite(c, key)
	if !ok {
		return
	}
	if e == nil {
		c.Unchanged()
		c.W.Int(0)
		return
	}
	c.RemoveMembers(key, engine.NotifyZSet, "zrem", z.Delete, z.Len)
}

func cmdZScore(c *engine.Call) {
	z, ok := zsetRead(c, c.Args[1])
	if !ok {
		return
	}
	writeMemberScore(c, z, c.Args[2])
}

// cmdZMScore treats a missing key as an empty set.
func cmdZMScore(c *engine.Call) {
	z, ok := zsetRead(c, c.Args[1])
	if !ok {
		return
	}
	c.W.Array(len(c.Args) - 2)
	for _, m := range c.Args[2:] {
		writeMemberScore(c, z, m)
	}
}

// writeMemberScore writes member m's score in z, or null when it has no
// such member (or z is nil: a missing key).
func writeMemberScore(c *engine.Call, z *zset.ZSet, m []byte) {
	if z != nil {
		if s, found := z.Score(m); found {
			writeScore(c, s)
			return
		}
	}
	c.W.Null()
}

func cmdZCard(c *engine.Call) {
	z, ok := zsetRead(c, c.Args[1])
	if !ok {
		return
	}
	if z == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(z.Len()))
}

func cmdZCount(c *engine.Call) { zcount(c, parseScoreRange, errZMinMax, (*zset.ZSet).CountInRange) }

func cmdZLexCount(c *engine.Call) { zcount(c, parseLexRange, errZLexRange, (*zset.ZSet).CountInLex) }

// zcount is ZCOUNT / ZLEXCOUNT: the range is parsed (errText when it is
// bad) before the key is looked at; a missing key counts 0.
func zcount[R any](c *engine.Call, parse func(min, max []byte) (R, bool), errText string,
	count func(*zset.ZSet, R) int) {
	r, ok := parse(c.Args[2], c.Args[3])
	if !ok {
		c.W.Error(errText)
		return
	}
	z, ok := zsetRead(c, c.Args[1])
	if !ok {
		return
	}
	if z == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(count(z, r)))
}

func cmdZRank(c *engine.Call)    { zrank(c, false) }
func cmdZRevRank(c *engine.Call) { zrank(c, true) }

func zrank(c *engine.Call, rev bool) {
	z, ok := zsetRead(c, c.Args[1])
	if !ok {
		return
	}
	if z == nil {
		c.W.Null()
		return
	}
	r, found := z.Rank(c.Args[2])
	if !found {
		c.W.Null()
		return
	}
	if rev {
		r = z.Len() - 1 - r
	}
	c.W.Int(int64(r))
}

// Kinds of range (ZRANGE's BYSCORE / BYLEX, or by position).
const (
	zrangeAuto = iota
	zrangeRank
	zrangeScore
	zrangeLex
)

func cmdZRemRangeByRank(c *engine.Call)  { zremrange(c, zrangeRank) }
func cmdZRemRangeByScore(c *engine.Call) { zremrange(c, zrangeScore) }
func cmdZRemRangeByLex(c *engine.Call)   { zremrange(c, zrangeLex) }

// zrangeBounds is a parsed range of one kind: ranks, scores or names.
type zrangeBounds struct {
	start, end int64
	score      zset.ScoreRange
	lex        zset.LexRange
}

// parseZRangeBounds parses the min and max arguments of a range of kind
// (zrangeRank, zrangeScore, else lex), replying with Redis's error text
// for that kind when they are bad.
func parseZRangeBounds(c *engine.Call, kind int, minArg, maxArg []byte) (zrangeBounds, bool) {
	var b zrangeBounds
	var ok bool
	switch kind {
	case zrangeRank:
		b.start, b.end, ok = c.IntArgs(minArg, maxArg)
	case zrangeScore:
		if b.score, ok = parseScoreRange(minArg, maxArg); !ok {
			c.W.Error(errZMinMax)
		}
	default:
		if b.lex, ok = parseLexRange(minArg, maxArg); !ok {
			c.W.Error(errZLexRange)
		}
	}
	return b, ok
}

// zremrange implements ZREMRANGEBYRANK / BYSCORE / BYLEX: the range is
// parsed before the key is looked at.
func zremrange(c *engine.Call, kind int) {
	b, ok := parseZRangeBounds(c, kind, c.Args[2], c.Args[3])
	if !ok {
		return
	}
	key := c.Args[1]
	e, z, ok := zsetWrite(c, key)
	if !ok {
		return
	}
	if e == nil {
		c.Unchanged()
		c.W.Int(0)
		return
	}
	var removed int
	switch kind {
	case zrangeRank:
		s, en, ok := engine.NormRange(b.start, b.end, int64(z.Len()))
		if !ok {
			c.Unchanged()
			c.W.Int(0)
			return
		}
		removed = z.DeleteRangeByRank(int(s), int(en))
	case zrangeScore:
		removed = z.DeleteRangeByScore(b.score)
	default:
		removed = z.DeleteRangeByLex(b.lex)
	}
	if z.Len() == 0 {
		c.Delete(key)
	}
	if removed == 0 {
		c.Unchanged()
	} else {
		c.Notify(engine.NotifyZSet, [...]string{zrangeRank: "zremrangebyrank", zrangeScore: "zremrangebyscore",
			zrangeLex: "zremrangebylex"}[kind], key)
		if z.Len() == 0 {
			c.Notify(engine.NotifyGeneric, "del", key)
		}
	}
	c.W.Int(int64(removed))
}
