package difftest

import "strings"

// Keys of several shard actors. A standalone node splits its keyspace
// across shard actors (slot % actors); these ops use keys of four
// different slots (one per actor of a 4-actor node, spread across any
// other count) in multi-key commands and transactions, which must run as
// on one redis-server: same replies, atomically. They are generated only
// for a server whose routing spans actors (GenerateCrossShard): the
// in-process engine is one shard and answers CROSSSLOT for them.

// CrossKeys are the keys of different slots (shards 2, 3, 0, 1 of four).
var CrossKeys = []string{"{c0}v", "{c1}v", "{c2}v", "{c3}v"}

// GenerateCrossShard is Generate with the cross-shard ops added, and half
// of the other ops' commands spread: their keys lose the common hash tag
// (spreadKeys), so a multi-key command (RENAME, SMOVE, LMOVE, SUNIONSTORE,
// ZUNIONSTORE, PFMERGE, BITOP, MSETNX, ...) names keys of several slots
// and shard actors.
func GenerateCrossShard(seed uint64, n int, has func(name string) bool) []Cmd {
	return generate(seed, n, has, crossOps(), true)
}

// spreadKeys drops the {k} tag of every key the commands of one op name
// ("{k}t1" becomes "t1", whose slot is its own), unless one of them is of
// a kind that slotd still refuses with CROSSSLOT over keys of several
// shard actors: blocking commands, stream reads, transactions, scripts,
// SORT (see netio/spread.go).
func spreadKeys(cmds []Cmd) {
	for _, c := range cmds {
		switch strings.ToUpper(c.Name()) {
		case "MULTI", "EXEC", "BLPOP", "BRPOP", "BLMOVE", "BRPOPLPUSH", "BLMPOP", "BZPOPMIN", "BZPOPMAX",
			"BZMPOP", "XREAD", "XREADGROUP", "EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO", "FCALL", "FCALL_RO",
			"SORT", "SORT_RO", "MIGRATE":
			return
		}
	}
	for _, c := range cmds {
		for i := 1; i < len(c); i++ {
			if isKey[c[i]] {
				c[i] = strings.TrimPrefix(c[i], "{k}")
			}
		}
	}
}

func (g *gen) crossKey() string {
	if g.p(0.1) {
		return AllKeys[g.n(len(AllKeys))]
	}
	return CrossKeys[g.n(len(CrossKeys))]
}

func (g *gen) crossKeys(lo, hi int) []string {
	out := make([]string, lo+g.n(hi-lo+1))
	for i := range out {
		out[i] = g.crossKey()
	}
	return out
}

func (g *gen) crossValue() string {
	if g.p(0.5) {
		return itoa(g.n(20) - 5)
	}
	return g.value()
}

// crossCmd is one command over cross keys, of the kinds a transaction
// over several shards holds.
func (g *gen) crossCmd() {
	switch g.n(9) {
	case 0:
		g.emit("SET", g.crossKey(), g.crossValue())
	case 1:
		g.emit(g.pick("INCR", "DECR", "GET", "STRLEN"), g.crossKey())
	case 2:
		g.emit("INCRBY", g.crossKey(), itoa(g.n(10)-3))
	case 3:
		g.emit("APPEND", g.crossKey(), g.crossValue())
	case 4:
		g.mset()
	case 5:
		g.emit(cat([]string{"MGET"}, g.crossKeys(1, 4))...)
	case 6:
		g.emit(cat([]string{g.pick("DEL", "UNLINK")}, g.crossKeys(1, 3))...)
	case 7:
		g.emit(cat([]string{g.pick("EXISTS", "TOUCH")}, g.crossKeys(1, 4))...)
	default:
		g.emit("DBSIZE")
	}
}

func (g *gen) mset() {
	args := []string{"MSET"}
	for range 1 + g.n(4) {
		args = append(args, g.crossKey(), g.crossValue())
	}
	g.emit(args...)
}

func crossOps() []op {
	return []op{
		{"mset", 12, func(g *gen) { g.mset() }},
		{"mget", 8, func(g *gen) { g.emit(cat([]string{"MGET"}, g.crossKeys(1, 4))...) }},
		{"del", 5, func(g *gen) { g.emit(cat([]string{g.pick("DEL", "UNLINK")}, g.crossKeys(1, 3))...) }},
		{"exists", 5, func(g *gen) { g.emit(cat([]string{g.pick("EXISTS", "TOUCH")}, g.crossKeys(1, 4))...) }},
		{"incr", 5, func(g *gen) { g.emit(g.pick("INCR", "GET"), g.crossKey()) }},
		{"multi", 15, func(g *gen) {
			g.inTx = true
			defer func() { g.inTx = false }()
			if g.p(0.4) {
				g.emit(cat([]string{"WATCH"}, g.crossKeys(1, 3))...)
				if g.p(0.4) { // may touch a watched key: EXEC must then fail
					g.crossCmd()
				}
				if g.p(0.1) {
					g.emit("UNWATCH")
				}
			}
			g.emit("MULTI")
			for range 1 + g.n(5) {
				g.crossCmd()
			}
			if g.p(0.1) {
				g.emit("DISCARD")
			} else {
				g.emit("EXEC")
			}
		}},
	}
}
