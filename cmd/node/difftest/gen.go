package difftest

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// Key names: 20 keys sharing the hash tag {k}, so every multi-key command is
// legal in cluster mode too. Each data type prefers its own few keys (so
// values grow and get reused) but picks any key now and then (so types clash
// and WRONGTYPE paths run).
var keyGroups = map[string][]string{
	"string": {"{k}s0", "{k}s1", "{k}s2"},
	"bitmap": {"{k}b0", "{k}b1"},
	"hll":    {"{k}p0", "{k}p1"},
	"list":   {"{k}l0", "{k}l1", "{k}l2"},
	"hash":   {"{k}h0", "{k}h1", "{k}h2"},
	"set":    {"{k}t0", "{k}t1", "{k}t2"},
	"zset":   {"{k}z0", "{k}z1", "{k}z2"},
	"stream": {"{k}x0", "{k}x1"},
	"geo":    {"{k}g0", "{k}g1"},
	"misc":   {"{k}x"},
}

// AllKeys lists every key name the generator uses.
var AllKeys = func() []string {
	var ks []string
	for _, g := range []string{"string", "bitmap", "hll", "list", "hash", "set", "zset", "stream", "geo", "misc"} {
		ks = append(ks, keyGroups[g]...)
	}
	return ks
}()

var isKey = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range AllKeys {
		m[k] = true
	}
	return m
}()

// Small alphabets: collisions are the point. Members lean to integers so
// sets stay intsets some of the time.
var (
	members = []string{"a", "b", "c", "d", "e", "f", "0", "1", "2", "3", "5", "10", "-1", "-7", "100",
		"3.5", "", "x y", "\x00\xff", "007", "9223372036854775807", "-9223372036854775808"}
	values = []string{"", "0", "1", "-1", "10", "42", "-100", "007", " 5", "+5", "3.5", "-0.25", "1e3",
		"1.5e-3", "inf", "-inf", "nan", "foo", "bar", "hello world", "\x00\x01\xfe\xff", "9223372036854775807",
		"-9223372036854775808", "9223372036854775808", "0.1", "12345678901234567890", "abc"}
	fields  = []string{"f1", "f2", "f3", "f4", "a", "b", "1", "2", "", "x y"}
	badInts = []string{"abc", "1.5", "", "9223372036854775808", "-9223372036854775809", " 1", "0x10", "1e3"}
	// Scores: valid forms, some exotic; bad ones ("nan", words) now and then.
	scores = []string{"0", "1", "2", "-1", "2.5", "-3.75", "1e2", "+inf", "-inf", "inf", "0.1", "3", "10",
		"1.0000000000000002", "-0", "5e-324", "0x10", "0x1p3", "infinity", "-Infinity", ".5", "5.", "+.5e1", "1E2"}
	// Bad floats, including forms Go's strconv accepts and strtod does not.
	badFloats = []string{"nan", "abc", "", "1e400", "1.5.2", "--1", "0x1p3x", "1_0", " 1", "1 ", "0x", "1e", "NaN", "-nan"}
	scoreMins = []string{"-inf", "+inf", "0", "1", "(1", "2.5", "(2.5", "-1", "(-1", "10", "(inf", "(-inf"}
	badScores = []string{"abc", "(", "[1", "", "nan", "(nan"}
	lexMins   = []string{"-", "+", "[a", "(a", "[c", "(d", "[", "(", "[1", "(3", "[x y", "[M"}
	badLex    = []string{"a", "", "1", "{a"}
	patterns  = []string{"*", "{k}s*", "{k}?0", "*[lh]*", "{k}[a-m]?", "\\{k\\}*", "*1", "{k}z[^0]", "nomatch*", "{k}x", "*\\*"}
	types     = []string{"string", "list", "set", "zset", "hash", "stream", "foo", "STRING"}
)

type op struct {
	cmd    string // enabled when the server under test has this command
	weight int
	fn     func(g *gen)
}

type gen struct {
	r       *rand.Rand
	out     []Cmd
	ops     []op
	total   int
	txOps   []op // ops allowed inside MULTI: no nested transaction blocks
	txTotal int
	has     func(string) bool // see Generate
	// inTx is set while a transaction block is generated: ops then avoid
	// lexicographic ranges, whose result may be unspecified and cannot be
	// probed for inside MULTI (see rules.go).
	inTx bool
}

// Generate returns n commands generated from seed. has reports whether the
// server under test implements a command (lower-case name); ops whose
// command it lacks are left out, so a type joins the mix as soon as its
// commands exist. nil means every command.
func Generate(seed uint64, n int, has func(name string) bool) []Cmd {
	return generate(seed, n, has, nil, false)
}

// generate is Generate with the ops extra added to the mix.
func generate(seed uint64, n int, has func(name string) bool, extra []op, spread bool) []Cmd {
	g := &gen{r: rand.New(rand.NewPCG(seed, 0x5107d)), has: has}
	for _, o := range append(allOps(), extra...) {
		if has != nil && !has(o.cmd) {
			continue
		}
		g.ops = append(g.ops, o)
		g.total += o.weight
		if o.cmd != "multi" {
			g.txOps = append(g.txOps, o)
			g.txTotal += o.weight
		}
	}
	if g.total == 0 {
		return nil
	}
	watchable := has == nil || has("watch") && has("multi") && has("exec")
	for len(g.out) < n {
		o := g.pickOp(g.ops, g.total)
		start := len(g.out)
		if o.cmd == "multi" || !watchable || !g.p(0.1) {
			o.fn(g)
		} else {
			g.watched(o)
		}
		if spread && g.p(0.5) {
			spreadKeys(g.out[start:])
		}
	}
	return g.out[:n]
}

// watched runs op o between a WATCH of the keys it uses and a transaction
// (MULTI PING EXEC): EXEC then tells whether o signalled a key as
// modified, which Redis does only on a real change.
func (g *gen) watched(o op) {
	start := len(g.out)
	o.fn(g)
	var ks []string
	for _, c := range g.out[start:] {
		if c.Name() == "MULTI" || c.Name() == "EXEC" || c.Name() == "DISCARD" || c.Name() == "WATCH" {
			return
		}
		for _, a := range c[1:] {
			if isKey[a] && !slices.Contains(ks, a) {
				ks = append(ks, a)
			}
		}
	}
	if len(ks) == 0 {
		return
	}
	g.out = slices.Insert(g.out, start, cat([]string{"WATCH"}, ks))
	g.out = append(g.out, Cmd{"MULTI"}, Cmd{"PING"}, Cmd{"EXEC"})
}

func (g *gen) pickOp(ops []op, total int) op {
	w := g.r.IntN(total)
	for _, o := range ops {
		if w < o.weight {
			return o
		}
		w -= o.weight
	}
	return ops[len(ops)-1]
}

func (g *gen) n(k int) int              { return g.r.IntN(k) }
func (g *gen) p(prob float64) bool      { return g.r.Float64() < prob }
func (g *gen) pick(ss ...string) string { return ss[g.r.IntN(len(ss))] }
func itoa(n int) string                 { return strconv.Itoa(n) }

// kw returns a keyword in random case: commands and options are
// case-insensitive.
func (g *gen) kw(s string) string {
	switch g.n(10) {
	case 0:
		return strings.ToLower(s)
	case 1:
		b := []byte(strings.ToLower(s))
		b[0] = strings.ToUpper(s[:1])[0]
		return string(b)
	}
	return s
}

// emit appends a command. The name gets a random case; about 1% of commands
// lose trailing arguments (wrong arity or a half-given option).
func (g *gen) emit(args ...string) {
	args[0] = g.kw(args[0])
	if len(args) > 1 && g.p(0.01) {
		args = args[:1+g.n(len(args)-1)]
	}
	g.out = append(g.out, Cmd(args))
}

func (g *gen) key(group string) string {
	if g.p(0.92) {
		ks := keyGroups[group]
		return ks[g.n(len(ks))]
	}
	return AllKeys[g.n(len(AllKeys))]
}

func (g *gen) keys(group string, lo, hi int) []string {
	k := lo + g.n(hi-lo+1)
	out := make([]string, k)
	for i := range out {
		out[i] = g.key(group)
	}
	return out
}

func (g *gen) member() string {
	if g.p(0.02) {
		return strings.Repeat("M", 60+g.n(10)) // > 64 bytes converts listpacks
	}
	return g.pick(members...)
}

func (g *gen) value() string {
	switch {
	case g.p(0.02):
		return strings.Repeat("v", 60+g.n(10))
	case g.p(0.4): // integers, so INCR and friends mostly apply
		return itoa(g.n(41) - 20)
	}
	return g.pick(values...)
}

func (g *gen) field() string { return g.pick(fields...) }

// intArg is an integer in [lo, hi], or now and then a bad or extreme one.
func (g *gen) intArg(lo, hi int) string {
	switch {
	case g.p(0.02):
		return g.pick(badInts...)
	case g.p(0.02):
		return g.pick("9223372036854775807", "-9223372036854775808", "2147483648", "-2147483649")
	}
	return itoa(lo + g.n(hi-lo+1))
}

func (g *gen) score() string {
	if g.p(0.03) {
		return g.pick(badFloats...)
	}
	return g.pick(scores...)
}

func (g *gen) scoreRange() (string, string) {
	if g.p(0.05) {
		return g.pick(badScores...), g.pick(scoreMins...)
	}
	return g.pick(scoreMins...), g.pick(scoreMins...)
}

func (g *gen) lexRange() (string, string) {
	if g.p(0.05) {
		return g.pick(lexMins...), g.pick(badLex...)
	}
	return g.pick(lexMins...), g.pick(lexMins...)
}

// Expiry arguments never expire during a run (nothing depends on timing):
// long relative TTLs, far-future or past absolute times, and bad ones.
func (g *gen) ttlSec() string {
	return g.pick("100", "1000", "86400", "100000", "0", "-5", "abc", "9223372036854775807")
}
func (g *gen) ttlMs() string {
	return g.pick("100000", "3600000", "86400000", "0", "-1", "1.5")
}
func (g *gen) absSec() string { return g.pick("4102444800", "1893456000", "1", "0", "-1") }
func (g *gen) absMs() string  { return g.pick("4102444800000", "1893456000123", "1", "-5") }

// timeout for blocking commands: always 10 ms (or invalid), never 0, so
// nothing can hang even after minimisation reorders the state.
func (g *gen) timeout() string {
	if g.p(0.03) {
		return g.pick("-1", "abc", "1e400")
	}
	return "0.01"
}

// feed usually pushes an element to one of the keys a blocking command is
// about to wait on, so most blocking commands are served at once (the
// timeout path costs 10 ms on each server) and some wait and time out.
func (g *gen) feed(push string, keys []string) []string {
	if g.p(0.8) {
		k := keys[g.n(len(keys))]
		if push == "ZADD" {
			g.emit("ZADD", k, g.score(), g.member())
		} else {
			g.emit(push, k, g.member())
		}
	}
	return keys
}

func (g *gen) count() string { return g.intArg(-2, 6) }

// randCount is SRANDMEMBER/HRANDFIELD/ZRANDMEMBER's count: a large
// negative count would make Redis build a reply of that many elements.
func (g *gen) randCount() string {
	switch {
	case g.p(0.02):
		return g.pick(badInts...)
	case g.p(0.02):
		return g.pick("9223372036854775807", "-9223372036854775808", "2147483648")
	}
	return itoa(g.n(14) - 5)
}
func (g *gen) index() string { return g.intArg(-6, 6) }

func (g *gen) dir() string    { return g.kw(g.pick("LEFT", "RIGHT")) }
func (g *gen) minmax() string { return g.kw(g.pick("MIN", "MAX")) }

// numkeys returns "len(keys)" usually, a wrong count sometimes. Never one
// too many: that turns the next option word into a key of another slot,
// and slotd answers CROSSSLOT there even in standalone mode (it splits only
// DEL/EXISTS/MGET-like commands across slots, see netio/split.go) where
// Redis runs the command — a documented design limit, not a bug to find
// again on every seed. numkeysOrMore allows it for the commands that
// report their argument errors before touching keys (Spec.ArgError).
func (g *gen) numkeysOrMore(k int) string {
	if g.p(0.02) {
		return itoa(k + 1)
	}
	return g.numkeys(k)
}

func (g *gen) numkeys(k int) string {
	if g.p(0.03) {
		if k > 1 && g.p(0.3) {
			return itoa(k - 1)
		}
		return g.pick("0", "-1", "abc", "1000")
	}
	return itoa(k)
}

func cat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// opts returns the chosen optional argument groups in random order; each
// group is kept with probability prob.
func (g *gen) opts(prob float64, groups ...[]string) []string {
	var chosen [][]string
	for _, gr := range groups {
		if gr != nil && g.p(prob) {
			chosen = append(chosen, gr)
		}
	}
	g.r.Shuffle(len(chosen), func(i, j int) { chosen[i], chosen[j] = chosen[j], chosen[i] })
	return cat(chosen...)
}

func allOps() []op {
	return cat2(stringOps(), keyOps(), listOps(), hashOps(), setOps(), zsetOps(), bitmapOps(), hllOps(),
		streamOps(), txOps(), scriptOps(), dbOps())
}

func cat2(parts ...[]op) []op {
	var out []op
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
