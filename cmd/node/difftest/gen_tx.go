package difftest

import (
	"crypto/sha1"
	"encoding/hex"
)

// Transactions and scripts.

func txOps() []op {
	return []op{
		{"multi", 4, func(g *gen) {
			g.inTx = true
			defer func() { g.inTx = false }()
			var watched []string
			if g.p(0.35) {
				watched = g.keys("misc", 1, 2)
				g.emit(cat([]string{"WATCH"}, watched)...)
				if g.p(0.5) { // may touch a watched key: EXEC must then fail
					g.pickOp(g.txOps, g.txTotal).fn(g)
				}
				if g.p(0.1) {
					g.emit("UNWATCH")
				}
			}
			g.emit("MULTI")
			if g.p(0.1) { // keyless commands only: no slot binds the transaction
				for i := 0; i < 1+g.n(2); i++ {
					switch g.n(4) {
					case 0:
						g.emit("SCAN", "0", g.kw("COUNT"), itoa(1+g.n(100)))
					case 1:
						g.emit("DBSIZE")
					case 2:
						g.emit("KEYS", g.pick(patterns...))
					default:
						g.emit("RANDOMKEY")
					}
				}
				g.emit("EXEC")
				return
			}
			for i := 0; i < 1+g.n(6); i++ {
				switch {
				case g.p(0.03): // errors at queue time: EXECABORT
					g.emit(g.pick("NOSUCHCMD", "GET", "SET"))
				case g.p(0.02):
					g.emit(g.pick("MULTI", "WATCH"), AllKeys[g.n(len(AllKeys))])
				default:
					g.pickOp(g.txOps, g.txTotal).fn(g)
				}
			}
			if g.p(0.15) {
				g.emit("DISCARD")
			} else {
				g.emit("EXEC")
			}
		}},
		{"exec", 1, func(g *gen) { g.emit(g.pick("EXEC", "DISCARD", "UNWATCH")) }},
		{"watch", 1, func(g *gen) { g.emit(cat([]string{"WATCH"}, g.keys("misc", 1, 2))...) }},
	}
}

// Script is a library script: its body and a generator of KEYS/ARGV.
type Script struct {
	Body string
	Keys int // KEYS count the generator passes
	Args func(g *gen) []string
	// Mode names the comparison rule of its reply (see rules.go); "" is
	// exact.
	Mode string
	// Needs is a command the script calls that the server under test may
	// not have yet ("": none beyond the common ones).
	Needs string
}

// Sha is the script's SHA1 as EVALSHA wants it.
func (s Script) Sha() string {
	h := sha1.Sum([]byte(s.Body))
	return hex.EncodeToString(h[:])
}

func oneVal(g *gen) []string { return []string{g.value()} }
func noArgs(*gen) []string   { return nil }

// Scripts covers the Lua<->RESP conversions, redis.call/pcall errors,
// status/error replies, sha1hex, read-only scripts and RESP3 mode.
var Scripts = []Script{
	{Body: "return redis.call('GET', KEYS[1])", Keys: 1, Args: noArgs},
	{Body: "return redis.call('SET', KEYS[1], ARGV[1])", Keys: 1, Args: oneVal},
	{Body: "return redis.call('INCRBY', KEYS[1], ARGV[1])", Keys: 1, Args: func(g *gen) []string { return []string{g.intArg(-5, 5)} }},
	{Body: "return redis.pcall('INCRBY', KEYS[1], ARGV[1])", Keys: 1, Args: oneVal},
	{Body: "local n = redis.call('RPUSH', KEYS[1], ARGV[1]) return {n, redis.call('LRANGE', KEYS[1], 0, -1)}", Keys: 1, Args: oneVal},
	{Body: "return {1, 'two', 3.7, -2.5, true, false, {ARGV[1], {}}, nil, 'after nil'}", Args: oneVal},
	{Body: "return redis.status_reply('FINE')", Args: noArgs},
	{Body: "return redis.error_reply('MYERR custom')", Args: noArgs},
	{Body: "return {err='ERR table err'}", Args: noArgs},
	{Body: "return {ok='table ok'}", Args: noArgs},
	{Body: "return redis.sha1hex(ARGV[1])", Args: oneVal},
	{Body: "return #KEYS + #ARGV * 100", Keys: 2, Args: func(g *gen) []string { return g.keys("misc", 0, 2) }},
	{Body: "local t = {} for i, k in ipairs(KEYS) do t[i] = redis.call('TYPE', k).ok end return t", Keys: 3, Args: noArgs},
	{Body: "return redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')", Keys: 1, Args: noArgs},
	{Body: "redis.call('DEL', KEYS[1]) return redis.call('EXISTS', KEYS[1])", Keys: 1, Args: noArgs},
	{Body: "return redis.call('HGETALL', KEYS[1])", Keys: 1, Args: noArgs, Mode: "pairs"},
	{Body: "return redis.call('SMEMBERS', KEYS[1])", Keys: 1, Args: noArgs, Mode: "unordered"},
	{Body: "return redis.call('NOSUCH', KEYS[1])", Keys: 1, Args: noArgs},
	{Body: "return redis.pcall('HSET', KEYS[1])", Keys: 1, Args: noArgs},
	{Body: "error('boom')", Args: noArgs},
	{Body: "return redis.call('GET', KEYS[1]) == false", Keys: 1, Args: noArgs},
	{Body: "redis.setresp(3) return redis.call('ZSCORE', KEYS[1], ARGV[1])", Keys: 1, Args: func(g *gen) []string { return []string{g.member()} }},
	{Body: "redis.setresp(3) return redis.call('HGET', KEYS[1], 'f1')", Keys: 1, Args: noArgs},
	{Body: "return redis.call('EXPIRE', KEYS[1], 1000)", Keys: 1, Args: noArgs},
	{Body: "return redis.call('LPOP', KEYS[1], 2)", Keys: 1, Args: noArgs},
	{Body: "return redis.call('BLPOP', KEYS[1], '0.01')", Keys: 1, Args: noArgs},
	{Body: "return tonumber(ARGV[1])", Args: func(g *gen) []string { return []string{g.pick("1", "-1", "3.5", "1e3", "0x10", " 5", "abc", "")} }},
	{Body: "local s = 0 for i = 1, tonumber(ARGV[1]) do s = s + i end return s", Args: func(g *gen) []string { return []string{itoa(g.n(50))} }},
	{Body: "return redis.call('INCRBYFLOAT', KEYS[1], ARGV[1])", Keys: 1, Args: func(g *gen) []string { return []string{g.score()} }},
	{Body: "return redis.call('SADD', KEYS[1], ARGV[1], ARGV[2])", Keys: 1, Args: func(g *gen) []string { return []string{g.member(), g.member()} }},
	// DUMP/RESTORE round trip inside the server (the payload never leaves
	// it). Not for a hashtable hash: its payload lists the fields in
	// hashtable order and RESTORE turns a small one into a listpack in that
	// order, which then differs from Redis's for no fault of slotd.
	{Body: "if redis.call('TYPE', KEYS[1]).ok == 'hash' and redis.call('OBJECT', 'ENCODING', KEYS[1]) == 'hashtable' " +
		"then return 'skip' end local d = redis.call('DUMP', KEYS[1]) if not d then return 'none' end " +
		"return redis.call('RESTORE', KEYS[2], ARGV[1], d, 'REPLACE')", Keys: 2,
		Args: func(g *gen) []string { return []string{g.pick("0", "0", "100000", "-1")} }, Needs: "restore"},
	{Body: "if redis.call('TYPE', KEYS[1]).ok == 'hash' and redis.call('OBJECT', 'ENCODING', KEYS[1]) == 'hashtable' " +
		"then return 'skip' end local d = redis.call('DUMP', KEYS[1]) if not d then return 'none' end " +
		"return redis.pcall('RESTORE', KEYS[2], 0, d)", Keys: 2, Args: noArgs, Needs: "restore"},
}

func scriptOps() []op {
	keysFor := func(g *gen, s Script) []string {
		out := make([]string, s.Keys)
		for i := range out {
			out[i] = AllKeys[g.n(len(AllKeys))]
		}
		return out
	}
	call := func(g *gen, name string) {
		s := Scripts[g.n(len(Scripts))]
		for s.Needs != "" && g.has != nil && !g.has(s.Needs) {
			s = Scripts[g.n(len(Scripts))]
		}
		first := s.Body
		if name == "EVALSHA" || name == "EVALSHA_RO" {
			first = s.Sha()
		}
		ks := keysFor(g, s)
		g.emit(cat([]string{name, first, g.numkeys(len(ks))}, ks, s.Args(g))...)
	}
	return []op{
		{"eval", 6, func(g *gen) { call(g, "EVAL") }},
		{"evalsha", 3, func(g *gen) { call(g, "EVALSHA") }},
		{"eval_ro", 1, func(g *gen) { call(g, "EVAL_RO") }},
		{"evalsha_ro", 1, func(g *gen) { call(g, "EVALSHA_RO") }},
		{"script", 2, func(g *gen) {
			if g.inTx { // known.go, script-cache-order: SCRIPT runs before the transaction's EVALs
				g.emit("PING")
				return
			}
			s := Scripts[g.n(len(Scripts))]
			switch g.n(8) {
			case 0, 1, 2:
				g.emit("SCRIPT", g.kw("LOAD"), s.Body)
			case 3, 4, 5:
				g.emit("SCRIPT", g.kw("EXISTS"), s.Sha(), Scripts[g.n(len(Scripts))].Sha(), "0000")
			case 6:
				if g.p(0.3) {
					g.emit("SCRIPT", g.kw("FLUSH"))
				}
			default:
				g.emit("SCRIPT", g.kw(g.pick("LOAD", "EXISTS", "NOPE")))
			}
		}},
	}
}
