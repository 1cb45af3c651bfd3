package difftest

// Streams and geo. Stream IDs are always explicit ("<ms>-<seq>" or
// "<ms>-*" with a growing ms), never "*", so replies do not depend on the
// clock; nothing generated shows idle or delivery times (XPENDING only in
// its summary form, no XINFO CONSUMERS or FULL, XCLAIM/XAUTOCLAIM with
// min-idle 0). Blocking reads use a 10 ms BLOCK and are usually fed first.

func streamOps() []op {
	S, G := "stream", "geo"
	ms := 0
	nextMS := func(g *gen) string {
		ms += g.n(3)
		return itoa(ms)
	}
	id := func(g *gen) string {
		switch g.n(10) {
		case 0:
			return g.pick("0-0", "-", "+", "0", "abc", "1-x", "18446744073709551615-18446744073709551615")
		case 1, 2:
			return itoa(g.n(ms + 2))
		}
		return itoa(g.n(ms+2)) + "-" + itoa(g.n(3))
	}
	bound := func(g *gen) string {
		if g.p(0.3) {
			return "(" + id(g)
		}
		return id(g)
	}
	fieldValues := func(g *gen) []string {
		var fv []string
		if g.p(0.4) {
			return []string{"f1", g.value(), "f2", g.value()} // same fields: compressed entries
		}
		for i := 0; i <= g.n(3); i++ {
			fv = append(fv, g.field(), g.value())
		}
		return fv
	}
	trim := func(g *gen) []string {
		var t []string
		switch g.n(8) {
		case 0:
			t = []string{g.kw("MAXLEN"), g.pick("=", "~", ""), itoa(g.n(12))}
		case 1:
			t = []string{g.kw("MINID"), g.pick("=", "~", ""), id(g)}
		case 2:
			t = []string{g.kw("MAXLEN"), "~", itoa(g.n(12)), g.kw("LIMIT"), g.intArg(-1, 6)}
		default:
			return nil
		}
		out := t[:0:0]
		for _, a := range t {
			if a != "" {
				out = append(out, a)
			}
		}
		return out
	}
	xadd := func(g *gen, key string) {
		args := []string{"XADD", key}
		if g.p(0.1) {
			args = append(args, g.kw("NOMKSTREAM"))
		}
		args = append(args, trim(g)...)
		if g.p(0.8) {
			args = append(args, nextMS(g)+"-*")
		} else {
			args = append(args, id(g))
		}
		g.emit(append(args, fieldValues(g)...)...)
	}
	group := func(g *gen) string { return g.pick("g1", "g2", "g1") }
	consumer := func(g *gen) string { return g.pick("c1", "c2", "c3") }
	geoPoint := func(g *gen) []string {
		if g.p(0.05) {
			return []string{g.pick("181", "-180.5", "abc", "10"), g.pick("86", "-85.06", "x", "45")}
		}
		lon := itoa(g.n(40)-20) + "." + itoa(g.n(1000000))
		lat := itoa(g.n(40)-20) + "." + itoa(g.n(1000000))
		return []string{lon, lat}
	}
	unit := func(g *gen) string { return g.kw(g.pick("m", "km", "mi", "ft", "km", "parsec")) }
	searchOpts := func(g *gen, store bool) []string {
		var o []string
		if !store {
			o = g.opts(0.4, []string{g.kw("WITHDIST")}, []string{g.kw("WITHCOORD")}, []string{g.kw("WITHHASH")})
		}
		o = append(o, g.opts(0.5, []string{g.kw(g.pick("ASC", "DESC"))},
			[]string{g.kw("COUNT"), g.intArg(0, 4)})...)
		if g.p(0.1) {
			o = append(o, g.kw("ANY"))
		}
		return o
	}
	return []op{
		{"xadd", 12, func(g *gen) { xadd(g, g.key(S)) }},
		{"xadd", 1, func(g *gen) { // many entries: several nodes
			if g.p(0.2) {
				k := g.key(S)
				for i := 0; i < 20+g.n(40); i++ {
					g.emit("XADD", k, nextMS(g)+"-*", "f1", itoa(i), "f2", g.value())
				}
			}
		}},
		{"xlen", 2, func(g *gen) { g.emit("XLEN", g.key(S)) }},
		{"xrange", 4, func(g *gen) {
			g.emit(cat([]string{"XRANGE", g.key(S), bound(g), bound(g)}, g.opts(0.5, []string{g.kw("COUNT"), g.intArg(-1, 5)}))...)
		}},
		{"xrevrange", 2, func(g *gen) {
			g.emit(cat([]string{"XREVRANGE", g.key(S), bound(g), bound(g)}, g.opts(0.5, []string{g.kw("COUNT"), g.intArg(-1, 5)}))...)
		}},
		{"xdel", 3, func(g *gen) { g.emit("XDEL", g.key(S), id(g), id(g)) }},
		{"xtrim", 2, func(g *gen) {
			t := trim(g)
			if len(t) == 0 {
				t = []string{g.kw("MAXLEN"), itoa(g.n(10))}
			}
			g.emit(cat([]string{"XTRIM", g.key(S)}, t)...)
		}},
		{"xsetid", 1, func(g *gen) {
			g.emit(cat([]string{"XSETID", g.key(S), id(g)}, g.opts(0.3,
				[]string{g.kw("ENTRIESADDED"), g.intArg(-1, 200)}, []string{g.kw("MAXDELETEDID"), id(g)}))...)
		}},
		{"xread", 3, func(g *gen) {
			ks := g.keys(S, 1, 2)
			args := []string{"XREAD"}
			args = append(args, g.opts(0.5, []string{g.kw("COUNT"), g.intArg(-1, 4)})...)
			args = append(args, g.kw("STREAMS"))
			args = append(args, ks...)
			for range ks {
				args = append(args, id(g))
			}
			g.emit(args...)
		}},
		{"xread", 1, func(g *gen) { // blocking, usually fed
			k := g.key(S)
			g.emit("XREAD", g.kw("BLOCK"), "10", g.kw("STREAMS"), k, g.pick("$", id(g)))
		}},
		{"xgroup", 3, func(g *gen) {
			switch g.n(6) {
			case 0, 1:
				g.emit(cat([]string{"XGROUP", g.kw("CREATE"), g.key(S), group(g), g.pick("$", "0", id(g))},
					g.opts(0.3, []string{g.kw("MKSTREAM")}, []string{g.kw("ENTRIESREAD"), g.intArg(-2, 20)}))...)
			case 2:
				g.emit(cat([]string{"XGROUP", g.kw("SETID"), g.key(S), group(g), g.pick("$", "0", id(g))},
					g.opts(0.3, []string{g.kw("ENTRIESREAD"), g.intArg(-2, 20)}))...)
			case 3:
				g.emit("XGROUP", g.kw("DESTROY"), g.key(S), group(g))
			case 4:
				g.emit("XGROUP", g.kw("CREATECONSUMER"), g.key(S), group(g), consumer(g))
			default:
				g.emit("XGROUP", g.kw("DELCONSUMER"), g.key(S), group(g), consumer(g))
			}
		}},
		{"xreadgroup", 5, func(g *gen) {
			args := []string{"XREADGROUP", g.kw("GROUP"), group(g), consumer(g)}
			args = append(args, g.opts(0.4, []string{g.kw("COUNT"), g.intArg(-1, 4)}, []string{g.kw("NOACK")})...)
			if g.p(0.15) {
				k := g.key(S)
				xadd(g, k) // feed it
				args = append(args, g.kw("BLOCK"), "10", g.kw("STREAMS"), k, ">")
			} else {
				args = append(args, g.kw("STREAMS"), g.key(S), g.pick(">", ">", "0", id(g)))
			}
			g.emit(args...)
		}},
		{"xack", 3, func(g *gen) { g.emit("XACK", g.key(S), group(g), id(g), id(g)) }},
		{"xpending", 2, func(g *gen) { g.emit("XPENDING", g.key(S), group(g)) }},
		{"xclaim", 2, func(g *gen) {
			g.emit(cat([]string{"XCLAIM", g.key(S), group(g), consumer(g), "0", id(g), id(g)},
				[]string{g.kw("JUSTID")}, g.opts(0.3, []string{g.kw("FORCE")}, []string{g.kw("RETRYCOUNT"), g.intArg(0, 5)},
					[]string{g.kw("LASTID"), id(g)}))...)
		}},
		{"xautoclaim", 2, func(g *gen) {
			g.emit(cat([]string{"XAUTOCLAIM", g.key(S), group(g), consumer(g), "0", g.pick("0", "-", id(g))},
				g.opts(0.5, []string{g.kw("COUNT"), g.intArg(0, 5)}, []string{g.kw("JUSTID")}))...)
		}},
		{"xinfo", 2, func(g *gen) { g.emit("XINFO", g.kw("GROUPS"), g.key(S)) }},
		{"geoadd", 6, func(g *gen) {
			args := []string{"GEOADD", g.key(G)}
			args = append(args, g.opts(0.2, []string{g.kw("NX")}, []string{g.kw("XX")}, []string{g.kw("CH")})...)
			for i := 0; i <= g.n(3); i++ {
				args = append(args, geoPoint(g)...)
				args = append(args, g.member())
			}
			g.emit(args...)
		}},
		{"geopos", 2, func(g *gen) { g.emit("GEOPOS", g.key(G), g.member(), g.member()) }},
		{"geohash", 2, func(g *gen) { g.emit("GEOHASH", g.key(G), g.member(), g.member()) }},
		{"geodist", 2, func(g *gen) {
			g.emit(cat([]string{"GEODIST", g.key(G), g.member(), g.member()}, g.opts(0.5, []string{unit(g)}))...)
		}},
		{"geosearch", 4, func(g *gen) {
			args := []string{"GEOSEARCH", g.key(G)}
			if g.p(0.5) {
				args = append(args, g.kw("FROMMEMBER"), g.member())
			} else {
				args = append(args, append([]string{g.kw("FROMLONLAT")}, geoPoint(g)...)...)
			}
			if g.p(0.5) {
				args = append(args, g.kw("BYRADIUS"), itoa(g.n(3000)), unit(g))
			} else {
				args = append(args, g.kw("BYBOX"), itoa(g.n(3000)), itoa(g.n(3000)), unit(g))
			}
			g.emit(append(args, searchOpts(g, false)...)...)
		}},
		{"geosearchstore", 2, func(g *gen) {
			args := []string{"GEOSEARCHSTORE", g.key("zset"), g.key(G),
				g.kw("FROMLONLAT")}
			args = append(args, geoPoint(g)...)
			args = append(args, g.kw("BYRADIUS"), itoa(g.n(3000)), unit(g))
			// Without STOREDIST: distances may differ from Redis's in the
			// last bit (see geo's package doc), stored scores would show it.
			g.emit(append(args, searchOpts(g, true)...)...)
		}},
		{"georadius", 2, func(g *gen) {
			args := append([]string{g.pick("GEORADIUS", "GEORADIUS_RO"), g.key(G)}, geoPoint(g)...)
			g.emit(append(append(args, itoa(g.n(3000)), unit(g)), searchOpts(g, false)...)...)
		}},
		{"georadiusbymember", 2, func(g *gen) {
			args := []string{g.pick("GEORADIUSBYMEMBER", "GEORADIUSBYMEMBER_RO"), g.key(G), g.member(), itoa(g.n(3000)), unit(g)}
			g.emit(append(args, searchOpts(g, false)...)...)
		}},
	}
}
