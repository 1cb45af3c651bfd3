package difftest

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/slotd/slotd/actors/engine/enginetest"
)

// Runner replays command sequences on the server under test (A, slotd) and
// on the reference (B, redis-server) and compares every reply, then the
// whole dataset.
type Runner struct {
	A, B string // addresses
	// Engine, when set, stands in for A: every Run replays on a new
	// in-process engine it returns (actors/engine/enginetest), through the
	// engine's clients instead of a socket.
	Engine func() *enginetest.Engine
	// Wall moves the engine's virtual clock to the wall clock before each
	// pipeline, so its TTLs age as the reference's do. Without it the
	// engine's time moves only to blocked commands' timeouts.
	Wall bool
	// RecordA, when set, is given every reply of A, exact bytes, in order
	// (those of the runner's own reads included).
	RecordA func(raw string)

	Proto     int  // 2 or 3
	Scripting bool // SCRIPT FLUSH before each run (the script cache survives FLUSHALL)
	Chunk     int  // commands per pipelined write; 0 means 200

	// Stats counts, per command name, how often it ran and how often the
	// reference answered with an error (coverage of the generator).
	Stats map[string]*[2]int
	// Known counts how often each known difference (known.go) was accepted.
	Known map[string]int
}

// Mismatch is the first difference found in a run.
type Mismatch struct {
	Index  int // position of the command in the sequence; len(seq) for the final dataset check
	Cmd    Cmd // the command, or the read-back command of the dataset check
	A, B   string
	Reason string
}

// signature identifies a mismatch for minimisation: a shorter sequence
// must fail on the same command (or the same dataset read), not on any.
func (m *Mismatch) signature(n int) string {
	if m.Index >= n {
		return "dataset:" + m.Cmd.Name()
	}
	return "reply:" + m.Cmd.Name()
}

func (m *Mismatch) String() string {
	return fmt.Sprintf("%s: %s\n  slotd: %s\n  redis: %s", quoteCmd(m.Cmd), m.Reason, m.A, m.B)
}

// ErrUnsupported is returned for a sequence the runner cannot compare: an
// SPOP inside MULTI followed by more commands of the same transaction. The
// generator never emits one; minimisation can (by dropping an EXEC), and
// treats it as "does not fail".
var ErrUnsupported = errors.New("sequence not comparable: SPOP inside MULTI before other queued commands")

// scan commands whose cursor is at this argument.
var scanCursorArg = map[string]int{"SCAN": 1, "SSCAN": 2, "HSCAN": 2, "ZSCAN": 2}

// pair runs fa and fb at the same time: both servers see the same pipeline
// at about the same moment, which keeps TTL skew small.
func pair(fa, fb func() error) (errA, errB error) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); errA = fa() }()
	errB = fb()
	wg.Wait()
	return
}

// run is the state of one replay.
type run struct {
	r      *Runner
	ca, cb server
	// Transaction state as the reference reports it.
	inMulti bool
	queued  []Cmd
	// Predicted transaction state of the next command to put in a chunk:
	// probes must not be queued and SPOPs in a transaction need their EXEC
	// to end the chunk. MULTI/EXEC/DISCARD change it only when well formed,
	// exactly as in Redis.
	predMulti bool
	predQueue []Cmd
	predWatch bool // some key may be WATCHed
}

// fix brings the two datasets back in line after a command whose effect
// Redis leaves unspecified: SPOP's removed members are re-added, on each
// side its own; keys holding an unspecified result are deleted on both.
type fix struct {
	key    string
	ma, mb []string
	del    []string
}

// connect opens a connection to each side; A's is a new client of the
// run's engine in-process.
func (r *Runner) connect(eng *enginetest.Engine) (server, server, error) {
	var ca server
	if eng != nil {
		ca = &engineConn{e: eng, c: eng.Client(r.Proto), wall: r.Wall, record: r.RecordA}
	} else {
		c, err := dial(r.A, r.Proto)
		if err != nil {
			return nil, nil, fmt.Errorf("slotd: %w", err)
		}
		ca = c
	}
	cb, err := dial(r.B, r.Proto)
	if err != nil {
		ca.close()
		return nil, nil, fmt.Errorf("redis: %w", err)
	}
	return ca, cb, nil
}

// Run replays seq from an empty database and returns the first mismatch
// (nil when none). An error means a server stopped answering.
func (r *Runner) Run(seq []Cmd) (*Mismatch, error) {
	if r.Chunk == 0 {
		r.Chunk = 200
	}
	if r.Stats == nil {
		r.Stats = map[string]*[2]int{}
	}
	if r.Known == nil {
		r.Known = map[string]int{}
	}
	var eng *enginetest.Engine
	if r.Engine != nil {
		eng = r.Engine()
	}
	ca, cb, err := r.connect(eng)
	if err != nil {
		return nil, err
	}
	defer ca.close()
	defer cb.close()
	reset := []Cmd{{"FLUSHALL"}}
	if r.Scripting {
		reset = append(reset, Cmd{"SCRIPT", "FLUSH"})
	}
	sides := []server{ca, cb}
	if eng != nil {
		sides = sides[1:] // a new engine is empty, its script cache too
	}
	for _, c := range sides {
		rs, err := c.do(reset)
		if err != nil {
			return nil, err
		}
		for _, x := range rs {
			if x.Raw != "+OK\r\n" {
				return nil, fmt.Errorf("reset: %s", x)
			}
		}
	}
	st := &run{r: r, ca: ca, cb: cb}
	for i := 0; i < len(seq); {
		c := seq[i]
		if pos, ok := scanCursorArg[c.Name()]; ok && !st.predMulti && len(c) > pos && c[pos] == "0" {
			if m, err := st.scan(i, c, pos); m != nil || err != nil {
				return m, err
			}
			i++
			continue
		}
		n, m, err := st.chunk(seq, i)
		if m != nil || err != nil {
			return m, err
		}
		i += n
	}
	return r.dataset(eng, len(seq))
}

// isBare reports a command of exactly one argument named name.
func isBare(c Cmd, name string) bool { return len(c) == 1 && strings.EqualFold(c[0], name) }

// predict advances the predicted transaction state past c.
func (st *run) predict(c Cmd) {
	switch {
	case isBare(c, "MULTI"):
		if !st.predMulti {
			st.predMulti, st.predQueue = true, nil
		}
	case isBare(c, "EXEC"), isBare(c, "DISCARD"):
		if st.predMulti { // outside MULTI they fail and keep the WATCHes
			st.predWatch = false
		}
		st.predMulti, st.predQueue = false, nil
	case st.predMulti:
		st.predQueue = append(st.predQueue, c)
	case c.Name() == "WATCH" && len(c) > 1:
		st.predWatch = true
	case isBare(c, "UNWATCH"):
		st.predWatch = false
	}
}

func hasSpop(cs []Cmd) bool {
	return slices.ContainsFunc(cs, func(c Cmd) bool { return c.Name() == "SPOP" })
}

// chunk sends up to Chunk commands starting at seq[i] as one pipeline to
// each server, compares the replies and returns how many it consumed.
func (st *run) chunk(seq []Cmd, i int) (int, *Mismatch, error) {
	type item struct {
		cmd     Cmd
		idx     int  // position in seq
		hidden  bool // added by the runner (see touchKeys), not in seq
		ib      int  // index of its reply in B's pipeline
		nprobes int  // probes sent to B just before it
	}
	var items []item
	var wa, wb []Cmd
	used := 0
	for j := i; j < len(seq) && used < st.r.Chunk; j++ {
		c := seq[j]
		name := c.Name()
		if pos, ok := scanCursorArg[name]; ok && !st.predMulti && len(c) > pos && c[pos] == "0" {
			break // runs alone (Run)
		}
		rl := rules[name]
		watchedExec := isBare(c, "EXEC") && st.predMulti && st.predWatch
		if watchedExec && len(items) > 0 {
			break // known.go, watch-check-order: EXEC starts its own pipeline
		}
		endsChunk := (name == "SPOP" && !st.predMulti) || (isBare(c, "EXEC") && st.predMulti && hasSpop(st.predQueue)) ||
			(rl.endsChunk != nil && !st.predMulti && rl.endsChunk(c)) ||
			watchedExec || (!st.predMulti && knownEndsChunk(c)) ||
			(isBare(c, "EXEC") && st.predMulti && slices.ContainsFunc(st.predQueue, knownEndsChunk))
		it := item{cmd: c, idx: j}
		if rl.probes != nil && !st.predMulti {
			ps := rl.probes(c)
			wb = append(wb, ps...)
			it.nprobes = len(ps)
		}
		it.ib = len(wb)
		wa = append(wa, c)
		wb = append(wb, c)
		var touch []string
		switch {
		case !st.predMulti:
			touch = touchKeys(c)
		case isBare(c, "EXEC"):
			for _, q := range st.predQueue {
				touch = append(touch, touchKeys(q)...)
			}
		}
		st.predict(c)
		items = append(items, it)
		used++
		for _, k := range touch {
			h := Cmd{"EXISTS", k}
			items = append(items, item{cmd: h, idx: j, hidden: true, ib: len(wb)})
			wa = append(wa, h)
			wb = append(wb, h)
		}
		if endsChunk {
			break
		}
	}
	var ra, rb []*Reply
	errA, errB := pair(func() (err error) { ra, err = st.ca.do(wa); return }, func() (err error) { rb, err = st.cb.do(wb); return })
	if errA != nil {
		return 0, nil, fmt.Errorf("slotd: %w", errA)
	}
	if errB != nil {
		return 0, nil, fmt.Errorf("redis: %w", errB)
	}
	var fixes []fix
	onlyHiddenAfter := func(k int) bool {
		return !slices.ContainsFunc(items[k+1:], func(it item) bool { return !it.hidden })
	}
	for k, it := range items {
		a, b := ra[k], rb[it.ib]
		st.r.count(it.cmd, b)
		var probes []*Reply
		if it.nprobes > 0 {
			probes = rb[it.ib-it.nprobes : it.ib]
			for _, p := range probes {
				if p.Raw == "+QUEUED\r\n" {
					return 0, nil, fmt.Errorf("internal: a probe was queued in a transaction at command %d", it.idx)
				}
			}
		}
		var why string
		var resync []string
		switch {
		case st.inMulti && isBare(it.cmd, "EXEC"):
			why, resync = st.r.compareExec(st.queued, a, b)
			if why == "" && a.IsAgg() && b.IsAgg() {
				for q, qc := range st.queued {
					if qc.Name() != "SPOP" {
						continue
					}
					if q != len(st.queued)-1 {
						// Later commands of the transaction saw a different
						// random state on each side: nothing to compare.
						return 0, nil, ErrUnsupported
					}
					fixes = append(fixes, spopFixFor(qc, a.Elems[q], b.Elems[q]))
				}
			}
		default:
			why, resync = compare(it.cmd, a, b, probes)
			if why != "" {
				if kd := knownReply(it.cmd, a, b); kd != nil {
					st.r.Known[kd.name]++
					why = ""
					if kd.resync != nil {
						resync = kd.resync(it.cmd) // the command ended its chunk (knownEndsChunk)
					}
				}
			}
			if why == "" && it.cmd.Name() == "SPOP" && !st.inMulti {
				fixes = append(fixes, spopFixFor(it.cmd, a, b))
			}
		}
		if why != "" {
			m := &Mismatch{Index: it.idx, Cmd: it.cmd, A: a.String(), B: b.String(), Reason: why}
			if it.hidden {
				m.Cmd = seq[it.idx]
				m.Reason = "reading the key back after it with " + quoteCmd(it.cmd) + ": " + why
			}
			return 0, m, nil
		}
		if len(resync) > 0 {
			if !onlyHiddenAfter(k) {
				return 0, nil, fmt.Errorf("internal: %s asks for a resync but does not end its chunk", quoteCmd(it.cmd))
			}
			fixes = append(fixes, fix{del: resync})
		}
		st.track(it.cmd, b)
	}
	if err := st.fix(fixes); err != nil {
		return 0, nil, err
	}
	return used, nil, nil
}

// touchKeys returns the key a command may leave behind already expired:
// Redis 7.0's SET with an EXAT/PXAT in the past stores the key, which then
// lives until an access or the active expiry cycle removes it — at a
// different moment on each server, which DBSIZE (and WATCH) would see. The
// runner reads such a key back at once on both servers, so lazy expiry
// removes it there and then.
func touchKeys(c Cmd) []string {
	if c.Name() != "SET" || len(c) < 4 {
		return nil
	}
	for _, a := range c[3:] {
		if strings.EqualFold(a, "EXAT") || strings.EqualFold(a, "PXAT") {
			return []string{c[1]}
		}
	}
	return nil
}

// track follows the reference's transaction and WATCH state.
func (st *run) track(c Cmd, b *Reply) {
	switch {
	case isBare(c, "MULTI") && b.Raw == "+OK\r\n":
		st.inMulti, st.queued = true, nil
	case st.inMulti && (isBare(c, "EXEC") || isBare(c, "DISCARD")):
		st.inMulti, st.queued = false, nil
	case st.inMulti && b.Raw == "+QUEUED\r\n":
		st.queued = append(st.queued, c)
	}
}

// compareExec compares EXEC replies element by element, each under the
// rule of the command queued there (without probes).
func (r *Runner) compareExec(queued []Cmd, a, b *Reply) (string, []string) {
	if a.Raw == b.Raw {
		return "", nil
	}
	if !a.IsAgg() || !b.IsAgg() || a.Kind != b.Kind || len(a.Elems) != len(b.Elems) || len(b.Elems) != len(queued) {
		return "replies differ", nil
	}
	var resync []string
	for k, qc := range queued {
		if why, _ := compare(qc, a.Elems[k], b.Elems[k], nil); why != "" {
			if kd := knownReply(qc, a.Elems[k], b.Elems[k]); kd != nil && (kd.resync == nil || k == len(queued)-1) {
				r.Known[kd.name]++
				if kd.resync != nil {
					resync = kd.resync(qc)
				}
				continue
			}
			return fmt.Sprintf("reply %d of the transaction (%s): %s", k+1, quoteCmd(qc), why), nil
		}
	}
	return "", resync
}

func popped(r *Reply) []string {
	switch {
	case r.IsErr() || r.Nil:
		return nil
	case r.IsAgg():
		out := make([]string, len(r.Elems))
		for i, e := range r.Elems {
			out[i] = e.Str
		}
		return out
	case r.Kind == '$':
		return []string{r.Str}
	}
	return nil
}

func spopFixFor(c Cmd, a, b *Reply) fix {
	if len(c) < 2 { // arity error: nothing popped
		return fix{}
	}
	return fix{key: c[1], ma: popped(a), mb: popped(b)}
}

func (st *run) fix(fixes []fix) error {
	var wa, wb []Cmd
	for _, f := range fixes {
		if len(f.del) > 0 {
			wa = append(wa, append(Cmd{"DEL"}, f.del...))
			wb = append(wb, append(Cmd{"DEL"}, f.del...))
		}
		if len(f.ma) > 0 {
			wa = append(wa, append(Cmd{"SADD", f.key}, f.ma...))
		}
		if len(f.mb) > 0 {
			wb = append(wb, append(Cmd{"SADD", f.key}, f.mb...))
		}
	}
	if len(wa)+len(wb) == 0 {
		return nil
	}
	for _, s := range []struct {
		c server
		w []Cmd
	}{{st.ca, wa}, {st.cb, wb}} {
		rs, err := s.c.do(s.w)
		if err != nil {
			return err
		}
		for _, x := range rs {
			if x.Kind != ':' {
				return fmt.Errorf("re-adding popped members: %s", x)
			}
		}
	}
	return nil
}

func (r *Runner) count(c Cmd, b *Reply) {
	n := c.Name()
	s := r.Stats[n]
	if s == nil {
		s = &[2]int{}
		r.Stats[n] = s
	}
	s[0]++
	if b.IsErr() {
		s[1]++
	}
}

// scan runs a SCAN-family command from cursor 0 to the end on both servers.
// Over an intset/listpack value Redis answers in one page in the value's
// order, which must match exactly; otherwise pages and cursors are
// implementation details and the union of what was returned must match.
func (st *run) scan(idx int, c Cmd, pos int) (*Mismatch, error) {
	name := c.Name()
	enc := ""
	if name != "SCAN" {
		rs, err := st.cb.do([]Cmd{{"OBJECT", "ENCODING", c[1]}})
		if err != nil {
			return nil, err
		}
		if rs[0].Kind == '$' {
			enc = rs[0].Str
		}
	}
	pairs := name == "HSCAN" || name == "ZSCAN"
	type result struct {
		first *Reply
		items map[string]bool
		bad   string
	}
	iterate := func(cn server) (res result, err error) {
		res.items = map[string]bool{}
		cur := slices.Clone(c)
		for n := 0; ; n++ {
			rs, err := cn.do([]Cmd{cur})
			if err != nil {
				return res, err
			}
			page := rs[0]
			if res.first == nil {
				res.first = page
			}
			if page.IsErr() {
				return res, nil
			}
			if res.bad = scanPageShape(page); res.bad != "" {
				res.bad += ": " + page.String()
				return res, nil
			}
			for _, it := range items(page.Elems[1], pairs) {
				res.items[it] = true
			}
			if page.Elems[0].Str == "0" {
				return res, nil
			}
			if n > 100000 {
				res.bad = "scan did not finish"
				return res, nil
			}
			cur[pos] = page.Elems[0].Str
		}
	}
	var resA, resB result
	errA, errB := pair(func() (err error) { resA, err = iterate(st.ca); return },
		func() (err error) { resB, err = iterate(st.cb); return })
	if errA != nil {
		return nil, fmt.Errorf("slotd: %w", errA)
	}
	if errB != nil {
		return nil, fmt.Errorf("redis: %w", errB)
	}
	st.r.count(c, resB.first)
	mm := func(why string) *Mismatch {
		return &Mismatch{Index: idx, Cmd: c, A: resA.first.String(), B: resB.first.String(), Reason: why}
	}
	switch {
	case resA.first.IsErr() || resB.first.IsErr():
		if resA.first.Raw != resB.first.Raw {
			return mm("replies differ"), nil
		}
	case resA.bad != "":
		return mm(resA.bad), nil
	case resB.bad != "":
		return nil, fmt.Errorf("redis: %s", resB.bad)
	case orderedEncodings[enc]:
		if resA.first.Raw != resB.first.Raw {
			return mm("replies differ (the reference's " + enc + " encoding is answered in one page, in order)"), nil
		}
	default:
		if !maps2Equal(resA.items, resB.items) {
			m := mm("a full iteration returned different elements")
			m.A, m.B = setString(resA.items), setString(resB.items)
			return m, nil
		}
	}
	return nil, nil
}

func maps2Equal(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func setString(m map[string]bool) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, strconv.Quote(k))
	}
	slices.Sort(ks)
	return "{" + strings.Join(ks, " ") + "}"
}

// dataset compares the whole dataset after a run, each database the
// generator uses in turn, reading it back on fresh connections: the key
// names, then per key its TYPE, whether it has a TTL (and about the same
// one), and its contents.
func (r *Runner) dataset(eng *enginetest.Engine, n int) (*Mismatch, error) {
	for db := 0; db < dbCount; db++ {
		if m, err := r.datasetDB(eng, n, db); m != nil || err != nil {
			if m != nil && db > 0 {
				m.Reason += " (in DB " + strconv.Itoa(db) + ")"
			}
			return m, err
		}
	}
	return nil, nil
}

func (r *Runner) datasetDB(eng *enginetest.Engine, n, db int) (*Mismatch, error) {
	ca, cb, err := r.connect(eng)
	if err != nil {
		return nil, err
	}
	defer ca.close()
	defer cb.close()
	both := func(cmds []Cmd) (ra, rb []*Reply, err error) {
		errA, errB := pair(func() (err error) { ra, err = ca.do(cmds); return }, func() (err error) { rb, err = cb.do(cmds); return })
		if errA != nil {
			return nil, nil, fmt.Errorf("slotd: %w", errA)
		}
		if errB != nil {
			return nil, nil, fmt.Errorf("redis: %w", errB)
		}
		return ra, rb, nil
	}
	sel := Cmd{"SELECT", strconv.Itoa(db)}
	if ra, rb, err := both([]Cmd{sel}); err != nil {
		return nil, err
	} else if ra[0].Raw != "+OK\r\n" || rb[0].Raw != "+OK\r\n" {
		return &Mismatch{Index: n, Cmd: sel, A: ra[0].String(), B: rb[0].String(), Reason: "SELECT failed"}, nil
	}
	keysCmd := Cmd{"KEYS", "*"}
	ra, rb, err := both([]Cmd{keysCmd})
	if err != nil {
		return nil, err
	}
	ka, kb := popped(ra[0]), popped(rb[0])
	slices.Sort(ka)
	slices.Sort(kb)
	if !slices.Equal(ka, kb) {
		return &Mismatch{Index: n, Cmd: keysCmd, A: fmt.Sprintf("%q", ka), B: fmt.Sprintf("%q", kb),
			Reason: "the datasets hold different keys"}, nil
	}
	var meta []Cmd
	for _, k := range kb {
		meta = append(meta, Cmd{"TYPE", k}, Cmd{"PTTL", k})
	}
	ra, rb, err = both(meta)
	if err != nil {
		return nil, err
	}
	var reads []Cmd
	for i, k := range kb {
		ta, tb := ra[2*i], rb[2*i]
		if ta.Raw != tb.Raw {
			return &Mismatch{Index: n, Cmd: meta[2*i], A: ta.String(), B: tb.String(), Reason: "key types differ"}, nil
		}
		pa, pb := ra[2*i+1], rb[2*i+1]
		if why, _ := compare(meta[2*i+1], pa, pb, nil); why != "" {
			return &Mismatch{Index: n, Cmd: meta[2*i+1], A: pa.String(), B: pb.String(), Reason: "TTLs differ: " + why}, nil
		}
		switch tb.Str {
		case "string":
			reads = append(reads, Cmd{"GET", k})
		case "list":
			reads = append(reads, Cmd{"LRANGE", k, "0", "-1"})
		case "set":
			reads = append(reads, Cmd{"SMEMBERS", k})
		case "hash":
			reads = append(reads, Cmd{"HGETALL", k})
		case "zset":
			reads = append(reads, Cmd{"ZRANGE", k, "0", "-1", "WITHSCORES"})
		case "stream":
			reads = append(reads, Cmd{"XRANGE", k, "-", "+"}, Cmd{"XINFO", "GROUPS", k})
		}
	}
	ra, rb, err = both(reads)
	if err != nil {
		return nil, err
	}
	for i, c := range reads {
		// nil encodings: member order is checked by the commands' own
		// comparisons during the run, here only contents count.
		if why, _ := compare(c, ra[i], rb[i], nil); why != "" {
			return &Mismatch{Index: n, Cmd: c, A: ra[i].String(), B: rb[i].String(), Reason: "contents differ: " + why}, nil
		}
	}
	return nil, nil
}
