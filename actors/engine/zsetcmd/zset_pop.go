package zsetcmd

// Sorted sets, part 5: ZPOPMIN, ZPOPMAX, ZMPOP, ZRANDMEMBER and ZSCAN.
//
// The pops are built around zpopTry, which pops from the first non-empty
// key or reports that there was nothing to pop without writing a reply:
// the blocking forms (BZPOPMIN, BZPOPMAX, BZMPOP) can call it when a client
// arrives and again whenever one of its keys may have been filled.

import (
	"strconv"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/types/cnum"
	"github.com/slotd/slotd/actors/engine/types/zset"
	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/resp"
	"github.com/slotd/slotd/slots"
)

func registerZsetPop() {
	command.Register(
		zsetSpec("zpopmin", -2, "Remove and return members with the lowest scores in a sorted set", "5.0.0",
			cmdZPopMin, "write", "fast"),
		zsetSpec("zpopmax", -2, "Remove and return members with the highest scores in a sorted set", "5.0.0",
			cmdZPopMax, "write", "fast"),
		engine.WithArgError(engine.NumkeysSpec(zsetSpec("zmpop", -4, "Remove and return members with scores in a sorted set", "7.0.0",
			cmdZMPop, "write"), 1, func(args [][]byte) (int, string) {
			return engine.MpopNumkeys(args, 1)
		}), engine.MpopArgErrors(1, false, parseZMPopArgs)),
		engine.SzTips(zsetSpec("zrandmember", -2, "Get one or multiple random elements from a sorted set", "6.2.0",
			cmdZRandMember, "readonly"), "nondeterministic_output"),
		engine.SzTips(zsetSpec("zscan", -3, "Incrementally iterate sorted sets elements and associated scores", "2.8.0",
			cmdZScan, "readonly"), "nondeterministic_output"),
	)
}

// ZPopShape selects the reply layout of a pop.
type ZPopShape uint8

const (
	// ZPopFlat is [member, score, ...] (ZPOPMIN/ZPOPMAX in RESP2, or
	// without a count).
	ZPopFlat ZPopShape = iota
	// ZPopPairs is [[member, score], ...] (ZPOPMIN/ZPOPMAX with a count in
	// RESP3).
	ZPopPairs
	// ZPopKeyFlat is [key, member, score, ...] (BZPOPMIN/BZPOPMAX).
	ZPopKeyFlat
	// ZPopKeyPairs is [key, [[member, score], ...]] (ZMPOP/BZMPOP).
	ZPopKeyPairs
)

// zpopTry pops up to count members (count ≥ 1) from the lowest (or, with
// max, the highest) end of the first of keys that exists, writing the reply
// in the given shape and deleting the key once empty. It returns false,
// having written nothing, when no key exists. A key of another type ends
// the search with WRONGTYPE (true).
func zpopTry(c *engine.Call, keys [][]byte, max bool, count int64, shape ZPopShape) bool {
	for _, key := range keys {
		e, z, ok := zsetWrite(c, key)
		if !ok {
			return true
		}
		if e == nil {
			continue
		}
		zpopFrom(c, key, z, max, count, shape)
		return true
	}
	return false
}

// zpopFrom pops from z, stored under key. Only that key counts as
// modified, not the other keys a ZMPOP names.
func zpopFrom(c *engine.Call, key []byte, z *zset.ZSet, max bool, count int64, shape ZPopShape) {
	c.Unchanged()
	c.Signal(key)
	n := min(count, int64(z.Len()))
	switch shape {
	case ZPopFlat:
		c.W.Array(int(2 * n))
	case ZPopPairs:
		c.W.Array(int(n))
	case ZPopKeyFlat:
		c.W.Array(int(2*n + 1))
		c.W.Bulk(key)
	case ZPopKeyPairs:
		c.W.Array(2)
		c.W.Bulk(key)
		c.W.Array(int(n))
	}
	pairs := shape == ZPopPairs || shape == ZPopKeyPairs
	for i := int64(0); i < n; i++ {
		x := z.First()
		if max {
			x = z.Last()
		}
		z.DeleteNode(x)
		if pairs {
			c.W.Array(2)
		}
		c.W.BulkString(x.Member())
		writeScore(c, x.Score())
	}
	if n > 0 {
		c.Notify(engine.NotifyZSet, [2]string{"zpopmin", "zpopmax"}[b2i(max)], key)
	}
	if z.Len() == 0 {
		c.Delete(key)
		c.Notify(engine.NotifyGeneric, "del", key)
	}
	// Replicas pop from the key that served, never blocking (BZPOPMIN,
	// ZMPOP, BZMPOP).
	verb := "ZPOPMIN"
	if max {
		verb = "ZPOPMAX"
	}
	if c.Replicating() {
		c.PropagateStrings(verb, string(key), strconv.FormatInt(n, 10))
	}
}

// b2i is 1 for true.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func cmdZPopMin(c *engine.Call) { zpopMinMax(c, false) }
func cmdZPopMax(c *engine.Call) { zpopMinMax(c, true) }

// zpopMinMax implements ZPOPMIN/ZPOPMAX key [count].
func zpopMinMax(c *engine.Call, max bool) {
	if len(c.Args) > 3 {
		c.W.Error(engine.ErrSyntax)
		return
	}
	count, shape := int64(1), ZPopFlat
	if len(c.Args) == 3 {
		n, ok := engine.ParseInt(c.Args[2])
		if !ok || n < 0 {
			c.W.Error(engine.ErrMustBePositive)
			return
		}
		count = n
		if c.W.Proto >= 3 {
			shape = ZPopPairs
		}
	}
	key := c.Args[1]
	e, z, ok := zsetWrite(c, key)
	if !ok {
		return
	}
	if e == nil || count == 0 {
		c.Unchanged()
		c.W.Array(0)
		return
	}
	zpopFrom(c, key, z, max, count, shape)
}

// ZMPopArgs are the parsed arguments of ZMPOP / BZMPOP after numkeys.
type ZMPopArgs struct {
	Keys  [][]byte
	Max   bool
	Count int64
}

// ParseZMPop parses numkeys key [key ...] MIN|MAX [COUNT count], numkeys
// being argument at; on error it writes the reply and returns false.
func ParseZMPop(c *engine.Call, at int) (ZMPopArgs, bool) {
	var a ZMPopArgs
	var where int
	var ok bool
	if a.Keys, where, ok = c.MpopKeys(at); !ok {
		return a, false
	}
	switch w := engine.Cstr(c.Args[where]); {
	case engine.EqFold(w, "min"):
	case engine.EqFold(w, "max"):
		a.Max = true
	default:
		c.W.Error(engine.ErrSyntax)
		return a, false
	}
	a.Count, ok = c.MpopCount(where + 1)
	return a, ok
}

// cmdZMPop implements ZMPOP numkeys key [key ...] MIN|MAX [COUNT count].
func cmdZMPop(c *engine.Call) {
	a, ok := ParseZMPop(c, 1)
	if !ok {
		return
	}
	if !zpopTry(c, a.Keys, a.Max, a.Count, ZPopKeyPairs) {
		c.Unchanged()
		c.W.NullArray()
	}
}

// cmdZRandMember implements ZRANDMEMBER key [count [WITHSCORES]].
func cmdZRandMember(c *engine.Call) {
	key := c.Args[1]
	if len(c.Args) == 2 {
		z, ok := zsetRead(c, key)
		if !ok {
			return
		}
		if z == nil {
			c.W.Null()
			return
		}
		c.W.BulkString(z.Random(c.S.Rand()).Member())
		return
	}
	n, ws, ok := c.ParseRandWith("withscores")
	if !ok {
		return
	}
	z, ok := zsetRead(c, key)
	if !ok {
		return
	}
	if z == nil || n == 0 {
		c.W.Array(0)
		return
	}
	pairs := c.W.Proto >= 3
	if n < 0 || n == 1 {
		if n, ok = c.RandRepeats(n); !ok {
			return
		}
		writeScoredHeader(c, int(n), ws)
		for i := int64(0); i < n; i++ {
			x := z.Random(c.S.Rand())
			writeScoredItem(c, x.Member(), x.Score(), ws, pairs)
		}
		return
	}
	if n >= int64(z.Len()) {
		// The whole set, in Redis's set-operation iteration order:
		// highest first.
		writeScoredHeader(c, z.Len(), ws)
		for x := z.Last(); x != nil; x = x.Prev() {
			writeScoredItem(c, x.Member(), x.Score(), ws, pairs)
		}
		return
	}
	ms := engine.RandomDistinct(c, z.Len(), int(n), func() string { return z.Random(c.S.Rand()).Member() },
		func() []string {
			all := make([]string, 0, z.Len())
			for x := z.First(); x != nil; x = x.Next() {
				all = append(all, x.Member())
			}
			return all
		})
	writeScoredHeader(c, len(ms), ws)
	for _, m := range ms {
		s, _ := z.Score([]byte(m))
		writeScoredItem(c, m, s, ws, pairs)
	}
}

// cmdZScan implements ZSCAN key cursor [MATCH pattern] [COUNT count]. A
// listpack-encoded set is returned whole, in order, with the scores as the
// listpack spells them; a bigger one is walked through its member hash.
func cmdZScan(c *engine.Call) {
	cur, z, o, ok := engine.StartCollScan(c, func(k []byte) (*zset.ZSet, bool) { return zsetRead(c, k) })
	if !ok {
		return
	}
	var items []string
	keep := func(m string) bool {
		return o.Pattern == nil || slots.MatchKey(o.Pattern, m, false)
	}
	if z.Compact {
		for x := z.First(); x != nil; x = x.Next() {
			if keep(x.Member()) {
				items = append(items, x.Member(), string(cnum.AppendD2S(nil, x.Score())))
			}
		}
		c.WriteScanReply(0, items)
		return
	}
	var members []string
	var scores []float64
	cur = engine.ScanSteps(cur, o.Count, 2, func() int { return len(members) }, func(cur uint64) uint64 {
		return z.Scan(cur, func(m string, s float64) {
			members = append(members, m)
			scores = append(scores, s)
		})
	})
	var buf []byte
	for i, m := range members {
		if keep(m) {
			buf = resp.AppendFloat(buf[:0], scores[i])
			items = append(items, m, string(buf))
		}
	}
	c.WriteScanReply(cur, items)
}

// parseZMPopArgs is [B]ZMPOP's argument check for mpopArgErrors.
func parseZMPopArgs(c *engine.Call, idx int) bool {
	_, ok := ParseZMPop(c, idx)
	return ok
}
