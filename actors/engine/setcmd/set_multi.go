package setcmd

// Set commands, part 2: the multi-key algebra (SINTER, SMEMBERS,
// SINTERCARD, SUNION, SDIFF and the STORE forms). Results are built the way
// Redis builds them (a fresh set that starts as an intset), so a result of
// few integers is listed in ascending order, as Redis lists it.

import (
	"sort"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/types/set"
	"github.com/slotd/slotd/netio/command"
)

func registerSetMulti() {
	allKeys := func(s *command.Spec) *command.Spec { return engine.SzKeys(s, 1, -1, 1) }
	command.Register(
		engine.SzTips(setSpec("smembers", 2, "Get all the members in a set", "1.0.0", cmdSMembers, "readonly"),
			"nondeterministic_output_order"),
		engine.SzTips(allKeys(setSpec("sinter", -2, "Intersect multiple sets", "1.0.0", cmdSInter, "readonly")),
			"nondeterministic_output_order"),
		engine.SzTips(allKeys(setSpec("sunion", -2, "Add multiple sets", "1.0.0", cmdSUnion, "readonly")),
			"nondeterministic_output_order"),
		engine.SzTips(allKeys(setSpec("sdiff", -2, "Subtract multiple sets", "1.0.0", cmdSDiff, "readonly")),
			"nondeterministic_output_order"),
		allKeys(setSpec("sinterstore", -3, "Intersect multiple sets and store the resulting set in a key", "1.0.0",
			cmdSInterStore, "write", "denyoom")),
		allKeys(setSpec("sunionstore", -3, "Add multiple sets and store the resulting set in a key", "1.0.0",
			cmdSUnionStore, "write", "denyoom")),
		allKeys(setSpec("sdiffstore", -3, "Subtract multiple sets and store the resulting set in a key", "1.0.0",
			cmdSDiffStore, "write", "denyoom")),
		engine.WithArgError(engine.NumkeysSpec(setSpec("sintercard", -3, "Intersect multiple sets and return the cardinality of the result",
			"7.0.0", cmdSInterCard, "readonly"), 1, sinterCardNumkeys), func(c *engine.Call) bool {
			_, _, ok := parseSInterCard(c)
			return ok
		}),
	)
}

// sinterCardNumkeys validates SINTERCARD's numkeys with Redis's errors.
func sinterCardNumkeys(args [][]byte) (int, string) {
	n, ok := engine.ParseInt(args[1])
	if !ok || n < 1 {
		return 0, "ERR numkeys should be greater than 0"
	}
	if n > int64(len(args)-2) {
		return 0, "ERR Number of keys can't be greater than number of args"
	}
	return int(n), ""
}

func cmdSMembers(c *engine.Call)    { setInter(c, c.Args[1:2], nil, false, 0) }
func cmdSInter(c *engine.Call)      { setInter(c, c.Args[1:], nil, false, 0) }
func cmdSInterStore(c *engine.Call) { setInter(c, c.Args[2:], c.Args[1], false, 0) }
func cmdSUnion(c *engine.Call)      { setUnionDiff(c, c.Args[1:], nil, false) }
func cmdSUnionStore(c *engine.Call) { setUnionDiff(c, c.Args[2:], c.Args[1], false) }
func cmdSDiff(c *engine.Call)       { setUnionDiff(c, c.Args[1:], nil, true) }
func cmdSDiffStore(c *engine.Call)  { setUnionDiff(c, c.Args[2:], c.Args[1], true) }

// cmdSInterCard implements SINTERCARD numkeys key [key ...] [LIMIT limit].
func cmdSInterCard(c *engine.Call) {
	n, limit, ok := parseSInterCard(c)
	if !ok {
		return
	}
	setInter(c, c.Args[2:2+n], nil, true, limit)
}

// parseSInterCard reads SINTERCARD's numkeys and LIMIT, replying on error.
func parseSInterCard(c *engine.Call) (int, int64, bool) {
	n, msg := sinterCardNumkeys(c.Args)
	if msg != "" {
		c.W.Error(msg)
		return 0, 0, false
	}
	limit := int64(0)
	for j := 2 + n; j < len(c.Args); j++ {
		if engine.EqFold(c.Args[j], "limit") && j+1 < len(c.Args) {
			j++
			v, ok := engine.ParseInt(c.Args[j])
			if !ok || v < 0 {
				c.W.Error("ERR LIMIT can't be negative")
				return 0, 0, false
			}
			limit = v
			continue
		}
		c.W.Error(engine.ErrSyntax)
		return 0, 0, false
	}
	return n, limit, true
}

// setReadAll looks every key up (a missing key is a nil set); it stops at
// the first key of another type, after writing WRONGTYPE.
func setReadAll(c *engine.Call, keys [][]byte) ([]*set.Set, bool) {
	sets := make([]*set.Set, len(keys))
	for i, k := range keys {
		s, ok := setRead(c, k)
		if !ok {
			return nil, false
		}
		sets[i] = s
	}
	return sets, true
}

// setInter is SINTER and its variants: with dst it stores the result,
// with cardOnly it counts up to limit (0: no limit).
func setInter(c *engine.Call, keys [][]byte, dst []byte, cardOnly bool, limit int64) {
	sets, ok := setReadAll(c, keys)
	if !ok {
		return
	}
	for _, s := range sets {
		if s == nil { // intersecting with an empty set
			switch {
			case dst != nil:
				c.SzDeleteDst(dst)
				c.W.Int(0)
			case cardOnly:
				c.W.Int(0)
			default:
				c.W.Set(0)
			}
			return
		}
	}
	// Walk the smallest set, probing the others.
	sort.SliceStable(sets, func(i, j int) bool { return sets[i].Len() < sets[j].Len() })
	var (
		card int64
		out  []string
		res  *set.Set
	)
	if dst != nil {
		res = set.NewIntset()
	}
	max := c.MaxIntset()
	sets[0].ForEach(func(m string) bool {
		for _, o := range sets[1:] {
			if o != sets[0] && !o.HasString(m) {
				return true
			}
		}
		switch {
		case cardOnly:
			card++
			return limit == 0 || card < limit
		case dst != nil:
			res.AddString(m, max)
		default:
			out = append(out, m)
		}
		return true
	})
	switch {
	case cardOnly:
		c.W.Int(card)
	case dst != nil:
		c.StoreSetResult(dst, res, "sinterstore")
	default:
		writeMemberSet(c, out)
	}
}

// writeMemberSet writes members as a set reply.
func writeMemberSet(c *engine.Call, ms []string) {
	c.W.Set(len(ms))
	for _, m := range ms {
		c.W.BulkString(m)
	}
}

// setUnionDiff is SUNION/SDIFF and their STORE forms.
func setUnionDiff(c *engine.Call, keys [][]byte, dst []byte, diff bool) {
	sets, ok := setReadAll(c, keys)
	if !ok {
		return
	}
	res := set.NewIntset()
	max := c.MaxIntset()
	switch {
	case !diff:
		for _, s := range sets {
			if s != nil {
				s.ForEach(func(m string) bool {
					res.AddString(m, max)
					return true
				})
			}
		}
	case sets[0] != nil:
		setDiffInto(c, res, sets, max)
	}
	if dst != nil {
		event := "sunionstore"
		if diff {
			event = "sdiffstore"
		}
		c.StoreSetResult(dst, res, event)
		return
	}
	c.W.Set(res.Len())
	res.ForEach(func(m string) bool {
		c.W.BulkString(m)
		return true
	})
}

// setDiffInto adds sets[0] minus the others to res with whichever of
// Redis's two algorithms Redis would pick: the choice is visible, because
// adding then removing a non-integer turns the result into a hashtable.
func setDiffInto(c *engine.Call, res *set.Set, sets []*set.Set, max int) {
	first := sets[0]
	for _, s := range sets[1:] {
		if s == first {
			return // subtracting a set from itself
		}
	}
	one, two := 0, 0
	for _, s := range sets {
		if s != nil {
			one += first.Len()
			two += s.Len()
		}
	}
	if one/2 <= two {
		// Keep the members of the first set that no other set has.
		first.ForEach(func(m string) bool {
			for _, o := range sets[1:] {
				if o != nil && o.HasString(m) {
					return true
				}
			}
			res.AddString(m, max)
			return true
		})
		return
	}
	// Add the first set, then remove every member of the others.
	for i, s := range sets {
		if s == nil {
			continue
		}
		s.ForEach(func(m string) bool {
			if i == 0 {
				res.AddString(m, max)
			} else {
				res.Remove([]byte(m))
			}
			return res.Len() > 0 || i == 0
		})
		if res.Len() == 0 {
			return
		}
	}
}
