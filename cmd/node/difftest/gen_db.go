package difftest

// Databases: a sequence moves between databases 0–2 (SELECT), moves keys
// (MOVE, COPY ... DB) and swaps databases (SWAPDB); the dataset check reads
// each of them back. Bad indexes now and then.

// dbCount is how many databases the generator uses.
const dbCount = 3

func (g *gen) db() string {
	if g.p(0.08) {
		return g.pick("16", "-1", "x", "2147483648", "")
	}
	return g.pick("0", "1", "2")
}

func dbOps() []op {
	return []op{
		{"select", 3, func(g *gen) { g.emit("SELECT", g.db()) }},
		{"move", 2, func(g *gen) { g.emit("MOVE", AllKeys[g.n(len(AllKeys))], g.db()) }},
		{"swapdb", 1, func(g *gen) { g.emit("SWAPDB", g.db(), g.db()) }},
	}
}
