package zsetcmd

// Sorted sets, part 4: ZUNION, ZINTER, ZDIFF, their STORE forms and
// ZINTERCARD. Plain sets are accepted as inputs (every member scoring 1).
//
// Floating-point sums depend on their order, so inputs are combined in
// Redis's order: sorted by size (a stable sort, like glibc's qsort on these
// sizes) for union and intersection, left to right for difference.

import (
	"math"
	"sort"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/types/set"
	"github.com/slotd/slotd/actors/engine/types/zset"
	"github.com/slotd/slotd/netio/command"
)

func registerZsetOps() {
	src := func(s *command.Spec, at int) *command.Spec {
		return engine.NumkeysSpec(s, at, func(args [][]byte) (int, string) { return zopNumkeys(args, at) })
	}
	store := func(s *command.Spec) *command.Spec {
		s = src(s, 2)
		keys := s.Keys
		s.Keys = func(args [][]byte) ([]int, error) { // destination first
			idx, err := keys(args)
			if err != nil || len(idx) == 0 {
				return nil, err // a bad numkeys: no keys at all, as in Redis
			}
			return append([]int{1}, idx...), nil
		}
		s.First, s.Last, s.Step = 1, 1, 1
		return s
	}
	command.Register(
		src(zsetSpec("zunion", -3, "Add multiple sorted sets", "6.2.0", cmdZUnion, "readonly"), 1),
		src(zsetSpec("zinter", -3, "Intersect multiple sorted sets", "6.2.0", cmdZInter, "readonly"), 1),
		src(zsetSpec("zdiff", -3, "Subtract multiple sorted sets", "6.2.0", cmdZDiff, "readonly"), 1),
		src(zsetSpec("zintercard", -3, "Intersect multiple sorted sets and return the cardinality of the result",
			"7.0.0", cmdZInterCard, "readonly"), 1),
		store(zsetSpec("zunionstore", -4,
			"Add multiple sorted sets and store the resulting sorted set in a new key", "2.0.0",
			cmdZUnionStore, "write", "denyoom")),
		store(zsetSpec("zinterstore", -4,
			"Intersect multiple sorted sets and store the resulting sorted set in a new key", "2.0.0",
			cmdZInterStore, "write", "denyoom")),
		store(zsetSpec("zdiffstore", -4,
			"Subtract multiple sorted sets and store the resulting sorted set in a new key", "6.2.0",
			cmdZDiffStore, "write", "denyoom")),
	)
}

// zopNumkeys validates the numkeys argument at index at, with the errors
// the command itself gives.
func zopNumkeys(args [][]byte, at int) (int, string) {
	n, ok := engine.ParseInt(args[at])
	if !ok {
		return 0, engine.ErrNotInt
	}
	if n < 1 {
		return 0, "ERR at least 1 input key is needed for '" + lowerASCII(args[0]) + "' command"
	}
	if n > int64(len(args)-(at+1)) {
		return 0, engine.ErrSyntax
	}
	return int(n), ""
}

func lowerASCII(b []byte) string {
	out := make([]byte, len(b))
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return string(out)
}

// Set operations.
const (
	zopUnion = iota
	zopInter
	zopDiff
)

// Aggregate functions.
const (
	aggSum = iota
	aggMin
	aggMax
)

func cmdZUnion(c *engine.Call)      { zsetOp(c, 1, nil, zopUnion, false) }
func cmdZInter(c *engine.Call)      { zsetOp(c, 1, nil, zopInter, false) }
func cmdZDiff(c *engine.Call)       { zsetOp(c, 1, nil, zopDiff, false) }
func cmdZInterCard(c *engine.Call)  { zsetOp(c, 1, nil, zopInter, true) }
func cmdZUnionStore(c *engine.Call) { zsetOp(c, 2, c.Args[1], zopUnion, false) }
func cmdZInterStore(c *engine.Call) { zsetOp(c, 2, c.Args[1], zopInter, false) }
func cmdZDiffStore(c *engine.Call)  { zsetOp(c, 2, c.Args[1], zopDiff, false) }

// zsrc is one input: a sorted set, a plain set, or nothing (missing key).
type zsrc struct {
	z      *zset.ZSet
	s      *set.Set
	weight float64
}

func (s *zsrc) len() int {
	switch {
	case s.z != nil:
		return s.z.Len()
	case s.s != nil:
		return s.s.Len()
	}
	return 0
}

// same reports whether both inputs are the same value (one key named
// twice).
func (s *zsrc) same(o *zsrc) bool {
	return (s.z != nil && s.z == o.z) || (s.s != nil && s.s == o.s)
}

// each visits the members in Redis's iteration order: descending for a
// sorted set, ascending for an intset, hash order for a hashtable set.
func (s *zsrc) each(fn func(m string, score float64) bool) {
	switch {
	case s.z != nil:
		for n := s.z.Last(); n != nil; n = n.Prev() {
			if !fn(n.Member(), n.Score()) {
				return
			}
		}
	case s.s != nil:
		s.s.ForEach(func(m string) bool { return fn(m, 1) })
	}
}

// find returns m's score in the input.
func (s *zsrc) find(m string) (float64, bool) {
	switch {
	case s.z != nil:
		if n := s.z.Get([]byte(m)); n != nil {
			return n.Score(), true
		}
	case s.s != nil:
		if s.s.HasString(m) {
			return 1, true
		}
	}
	return 0, false
}

func aggregate(target *float64, v float64, agg int) {
	switch agg {
	case aggSum:
		*target += v
		if math.IsNaN(*target) { // inf + -inf
			*target = 0
		}
	case aggMin:
		if v < *target {
			*target = v
		}
	case aggMax:
		if v > *target {
			*target = v
		}
	}
}

// zsetOp runs a union, intersection or difference whose numkeys argument
// is at index at; dst stores the result, cardOnly counts it (ZINTERCARD).
func zsetOp(c *engine.Call, at int, dst []byte, op int, cardOnly bool) {
	n, msg := zopNumkeys(c.Args, at)
	if msg != "" {
		c.W.Error(msg)
		return
	}
	srcs := make([]zsrc, n)
	for i := range srcs {
		e := c.Lookup(c.Args[at+1+i])
		srcs[i].weight = 1
		if e == nil {
			continue
		}
		switch v := e.Obj.(type) {
		case *zset.ZSet:
			srcs[i].z = v
		case *set.Set:
			srcs[i].s = v
		default:
			c.W.Error(engine.ErrWrongType)
			return
		}
	}
	agg, ws, limit := aggSum, false, int64(0)
	args := c.Args
	for j := at + 1 + n; j < len(args); {
		left := len(args) - j
		a := engine.Cstr(args[j])
		switch {
		case op != zopDiff && !cardOnly && left >= n+1 && engine.EqFold(a, "weights"):
			j++
			for i := range srcs {
				w, ok := parseScoreArg(args[j])
				if !ok {
					c.W.Error(errZWeight)
					return
				}
				srcs[i].weight = w
				j++
			}
		case op != zopDiff && !cardOnly && left >= 2 && engine.EqFold(a, "aggregate"):
			switch v := engine.Cstr(args[j+1]); {
			case engine.EqFold(v, "sum"):
				agg = aggSum
			case engine.EqFold(v, "min"):
				agg = aggMin
			case engine.EqFold(v, "max"):
				agg = aggMax
			default:
				c.W.Error(engine.ErrSyntax)
				return
			}
			j += 2
		case left >= 1 && dst == nil && !cardOnly && engine.EqFold(a, "withscores"):
			ws = true
			j++
		case cardOnly && left >= 2 && engine.EqFold(a, "limit"):
			v, ok := engine.ParseInt(args[j+1])
			if !ok || v < 0 {
				c.W.Error("ERR LIMIT can't be negative")
				return
			}
			limit = v
			j += 2
		default:
			c.W.Error(engine.ErrSyntax)
			return
		}
	}
	if op != zopDiff {
		sort.SliceStable(srcs, func(i, j int) bool { return srcs[i].len() < srcs[j].len() })
	}
	res := zset.New(false)
	maxLen := 0
	add := func(m string, score float64) {
		res.AddString(m, score)
		maxLen = max(maxLen, len(m))
	}
	var card int64
	switch op {
	case zopInter:
		if srcs[0].len() == 0 {
			break
		}
		srcs[0].each(func(m string, s float64) bool {
			score := srcs[0].weight * s
			if math.IsNaN(score) {
				score = 0
			}
			for i := 1; i < len(srcs); i++ {
				v, ok := srcs[i].find(m)
				if !ok {
					return true
				}
				aggregate(&score, v*srcs[i].weight, agg)
			}
			if cardOnly {
				card++
				return limit == 0 || card < limit
			}
			add(m, score)
			return true
		})
	case zopUnion:
		acc := make(map[string]float64)
		var order []string
		for i := range srcs {
			src := &srcs[i]
			src.each(func(m string, s float64) bool {
				score := src.weight * s
				if math.IsNaN(score) {
					score = 0
				}
				if cur, ok := acc[m]; ok {
					aggregate(&cur, score, agg)
					acc[m] = cur
				} else {
					acc[m] = score
					order = append(order, m)
				}
				return true
			})
		}
		for _, m := range order {
			add(m, acc[m])
		}
	case zopDiff:
		if srcs[0].len() == 0 {
			break
		}
		for i := 1; i < len(srcs); i++ {
			if srcs[i].same(&srcs[0]) {
				goto done // a set minus itself
			}
		}
		srcs[0].each(func(m string, s float64) bool {
			for i := 1; i < len(srcs); i++ {
				if _, ok := srcs[i].find(m); ok {
					return true
				}
			}
			add(m, s)
			return true
		})
	}
done:
	switch {
	case cardOnly:
		c.W.Int(card)
	case dst != nil:
		zsetStoreResult(c, dst, res, maxLen, [...]string{zopUnion: "zunionstore", zopInter: "zinterstore", zopDiff: "zdiffstore"}[op])
	default:
		writeScoredHeader(c, res.Len(), ws)
		pairs := c.W.Proto >= 3
		for x := res.First(); x != nil; x = x.Next() {
			writeScoredItem(c, x.Member(), x.Score(), ws, pairs)
		}
	}
}
