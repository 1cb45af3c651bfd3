package difftest

// Bitmaps and HyperLogLog.

func bitmapOps() []op {
	B := "bitmap"
	off := func(g *gen) string {
		if g.p(0.03) {
			return g.pick("-1", "abc", "4294967296", "1.5")
		}
		return itoa(g.n(80))
	}
	unit := func(g *gen) []string { return g.opts(0.3, []string{g.kw(g.pick("BYTE", "BIT", "BIT", "WORD"))}) }
	bfType := func(g *gen) string {
		if g.p(0.05) {
			return g.pick("u64", "i65", "x8", "i0", "u")
		}
		return g.pick("i1", "i5", "i8", "i16", "u1", "u7", "u8", "u16", "i64", "u63", "i32")
	}
	bfOff := func(g *gen) string {
		if g.p(0.2) {
			return "#" + itoa(g.n(6))
		}
		return off(g)
	}
	bfVal := func(g *gen) string {
		return g.pick("0", "1", "-1", "5", "127", "128", "-129", "255", "300", "100000", "9223372036854775807", "-9223372036854775808", "abc")
	}
	return []op{
		{"setbit", 6, func(g *gen) {
			g.emit("SETBIT", g.key(B), off(g), g.pick("0", "1", "1", "0", "1", "1", "0", "1", "1", "2", "-1"))
		}},
		{"getbit", 3, func(g *gen) { g.emit("GETBIT", g.key(B), off(g)) }},
		{"bitcount", 3, func(g *gen) {
			args := []string{"BITCOUNT", g.key(B)}
			if g.p(0.6) {
				args = append(args, g.intArg(-10, 10), g.intArg(-10, 10))
				args = append(args, unit(g)...)
			}
			g.emit(args...)
		}},
		{"bitpos", 3, func(g *gen) {
			args := []string{"BITPOS", g.key(B), g.pick("0", "1", "1", "2")}
			switch g.n(3) {
			case 1:
				args = append(args, g.intArg(-10, 10))
			case 2:
				args = append(args, g.intArg(-10, 10), g.intArg(-10, 10))
				args = append(args, unit(g)...)
			}
			g.emit(args...)
		}},
		{"bitop", 2, func(g *gen) {
			opn := g.kw(g.pick("AND", "OR", "XOR", "NOT", "NOT", "NAND"))
			g.emit(cat([]string{"BITOP", opn, g.key(B)}, g.keys(B, 1, 3))...)
		}},
		{"bitfield", 3, func(g *gen) {
			args := []string{"BITFIELD", g.key(B)}
			for i := 0; i <= g.n(3); i++ {
				switch g.n(4) {
				case 0:
					args = append(args, g.kw("GET"), bfType(g), bfOff(g))
				case 1:
					args = append(args, g.kw("SET"), bfType(g), bfOff(g), bfVal(g))
				case 2:
					args = append(args, g.kw("INCRBY"), bfType(g), bfOff(g), bfVal(g))
				case 3:
					args = append(args, g.kw("OVERFLOW"), g.kw(g.pick("WRAP", "SAT", "FAIL", "NONE")))
				}
			}
			g.emit(args...)
		}},
		{"bitfield_ro", 1, func(g *gen) {
			args := []string{"BITFIELD_RO", g.key(B)}
			for i := 0; i <= g.n(2); i++ {
				if g.p(0.9) {
					args = append(args, g.kw("GET"), bfType(g), bfOff(g))
				} else {
					args = append(args, g.kw("SET"), bfType(g), bfOff(g), bfVal(g))
				}
			}
			g.emit(args...)
		}},
	}
}

func hllOps() []op {
	P := "hll"
	return []op{
		{"pfadd", 5, func(g *gen) {
			args := []string{"PFADD", g.key(P)}
			for i := 0; i < g.n(5); i++ {
				args = append(args, g.member())
			}
			g.emit(args...)
		}},
		{"pfadd", 1, func(g *gen) { // many elements: sparse to dense
			if g.p(0.15) {
				args := []string{"PFADD", g.key(P)}
				base := g.n(10000)
				for i := 0; i < 200+g.n(2000); i++ {
					args = append(args, "e"+itoa(base+i))
				}
				g.emit(args...)
			}
		}},
		{"pfcount", 3, func(g *gen) { g.emit(cat([]string{"PFCOUNT"}, g.keys(P, 1, 3))...) }},
		{"pfmerge", 2, func(g *gen) { g.emit(cat([]string{"PFMERGE", g.key(P)}, g.keys(P, 0, 2))...) }},
		{"get", 1, func(g *gen) { g.emit("GET", g.key(P)) }}, // the HLL bytes themselves
	}
}
