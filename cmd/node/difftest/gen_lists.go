package difftest

// Lists, including the blocking commands (always with a 10 ms timeout).

func listOps() []op {
	L := "list"
	push := func(name string) func(g *gen) {
		return func(g *gen) {
			args := []string{name, g.key(L)}
			for i := 0; i <= g.n(4); i++ {
				args = append(args, g.member())
			}
			g.emit(args...)
		}
	}
	optCount := func(g *gen) []string { return g.opts(0.4, []string{g.count()}) }
	return []op{
		{"lpush", 6, push("LPUSH")},
		{"rpush", 6, push("RPUSH")},
		{"lpushx", 1, push("LPUSHX")},
		{"rpushx", 1, push("RPUSHX")},
		{"rpush", 1, func(g *gen) { // long lists: several quicklist nodes
			args := []string{"RPUSH", g.key(L)}
			for i := 0; i < 100+g.n(400); i++ {
				args = append(args, g.member())
			}
			if g.p(0.1) {
				g.emit(args...)
			}
		}},
		{"lpop", 3, func(g *gen) { g.emit(cat([]string{"LPOP", g.key(L)}, optCount(g))...) }},
		{"rpop", 3, func(g *gen) { g.emit(cat([]string{"RPOP", g.key(L)}, optCount(g))...) }},
		{"llen", 2, func(g *gen) { g.emit("LLEN", g.key(L)) }},
		{"lrange", 5, func(g *gen) { g.emit("LRANGE", g.key(L), g.index(), g.index()) }},
		{"lindex", 2, func(g *gen) { g.emit("LINDEX", g.key(L), g.index()) }},
		{"lset", 2, func(g *gen) { g.emit("LSET", g.key(L), g.index(), g.member()) }},
		{"linsert", 2, func(g *gen) {
			g.emit("LINSERT", g.key(L), g.kw(g.pick("BEFORE", "AFTER", "BEFORE", "AFTER", "MIDDLE")), g.member(), g.member())
		}},
		{"lrem", 2, func(g *gen) { g.emit("LREM", g.key(L), g.count(), g.member()) }},
		{"ltrim", 2, func(g *gen) { g.emit("LTRIM", g.key(L), g.index(), g.index()) }},
		{"lpos", 2, func(g *gen) {
			g.emit(cat([]string{"LPOS", g.key(L), g.member()}, g.opts(0.4,
				[]string{g.kw("RANK"), g.intArg(-3, 3)}, []string{g.kw("COUNT"), g.intArg(-1, 4)},
				[]string{g.kw("MAXLEN"), g.intArg(-1, 5)}))...)
		}},
		{"lmove", 2, func(g *gen) { g.emit("LMOVE", g.key(L), g.key(L), g.dir(), g.dir()) }},
		{"rpoplpush", 1, func(g *gen) { g.emit("RPOPLPUSH", g.key(L), g.key(L)) }},
		{"lmpop", 2, func(g *gen) {
			ks := g.keys(L, 1, 3)
			g.emit(cat([]string{"LMPOP", g.numkeysOrMore(len(ks))}, ks, []string{g.dir()},
				g.opts(0.5, []string{g.kw("COUNT"), g.count()}))...)
		}},
		{"blpop", 1, func(g *gen) {
			ks := g.feed("RPUSH", g.keys(L, 1, 2))
			g.emit(cat([]string{"BLPOP"}, ks, []string{g.timeout()})...)
		}},
		{"brpop", 1, func(g *gen) {
			ks := g.feed("RPUSH", g.keys(L, 1, 2))
			g.emit(cat([]string{"BRPOP"}, ks, []string{g.timeout()})...)
		}},
		{"blmove", 1, func(g *gen) {
			src := g.feed("RPUSH", []string{g.key(L)})[0]
			g.emit("BLMOVE", src, g.key(L), g.dir(), g.dir(), g.timeout())
		}},
		{"brpoplpush", 1, func(g *gen) {
			src := g.feed("RPUSH", []string{g.key(L)})[0]
			g.emit("BRPOPLPUSH", src, g.key(L), g.timeout())
		}},
		{"blmpop", 1, func(g *gen) {
			ks := g.feed("RPUSH", g.keys(L, 1, 2))
			g.emit(cat([]string{"BLMPOP", g.timeout(), g.numkeysOrMore(len(ks))}, ks, []string{g.dir()},
				g.opts(0.5, []string{g.kw("COUNT"), g.count()}))...)
		}},
	}
}
