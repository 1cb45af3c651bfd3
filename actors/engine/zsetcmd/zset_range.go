package zsetcmd

// Sorted sets, part 3: ZRANGE and ZRANGESTORE with BYSCORE / BYLEX / REV /
// LIMIT / WITHSCORES, and the older ZRANGEBYSCORE, ZREVRANGEBYSCORE,
// ZRANGEBYLEX, ZREVRANGEBYLEX and ZREVRANGE, which are the same code with
// the range kind or direction fixed (so the options they reject are the
// ones Redis rejects).

import (
	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/actors/engine/types/zset"
	"github.com/slotd/slotd/netio/command"
)

func registerZsetRange() {
	command.Register(
		zsetSpec("zrange", -4, "Return a range of members in a sorted set", "1.2.0", cmdZRange, "readonly"),
		engine.SzKeys(zsetSpec("zrangestore", -5, "Store a range of members from sorted set into another key", "6.2.0",
			cmdZRangeStore, "write", "denyoom"), 1, 2, 1),
		zsetSpec("zrangebyscore", -4, "Return a range of members in a sorted set, by score", "1.0.5",
			cmdZRangeByScore, "readonly"),
		zsetSpec("zrevrangebyscore", -4,
			"Return a range of members in a sorted set, by score, with scores ordered from high to low", "2.2.0",
			cmdZRevRangeByScore, "readonly"),
		zsetSpec("zrangebylex", -4, "Return a range of members in a sorted set, by lexicographical range", "2.8.9",
			cmdZRangeByLex, "readonly"),
		zsetSpec("zrevrangebylex", -4,
			"Return a range of members in a sorted set, by lexicographical range, ordered from higher to lower strings.",
			"2.8.9", cmdZRevRangeByLex, "readonly"),
		zsetSpec("zrevrange", -4,
			"Return a range of members in a sorted set, by index, with scores ordered from high to low", "1.2.0",
			cmdZRevRange, "readonly"),
	)
}

// Range directions.
const (
	zdirAuto = iota
	zdirForward
	zdirReverse
)

func cmdZRange(c *engine.Call)      { zrange(c, 1, false, zrangeAuto, zdirAuto) }
func cmdZRangeStore(c *engine.Call) { zrange(c, 2, true, zrangeAuto, zdirAuto) }
func cmdZRangeByScore(c *engine.Call) {
	zrange(c, 1, false, zrangeScore, zdirForward)
}
func cmdZRevRangeByScore(c *engine.Call) {
	zrange(c, 1, false, zrangeScore, zdirReverse)
}
func cmdZRangeByLex(c *engine.Call)    { zrange(c, 1, false, zrangeLex, zdirForward) }
func cmdZRevRangeByLex(c *engine.Call) { zrange(c, 1, false, zrangeLex, zdirReverse) }
func cmdZRevRange(c *engine.Call)      { zrange(c, 1, false, zrangeRank, zdirReverse) }

// zrange is the common body: src is the index of the source key (the
// destination, for store, is argument 1).
func zrange(c *engine.Call, src int, store bool, kind, dir int) {
	args := c.Args
	ws := false
	offset, limit := int64(0), int64(-1)
	for j := src + 3; j < len(args); j++ {
		a := engine.Cstr(args[j])
		left := len(args) - j - 1
		switch {
		case !store && engine.EqFold(a, "withscores"):
			ws = true
		case engine.EqFold(a, "limit") && left >= 2:
			var ok bool
			if offset, limit, ok = c.IntArgs(args[j+1], args[j+2]); !ok {
				return
			}
			j += 2
		case dir == zdirAuto && engine.EqFold(a, "rev"):
			dir = zdirReverse
		case kind == zrangeAuto && engine.EqFold(a, "bylex"):
			kind = zrangeLex
		case kind == zrangeAuto && engine.EqFold(a, "byscore"):
			kind = zrangeScore
		default:
			c.W.Error(engine.ErrSyntax)
			return
		}
	}
	if dir == zdirAuto {
		dir = zdirForward
	}
	if kind == zrangeAuto {
		kind = zrangeRank
	}
	if limit != -1 && kind == zrangeRank {
		c.W.Error("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
		return
	}
	if ws && kind == zrangeLex {
		c.W.Error("ERR syntax error, WITHSCORES not supported in combination with BYLEX")
		return
	}
	rev := dir == zdirReverse
	minArg, maxArg := args[src+1], args[src+2]
	if rev && kind != zrangeRank {
		minArg, maxArg = maxArg, minArg // given as max, min
	}
	b, ok := parseZRangeBounds(c, kind, minArg, maxArg)
	if !ok {
		return
	}
	z, ok := zsetRead(c, args[src])
	if !ok {
		return
	}
	var nodes []*zset.Node
	sizeHint := -1 // Redis sizes a ZRANGESTORE result up front only by rank
	if z != nil {
		switch kind {
		case zrangeRank:
			nodes = zrangeByRank(z, b.start, b.end, rev)
			sizeHint = len(nodes)
		case zrangeScore:
			nodes = zrangeByScore(z, b.score, offset, limit, rev)
		default:
			nodes = zrangeByLex(z, b.lex, offset, limit, rev)
		}
	}
	if store {
		zrangeStore(c, args[1], nodes, sizeHint)
		return
	}
	writeNodes(c, nodes, ws)
}

// zrangeStore writes a ZRANGESTORE result as Redis builds it: the
// destination starts as a listpack unless the rank range alone is too long,
// and converts as members are added.
func zrangeStore(c *engine.Call, dst []byte, nodes []*zset.Node, sizeHint int) {
	if len(nodes) == 0 {
		c.SzDeleteDst(dst)
		c.W.Int(0)
		return
	}
	z := zset.New(int64(sizeHint) <= c.ZsetMaxEntries())
	for _, n := range nodes {
		zsetAdd(c, z, []byte(n.Member()), n.Score(), 0)
	}
	c.SzStoreDst(dst, keyspace.KindZSet, z, engine.NotifyZSet, "zrangestore")
	c.W.Int(int64(z.Len()))
}

// zrangeByRank lists positions start..end (negative from the end).
func zrangeByRank(z *zset.ZSet, start, end int64, rev bool) []*zset.Node {
	n := int64(z.Len())
	s, e, ok := engine.NormRange(start, end, n)
	if !ok {
		return nil
	}
	out := make([]*zset.Node, 0, e-s+1)
	if rev {
		for x := z.ByRank(int(n - 1 - s)); x != nil && len(out) < cap(out); x = x.Prev() {
			out = append(out, x)
		}
		return out
	}
	for x := z.ByRank(int(s)); x != nil && len(out) < cap(out); x = x.Next() {
		out = append(out, x)
	}
	return out
}

// zrangeByScore lists the members in r after skipping offset of them, at
// most limit (negative: no limit). A negative offset yields nothing, as in
// Redis.
func zrangeByScore(z *zset.ZSet, r zset.ScoreRange, offset, limit int64, rev bool) []*zset.Node {
	if offset < 0 || (offset > 0 && offset >= int64(z.Len())) {
		return nil
	}
	if rev {
		return zwalk(z.LastInRange(r), offset, limit, rev, func(x *zset.Node) bool { return r.GteMin(x.Score()) })
	}
	return zwalk(z.FirstInRange(r), offset, limit, rev, func(x *zset.Node) bool { return r.LteMax(x.Score()) })
}

// zrangeByLex is zrangeByScore for a lex range.
func zrangeByLex(z *zset.ZSet, r zset.LexRange, offset, limit int64, rev bool) []*zset.Node {
	if offset < 0 {
		return nil
	}
	if rev {
		return zwalk(z.LastInLex(r), offset, limit, rev, func(x *zset.Node) bool { return r.GteMin(x.Member()) })
	}
	return zwalk(z.FirstInLex(r), offset, limit, rev, func(x *zset.Node) bool { return r.LteMax(x.Member()) })
}

// zwalk steps from x (the first node in range, nil when none) in the
// direction of rev: it skips offset nodes, then collects up to limit
// (negative: no limit) while inRange holds.
func zwalk(x *zset.Node, offset, limit int64, rev bool, inRange func(*zset.Node) bool) []*zset.Node {
	var out []*zset.Node
	for ; x != nil && offset > 0; offset-- {
		x = zstep(x, rev)
	}
	for ; x != nil && limit != 0; limit-- {
		if !inRange(x) {
			break
		}
		out = append(out, x)
		x = zstep(x, rev)
	}
	return out
}

func zstep(x *zset.Node, rev bool) *zset.Node {
	if rev {
		return x.Prev()
	}
	return x.Next()
}
