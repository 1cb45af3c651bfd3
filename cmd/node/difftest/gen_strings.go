package difftest

// Strings and generic key commands.

func stringOps() []op {
	S := "string"
	return []op{
		{"set", 8, func(g *gen) {
			args := []string{"SET", g.key(S), g.value()}
			var exp []string
			switch g.n(8) {
			case 0:
				exp = []string{g.kw("EX"), g.ttlSec()}
			case 1:
				exp = []string{g.kw("PX"), g.ttlMs()}
			case 2:
				exp = []string{g.kw("EXAT"), g.absSec()}
			case 3:
				exp = []string{g.kw("PXAT"), g.absMs()}
			case 4:
				exp = []string{g.kw("KEEPTTL")}
			}
			var cond []string
			switch g.n(6) {
			case 0:
				cond = []string{g.kw("NX")}
			case 1:
				cond = []string{g.kw("XX")}
			}
			extra := []string(nil)
			if g.p(0.03) { // conflicting or unknown option
				extra = []string{g.kw(g.pick("NX", "XX", "EX", "KEEPTTL", "GET", "PERSIST", "FOO"))}
			}
			g.emit(cat(args, g.opts(0.9, exp, cond, extra), g.opts(0.2, []string{g.kw("GET")}))...)
		}},
		{"get", 8, func(g *gen) { g.emit("GET", g.key(S)) }},
		{"getset", 2, func(g *gen) { g.emit("GETSET", g.key(S), g.value()) }},
		{"getdel", 2, func(g *gen) { g.emit("GETDEL", g.key(S)) }},
		{"getex", 3, func(g *gen) {
			args := []string{"GETEX", g.key(S)}
			switch g.n(7) {
			case 0:
				args = append(args, g.kw("EX"), g.ttlSec())
			case 1:
				args = append(args, g.kw("PX"), g.ttlMs())
			case 2:
				args = append(args, g.kw("EXAT"), g.absSec())
			case 3:
				args = append(args, g.kw("PXAT"), g.absMs())
			case 4:
				args = append(args, g.kw("PERSIST"))
			case 5:
				args = append(args, g.kw(g.pick("EX", "PERSIST", "KEEPTTL")), g.pick("10", "x"))
			}
			g.emit(args...)
		}},
		{"setnx", 2, func(g *gen) { g.emit("SETNX", g.key(S), g.value()) }},
		{"setex", 2, func(g *gen) { g.emit("SETEX", g.key(S), g.ttlSec(), g.value()) }},
		{"psetex", 1, func(g *gen) { g.emit("PSETEX", g.key(S), g.ttlMs(), g.value()) }},
		{"append", 4, func(g *gen) { g.emit("APPEND", g.key(S), g.value()) }},
		{"strlen", 2, func(g *gen) { g.emit("STRLEN", g.key(S)) }},
		{"getrange", 3, func(g *gen) { g.emit("GETRANGE", g.key(S), g.intArg(-8, 8), g.intArg(-8, 12)) }},
		{"substr", 1, func(g *gen) { g.emit("SUBSTR", g.key(S), g.intArg(-8, 8), g.intArg(-8, 12)) }},
		{"setrange", 3, func(g *gen) {
			off := g.intArg(0, 20)
			if g.p(0.03) {
				off = g.pick("-1", "536870912") // out of range: nothing is allocated
			}
			g.emit("SETRANGE", g.key(S), off, g.value())
		}},
		{"incr", 4, func(g *gen) { g.emit("INCR", g.key(S)) }},
		{"decr", 2, func(g *gen) { g.emit("DECR", g.key(S)) }},
		{"incrby", 3, func(g *gen) { g.emit("INCRBY", g.key(S), g.intArg(-20, 20)) }},
		{"decrby", 2, func(g *gen) { g.emit("DECRBY", g.key(S), g.intArg(-20, 20)) }},
		{"incrbyfloat", 3, func(g *gen) {
			f := g.score()
			if g.p(0.2) {
				f = g.value()
			}
			g.emit("INCRBYFLOAT", g.key(S), f)
		}},
		{"mget", 3, func(g *gen) { g.emit(cat([]string{"MGET"}, g.keys(S, 1, 4))...) }},
		{"mset", 2, func(g *gen) {
			args := []string{"MSET"}
			for i := 0; i <= g.n(3); i++ {
				args = append(args, g.key(S), g.value())
			}
			if g.p(0.03) {
				args = append(args, g.key(S)) // odd argument count
			}
			g.emit(args...)
		}},
		{"msetnx", 1, func(g *gen) {
			args := []string{"MSETNX"}
			for i := 0; i <= g.n(2); i++ {
				args = append(args, g.key(S), g.value())
			}
			g.emit(args...)
		}},
		{"lcs", 2, func(g *gen) {
			args := []string{"LCS", g.key(S), g.key(S)}
			switch g.n(4) {
			case 0:
				args = append(args, g.kw("LEN"))
			case 1:
				args = append(args, g.kw("IDX"))
				args = append(args, g.opts(0.4, []string{g.kw("MINMATCHLEN"), g.intArg(0, 3)},
					[]string{g.kw("WITHMATCHLEN")})...)
			case 2:
				args = append(args, g.opts(0.5, []string{g.kw("LEN")}, []string{g.kw("IDX")})...)
			}
			g.emit(args...)
		}},
	}
}

func keyOps() []op {
	any := func(g *gen) string { return AllKeys[g.n(len(AllKeys))] }
	anyN := func(g *gen, lo, hi int) []string {
		k := lo + g.n(hi-lo+1)
		out := make([]string, k)
		for i := range out {
			out[i] = any(g)
		}
		return out
	}
	expCond := func(g *gen) []string {
		if g.p(0.4) {
			return []string{g.kw(g.pick("NX", "XX", "GT", "LT", "NX", "FOO"))}
		}
		return nil
	}
	return []op{
		{"del", 4, func(g *gen) { g.emit(cat([]string{"DEL"}, anyN(g, 1, 3))...) }},
		{"unlink", 1, func(g *gen) { g.emit(cat([]string{"UNLINK"}, anyN(g, 1, 3))...) }},
		{"exists", 3, func(g *gen) { g.emit(cat([]string{"EXISTS"}, anyN(g, 1, 3))...) }},
		{"type", 3, func(g *gen) { g.emit("TYPE", any(g)) }},
		{"rename", 2, func(g *gen) { g.emit("RENAME", any(g), any(g)) }},
		{"renamenx", 1, func(g *gen) { g.emit("RENAMENX", any(g), any(g)) }},
		{"copy", 2, func(g *gen) {
			g.emit(cat([]string{"COPY", any(g), any(g)}, g.opts(0.3, []string{g.kw("REPLACE")}, []string{g.kw("DB"), g.db()}))...)
		}},
		{"touch", 1, func(g *gen) { g.emit(cat([]string{"TOUCH"}, anyN(g, 1, 3))...) }},
		{"expire", 3, func(g *gen) { g.emit(cat([]string{"EXPIRE", any(g), g.ttlSec()}, expCond(g))...) }},
		{"pexpire", 2, func(g *gen) { g.emit(cat([]string{"PEXPIRE", any(g), g.ttlMs()}, expCond(g))...) }},
		{"expireat", 2, func(g *gen) { g.emit(cat([]string{"EXPIREAT", any(g), g.absSec()}, expCond(g))...) }},
		{"pexpireat", 1, func(g *gen) { g.emit(cat([]string{"PEXPIREAT", any(g), g.absMs()}, expCond(g))...) }},
		{"persist", 2, func(g *gen) { g.emit("PERSIST", any(g)) }},
		{"ttl", 3, func(g *gen) { g.emit("TTL", any(g)) }},
		{"pttl", 2, func(g *gen) { g.emit("PTTL", any(g)) }},
		{"expiretime", 1, func(g *gen) { g.emit("EXPIRETIME", any(g)) }},
		{"pexpiretime", 1, func(g *gen) { g.emit("PEXPIRETIME", any(g)) }},
		{"keys", 2, func(g *gen) { g.emit("KEYS", g.pick(patterns...)) }},
		{"scan", 2, func(g *gen) {
			cur := "0"
			if g.p(0.05) {
				cur = g.pick("abc", "-1", "18446744073709551616", "1.5")
			}
			g.emit(cat([]string{"SCAN", cur}, g.opts(0.4, []string{g.kw("MATCH"), g.pick(patterns...)},
				[]string{g.kw("COUNT"), g.intArg(0, 30)}, []string{g.kw("TYPE"), g.pick(types...)}))...)
		}},
		{"randomkey", 1, func(g *gen) { g.emit("RANDOMKEY") }},
		{"dbsize", 1, func(g *gen) { g.emit("DBSIZE") }},
		{"flushdb", 1, func(g *gen) {
			if g.p(0.2) { // rare: it wipes the state the other ops built
				g.emit("FLUSHDB")
			}
		}},
		{"dump", 2, func(g *gen) { g.emit("DUMP", any(g)) }}, // payloads must be byte-identical
		{"sort", 2, func(g *gen) {
			args := []string{"SORT", g.key(g.pick("list", "set", "zset"))}
			args = append(args, g.opts(0.4, []string{g.kw("LIMIT"), g.intArg(-1, 3), g.intArg(-1, 5)},
				[]string{g.kw(g.pick("ASC", "DESC"))}, []string{g.kw("ALPHA")})...)
			if g.p(0.2) && !g.inTx {
				args = append(args, g.kw("STORE"), g.key("list"))
			}
			g.emit(args...)
		}},
		{"sort_ro", 1, func(g *gen) {
			g.emit(cat([]string{"SORT_RO", g.key(g.pick("list", "set", "zset"))}, g.opts(0.5, []string{g.kw("ALPHA")}, []string{g.kw("DESC")}))...)
		}},
		{"ping", 1, func(g *gen) { g.emit(cat([]string{"PING"}, g.opts(0.5, []string{g.value()}))...) }},
		{"echo", 1, func(g *gen) { g.emit("ECHO", g.value()) }},
		{"get", 1, func(g *gen) { g.emit("NOSUCHCMD", any(g)) }}, // unknown command error text
	}
}
