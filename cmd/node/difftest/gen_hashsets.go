package difftest

// Hashes and sets.

func hashOps() []op {
	H := "hash"
	pairs := func(g *gen, args []string, lo, hi int) []string {
		for i := 0; i < lo+g.n(hi-lo+1); i++ {
			args = append(args, g.field(), g.value())
		}
		return args
	}
	return []op{
		{"hset", 8, func(g *gen) {
			args := pairs(g, []string{"HSET", g.key(H)}, 1, 3)
			if g.p(0.03) {
				args = append(args, g.field()) // odd count
			}
			g.emit(args...)
		}},
		{"hset", 1, func(g *gen) { // big hash: beyond hash-max-listpack-entries
			if g.p(0.1) {
				args := []string{"HSET", g.key(H)}
				for i := 0; i < 400+g.n(300); i++ {
					args = append(args, "bf"+itoa(i), itoa(i))
				}
				g.emit(args...)
			}
		}},
		{"hsetnx", 2, func(g *gen) { g.emit("HSETNX", g.key(H), g.field(), g.value()) }},
		{"hmset", 1, func(g *gen) { g.emit(pairs(g, []string{"HMSET", g.key(H)}, 1, 2)...) }},
		{"hget", 4, func(g *gen) { g.emit("HGET", g.key(H), g.field()) }},
		{"hmget", 2, func(g *gen) { g.emit("HMGET", g.key(H), g.field(), g.field()) }},
		{"hgetall", 3, func(g *gen) { g.emit("HGETALL", g.key(H)) }},
		{"hdel", 3, func(g *gen) { g.emit("HDEL", g.key(H), g.field(), g.field()) }},
		{"hexists", 2, func(g *gen) { g.emit("HEXISTS", g.key(H), g.field()) }},
		{"hlen", 2, func(g *gen) { g.emit("HLEN", g.key(H)) }},
		{"hkeys", 2, func(g *gen) { g.emit("HKEYS", g.key(H)) }},
		{"hvals", 2, func(g *gen) { g.emit("HVALS", g.key(H)) }},
		{"hincrby", 3, func(g *gen) { g.emit("HINCRBY", g.key(H), g.field(), g.intArg(-10, 10)) }},
		{"hincrbyfloat", 2, func(g *gen) { g.emit("HINCRBYFLOAT", g.key(H), g.field(), g.score()) }},
		{"hstrlen", 1, func(g *gen) { g.emit("HSTRLEN", g.key(H), g.field()) }},
		{"hscan", 2, func(g *gen) {
			g.emit(cat([]string{"HSCAN", g.key(H), "0"}, g.opts(0.4, []string{g.kw("MATCH"), g.pick("*", "f*", "?", "[ab]", "bf1*")},
				[]string{g.kw("COUNT"), g.intArg(1, 30)}))...)
		}},
		{"hrandfield", 2, func(g *gen) {
			args := []string{"HRANDFIELD", g.key(H)}
			if g.p(0.7) {
				args = append(args, g.randCount())
				args = append(args, g.opts(0.4, []string{g.kw("WITHVALUES")})...)
			}
			g.emit(args...)
		}},
	}
}

func setOps() []op {
	T := "set"
	multi := func(name string, lo, hi int) func(g *gen) {
		return func(g *gen) { g.emit(cat([]string{name}, g.keys(T, lo, hi))...) }
	}
	return []op{
		{"sadd", 8, func(g *gen) {
			args := []string{"SADD", g.key(T)}
			for i := 0; i <= g.n(4); i++ {
				args = append(args, g.member())
			}
			g.emit(args...)
		}},
		{"sadd", 1, func(g *gen) { // big sets: around set-max-intset-entries
			if g.p(0.1) {
				args := []string{"SADD", g.key(T)}
				n := 500 + g.n(30)
				for i := 0; i < n; i++ {
					args = append(args, itoa(i*3-200))
				}
				g.emit(args...)
			}
		}},
		{"srem", 3, func(g *gen) { g.emit("SREM", g.key(T), g.member(), g.member()) }},
		{"smembers", 4, func(g *gen) { g.emit("SMEMBERS", g.key(T)) }},
		{"sismember", 2, func(g *gen) { g.emit("SISMEMBER", g.key(T), g.member()) }},
		{"smismember", 2, func(g *gen) { g.emit("SMISMEMBER", g.key(T), g.member(), g.member()) }},
		{"scard", 2, func(g *gen) { g.emit("SCARD", g.key(T)) }},
		{"spop", 2, func(g *gen) {
			if g.inTx { // see Runner: a random pop can only be undone outside MULTI
				g.emit("SCARD", g.key(T))
				return
			}
			g.emit(cat([]string{"SPOP", g.key(T)}, g.opts(0.6, []string{g.intArg(-1, 6)}))...)
		}},
		{"srandmember", 2, func(g *gen) {
			g.emit(cat([]string{"SRANDMEMBER", g.key(T)}, g.opts(0.7, []string{g.randCount()}))...)
		}},
		{"smove", 2, func(g *gen) { g.emit("SMOVE", g.key(T), g.key(T), g.member()) }},
		{"sinter", 2, multi("SINTER", 1, 3)},
		{"sunion", 2, multi("SUNION", 1, 3)},
		{"sdiff", 2, multi("SDIFF", 1, 3)},
		{"sinterstore", 1, multi("SINTERSTORE", 2, 4)},
		{"sunionstore", 1, multi("SUNIONSTORE", 2, 4)},
		{"sdiffstore", 1, multi("SDIFFSTORE", 2, 4)},
		{"sintercard", 2, func(g *gen) {
			ks := g.keys(T, 1, 3)
			g.emit(cat([]string{"SINTERCARD", g.numkeysOrMore(len(ks))}, ks,
				g.opts(0.4, []string{g.kw("LIMIT"), g.intArg(-1, 4)}))...)
		}},
		{"sscan", 2, func(g *gen) {
			g.emit(cat([]string{"SSCAN", g.key(T), "0"}, g.opts(0.4, []string{g.kw("MATCH"), g.pick("*", "1*", "?", "[a-c]", "-*")},
				[]string{g.kw("COUNT"), g.intArg(1, 30)}))...)
		}},
	}
}
