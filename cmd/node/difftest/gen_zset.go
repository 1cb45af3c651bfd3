package difftest

import (
	"slices"
	"strings"
)

// Sorted sets.

func zsetOps() []op {
	Z := "zset"
	ws := func(g *gen) []string { return g.opts(0.5, []string{g.kw("WITHSCORES")}) }
	limit := func(g *gen, prob float64) []string {
		return g.opts(prob, []string{g.kw("LIMIT"), g.intArg(-1, 3), g.intArg(-1, 4)})
	}
	// ZUNION/ZINTER/ZDIFF and the STORE forms: numkeys keys [WEIGHTS ...]
	// [AGGREGATE ...] [WITHSCORES].
	algebra := func(name string, store, weights, withscores bool) func(g *gen) {
		return func(g *gen) {
			args := []string{name}
			if store {
				args = append(args, g.key(Z))
			}
			ks := g.keys(Z, 1, 3)
			args = append(args, g.numkeys(len(ks)))
			args = append(args, ks...)
			var w, agg, with []string
			if weights {
				w = []string{g.kw("WEIGHTS")}
				for range ks {
					w = append(w, g.pick("1", "2", "-1", "0.5", "0", "inf", "-inf", "abc"))
				}
				if g.p(0.05) {
					w = w[:len(w)-1]
				}
				agg = []string{g.kw("AGGREGATE"), g.kw(g.pick("SUM", "MIN", "MAX", "AVG"))}
			}
			if withscores {
				with = []string{g.kw("WITHSCORES")}
			}
			g.emit(cat(args, g.opts(0.4, w, agg, with))...)
		}
	}
	return []op{
		{"zadd", 10, func(g *gen) {
			args := []string{"ZADD", g.key(Z)}
			incr := false
			if g.p(0.3) {
				o := g.opts(0.2, []string{g.kw("NX")}, []string{g.kw("XX")}, []string{g.kw("GT")},
					[]string{g.kw("LT")}, []string{g.kw("CH")}, []string{g.kw("INCR")})
				incr = slices.ContainsFunc(o, func(s string) bool { return strings.EqualFold(s, "INCR") })
				args = append(args, o...)
			}
			pairs := 1 + g.n(4)
			if incr && g.p(0.9) {
				pairs = 1 // INCR takes one pair
			}
			for i := 0; i < pairs; i++ {
				args = append(args, g.score(), g.member())
			}
			if g.p(0.03) {
				args = append(args, g.score()) // odd count
			}
			g.emit(args...)
		}},
		{"zadd", 1, func(g *gen) { // big zset: beyond zset-max-listpack-entries
			if g.p(0.1) {
				args := []string{"ZADD", g.key(Z)}
				for i := 0; i < 100+g.n(60); i++ {
					args = append(args, itoa(g.n(50)), "m"+itoa(i))
				}
				g.emit(args...)
			}
		}},
		{"zrem", 3, func(g *gen) { g.emit("ZREM", g.key(Z), g.member(), g.member()) }},
		{"zscore", 3, func(g *gen) { g.emit("ZSCORE", g.key(Z), g.member()) }},
		{"zmscore", 2, func(g *gen) { g.emit("ZMSCORE", g.key(Z), g.member(), g.member()) }},
		{"zincrby", 3, func(g *gen) { g.emit("ZINCRBY", g.key(Z), g.score(), g.member()) }},
		{"zcard", 2, func(g *gen) { g.emit("ZCARD", g.key(Z)) }},
		{"zcount", 2, func(g *gen) { a, b := g.scoreRange(); g.emit("ZCOUNT", g.key(Z), a, b) }},
		{"zlexcount", 2, func(g *gen) {
			if g.inTx {
				g.emit("ZCARD", g.key(Z))
				return
			}
			a, b := g.lexRange()
			g.emit("ZLEXCOUNT", g.key(Z), a, b)
		}},
		{"zrange", 6, func(g *gen) {
			args := []string{"ZRANGE", g.key(Z)}
			var by []string
			kind := g.n(3)
			if g.inTx && kind == 2 {
				kind = 1
			}
			switch kind {
			case 0:
				a, b := g.index(), g.index()
				args = append(args, a, b)
			case 1:
				a, b := g.scoreRange()
				args = append(args, a, b)
				by = []string{g.kw("BYSCORE")}
			case 2:
				a, b := g.lexRange()
				args = append(args, a, b)
				by = []string{g.kw("BYLEX")}
			}
			if g.p(0.1) && !g.inTx {
				by = []string{g.kw(g.pick("BYSCORE", "BYLEX"))} // mismatched range kind
			}
			lim := limit(g, 0.5)
			if by == nil && g.p(0.9) {
				lim = nil // LIMIT needs BYSCORE or BYLEX
			}
			g.emit(cat(args, by, g.opts(0.5, []string{g.kw("REV")}, lim, ws(g)))...)
		}},
		{"zrangestore", 2, func(g *gen) {
			args := []string{"ZRANGESTORE", g.key(Z), g.key(Z)}
			if g.p(0.5) {
				args = append(args, g.index(), g.index())
				g.emit(cat(args, g.opts(0.3, []string{g.kw("REV")}, limit(g, 1)))...)
				return
			}
			if g.p(0.5) && !g.inTx {
				a, b := g.lexRange()
				g.emit(cat(args, []string{a, b, g.kw("BYLEX")}, g.opts(0.4, []string{g.kw("REV")}, limit(g, 1)))...)
				return
			}
			a, b := g.scoreRange()
			g.emit(cat(args, []string{a, b, g.kw("BYSCORE")}, g.opts(0.4, []string{g.kw("REV")}, limit(g, 1)))...)
		}},
		{"zrangebyscore", 3, func(g *gen) {
			a, b := g.scoreRange()
			g.emit(cat([]string{"ZRANGEBYSCORE", g.key(Z), a, b}, g.opts(0.5, ws(g), limit(g, 1)))...)
		}},
		{"zrevrangebyscore", 2, func(g *gen) {
			a, b := g.scoreRange()
			g.emit(cat([]string{"ZREVRANGEBYSCORE", g.key(Z), a, b}, g.opts(0.5, ws(g), limit(g, 1)))...)
		}},
		{"zrangebylex", 2, func(g *gen) {
			if g.inTx {
				g.emit("ZCARD", g.key(Z))
				return
			}
			a, b := g.lexRange()
			g.emit(cat([]string{"ZRANGEBYLEX", g.key(Z), a, b}, limit(g, 0.4))...)
		}},
		{"zrevrangebylex", 2, func(g *gen) {
			if g.inTx {
				g.emit("ZCARD", g.key(Z))
				return
			}
			a, b := g.lexRange()
			g.emit(cat([]string{"ZREVRANGEBYLEX", g.key(Z), a, b}, limit(g, 0.4))...)
		}},
		{"zrevrange", 2, func(g *gen) { g.emit(cat([]string{"ZREVRANGE", g.key(Z), g.index(), g.index()}, ws(g))...) }},
		{"zrank", 2, func(g *gen) {
			g.emit(cat([]string{"ZRANK", g.key(Z), g.member()}, g.opts(0.1, []string{g.kw("WITHSCORE")}))...)
		}},
		{"zrevrank", 2, func(g *gen) {
			g.emit(cat([]string{"ZREVRANK", g.key(Z), g.member()}, g.opts(0.1, []string{g.kw("WITHSCORE")}))...)
		}},
		{"zpopmin", 2, func(g *gen) { g.emit(cat([]string{"ZPOPMIN", g.key(Z)}, g.opts(0.5, []string{g.count()}))...) }},
		{"zpopmax", 2, func(g *gen) { g.emit(cat([]string{"ZPOPMAX", g.key(Z)}, g.opts(0.5, []string{g.count()}))...) }},
		{"bzpopmin", 1, func(g *gen) {
			ks := g.feed("ZADD", g.keys(Z, 1, 2))
			g.emit(cat([]string{"BZPOPMIN"}, ks, []string{g.timeout()})...)
		}},
		{"bzpopmax", 1, func(g *gen) {
			ks := g.feed("ZADD", g.keys(Z, 1, 2))
			g.emit(cat([]string{"BZPOPMAX"}, ks, []string{g.timeout()})...)
		}},
		{"zmpop", 2, func(g *gen) {
			ks := g.keys(Z, 1, 3)
			g.emit(cat([]string{"ZMPOP", g.numkeysOrMore(len(ks))}, ks, []string{g.minmax()},
				g.opts(0.5, []string{g.kw("COUNT"), g.count()}))...)
		}},
		{"bzmpop", 1, func(g *gen) {
			ks := g.feed("ZADD", g.keys(Z, 1, 2))
			g.emit(cat([]string{"BZMPOP", g.timeout(), g.numkeysOrMore(len(ks))}, ks, []string{g.minmax()},
				g.opts(0.5, []string{g.kw("COUNT"), g.count()}))...)
		}},
		{"zremrangebyrank", 1, func(g *gen) { g.emit("ZREMRANGEBYRANK", g.key(Z), g.index(), g.index()) }},
		{"zremrangebyscore", 1, func(g *gen) { a, b := g.scoreRange(); g.emit("ZREMRANGEBYSCORE", g.key(Z), a, b) }},
		{"zremrangebylex", 1, func(g *gen) {
			if g.inTx {
				g.emit("ZCARD", g.key(Z))
				return
			}
			a, b := g.lexRange()
			g.emit("ZREMRANGEBYLEX", g.key(Z), a, b)
		}},
		{"zunion", 2, algebra("ZUNION", false, true, true)},
		{"zinter", 2, algebra("ZINTER", false, true, true)},
		{"zdiff", 2, algebra("ZDIFF", false, false, true)},
		{"zunionstore", 1, algebra("ZUNIONSTORE", true, true, false)},
		{"zinterstore", 1, algebra("ZINTERSTORE", true, true, false)},
		{"zdiffstore", 1, algebra("ZDIFFSTORE", true, false, false)},
		{"zintercard", 1, func(g *gen) {
			ks := g.keys(Z, 1, 3)
			g.emit(cat([]string{"ZINTERCARD", g.numkeys(len(ks))}, ks, g.opts(0.4, []string{g.kw("LIMIT"), g.intArg(-1, 4)}))...)
		}},
		{"zscan", 2, func(g *gen) {
			g.emit(cat([]string{"ZSCAN", g.key(Z), "0"}, g.opts(0.4, []string{g.kw("MATCH"), g.pick("*", "m1*", "?", "[a-c]")},
				[]string{g.kw("COUNT"), g.intArg(1, 30)}))...)
		}},
		{"zrandmember", 2, func(g *gen) {
			args := []string{"ZRANDMEMBER", g.key(Z)}
			if g.p(0.7) {
				args = append(args, g.randCount())
				args = append(args, g.opts(0.4, []string{g.kw("WITHSCORES")})...)
			}
			g.emit(args...)
		}},
	}
}
