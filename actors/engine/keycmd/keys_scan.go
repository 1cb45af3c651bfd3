package keycmd

// Commands over the whole key space: SCAN (routed by its cursor), and the
// fanout commands KEYS, RANDOMKEY, DBSIZE, FLUSHDB and FLUSHALL, which run
// once in every shard actor and are merged on the event loop.
//
// SCAN cursor layout: cursor = inner<<14 | slot, where inner is the cursor
// of that slot's own keyspace scan. SCAN walks the slots in a fixed order,
// actor by actor: the slots of shard actor 0 (0, N, 2N, ...), then those of
// actor 1 (1, N+1, ...), and so on; so a cursor is a position in one total
// order: every slot before the cursor's slot is finished and the cursor's
// slot is finished up to inner. Grouping by actor means a scan changes actor
// at most N-1 times; walking slots in plain numeric order would hop between
// actors at almost every slot and cost one round trip per non-empty slot.
//
// Why no key is missed: a slot that holds no keys when the walk passes it
// can only hold keys added during the scan, which SCAN need not return; a
// key present for the whole scan keeps its slot's count above zero, so the
// walk stops at that slot, and the keyspace's own cursor guarantee covers
// resizes. Dispatch routes a cursor to the actor of its slot; a call never
// reads another actor's keyspaces, it returns a cursor pointing there.

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/resp"
	"github.com/slotd/slotd/slots"
)

func registerKeysScan() {
	command.Register(
		engine.KeySpec(engine.Handle(&command.Spec{Name: "scan", Arity: -2, Flags: []string{"readonly"},
			Categories: []string{"keyspace", "read", "slow"},
			Tips:       []string{"nondeterministic_output", "request_policy:special"}, Since: "2.8.0",
			Summary: "Incrementally iterate the keys space", Route: scanRoute, Isolated: true}, cmdScan)),
		engine.Handle(&command.Spec{Name: "keys", Arity: 2, Flags: []string{"readonly"},
			Categories: []string{"keyspace", "read", "slow", "dangerous"},
			Tips:       []string{"request_policy:all_shards", "nondeterministic_output_order"},
			Group:      "generic", Since: "1.0.0", Summary: "Find all keys matching the given pattern",
			Exec: command.Fanout, Merge: engine.Merge(mergeKeys)}, cmdKeysPart),
		engine.Handle(&command.Spec{Name: "randomkey", Arity: 1, Flags: []string{"readonly"},
			Categories: []string{"keyspace", "read", "slow"},
			Tips:       []string{"request_policy:all_shards", "nondeterministic_output"},
			Group:      "generic", Since: "1.0.0", Summary: "Return a random key from the keyspace",
			Exec: command.Fanout, Merge: engine.Merge(mergeRandomKey)}, cmdRandomKeyPart),
		engine.Handle(&command.Spec{Name: "dbsize", Arity: 1, Flags: []string{"readonly", "fast"},
			Categories: []string{"keyspace", "read", "fast"},
			Tips:       []string{"request_policy:all_shards", "response_policy:agg_sum"},
			Group:      "server", Since: "1.0.0", Summary: "Return the number of keys in the selected database",
			Exec: command.Fanout, Merge: engine.Merge(mergeSum)}, cmdDBSizePart),
		engine.Handle(&command.Spec{Name: "flushdb", Arity: -1, Flags: []string{"write"},
			Categories: []string{"keyspace", "write", "slow", "dangerous"},
			Tips:       []string{"request_policy:all_shards", "response_policy:all_succeeded"},
			Group:      "server", Since: "1.0.0", Summary: "Remove all keys from the current database",
			Exec: command.Fanout, Merge: engine.Merge(mergeFlush)}, cmdFlushPart),
		engine.Handle(&command.Spec{Name: "flushall", Arity: -1, Flags: []string{"write"},
			Categories: []string{"keyspace", "write", "slow", "dangerous"},
			Tips:       []string{"request_policy:all_shards", "response_policy:all_succeeded"},
			Group:      "server", Since: "1.0.0", Summary: "Remove all keys from all databases",
			Exec: command.Fanout, Merge: engine.Merge(mergeFlush)}, cmdFlushPart),
	)
}

const (
	scanSlotBits = 14
	scanSlotMask = 1<<scanSlotBits - 1
)

// scanOpts are SCAN's parsed arguments.
type scanOpts struct {
	cursor  uint64
	count   int64
	pattern []byte
	typ     []byte
	usePat  bool // MATCH given (and not "*")
	useType bool // TYPE given
	patSlot int  // the only slot MATCH can hit, or -1
}

// parseScan parses SCAN cursor [MATCH p] [COUNT n] [TYPE t]; errors come in
// Redis's order (the cursor first). Later options override earlier ones.
func parseScan(args [][]byte) (o scanOpts, errMsg string) {
	cur, ok := engine.ParseCursor(args[1])
	if !ok {
		return o, "ERR invalid cursor"
	}
	o = scanOpts{cursor: cur, count: 10, patSlot: -1}
	for i := 2; i < len(args); i += 2 {
		a := args[i]
		if i+1 >= len(args) {
			return o, engine.ErrSyntax
		}
		v := args[i+1]
		switch {
		case engine.EqFold(a, "count"):
			n, ok := engine.ParseInt(v)
			if !ok {
				return o, engine.ErrNotInt
			}
			if n < 1 {
				return o, engine.ErrSyntax
			}
			o.count = n
		case engine.EqFold(a, "match"):
			// "*" is the same as no pattern (and must match "" too).
			o.pattern, o.usePat = v, !(len(v) == 1 && v[0] == '*')
		case engine.EqFold(a, "type"):
			o.typ, o.useType = v, true
		default:
			return o, engine.ErrSyntax
		}
	}
	if o.usePat {
		if s, ok := slots.PatternSlot(o.pattern); ok {
			o.patSlot = s
		}
	}
	return o, ""
}

// scanRoute sends SCAN to the actor of the cursor's slot (or of the only
// slot its MATCH pattern can hit). Bad arguments go to slot 0, whose actor
// replies the error: inside MULTI, Redis queues such a SCAN and fails it
// in EXEC's reply.
func scanRoute(args [][]byte) (int, string) {
	o, msg := parseScan(args)
	if msg != "" {
		return 0, ""
	}
	if o.patSlot >= 0 {
		return o.patSlot, ""
	}
	return int(o.cursor & scanSlotMask), ""
}

// cmdScan runs in the actor owning c.Slot. Like Redis it stops once COUNT
// entries were visited (before filtering) or after 10*COUNT bucket steps.
func cmdScan(c *engine.Call) {
	o, msg := parseScan(c.Args)
	if msg != "" {
		c.W.Error(msg)
		return
	}
	s := c.S
	slot := c.Slot
	inner := o.cursor >> scanSlotBits
	budget := int64(math.MaxInt64)
	if o.count <= math.MaxInt64/10 {
		budget = o.count * 10
	}
	var keys []string
	var visited, steps int64
	var ks *keyspace.Keyspace
	fn := func(e *keyspace.Entry) {
		visited++
		if e.Expire != 0 && e.Expire <= c.Now {
			s.ReapExpired(slot, ks, e)
			return
		}
		if o.usePat && !slots.MatchKey(o.pattern, e.Key(), false) {
			return
		}
		if o.useType && !engine.EqFold(o.typ, e.Kind.String()) {
			return
		}
		keys = append(keys, e.Key())
	}
	next := uint64(0)
	for {
		if ks = s.Keyspace(slot, false); ks != nil && ks.Len() > 0 {
			for {
				inner = ks.Scan(inner, fn)
				steps++
				if inner == 0 || visited >= o.count || steps >= budget {
					break
				}
			}
			if inner != 0 {
				next = inner<<scanSlotBits | uint64(slot)
				break
			}
		}
		if o.patSlot >= 0 {
			break
		}
		if ns := s.NextOwnSlot(slot); ns >= 0 {
			if visited >= o.count || steps >= budget {
				next = uint64(ns) // inner 0: the start of that slot
				break
			}
			slot, inner = ns, 0
			continue
		}
		if ns := s.Group().FirstSlotAfterShard(s.ID); ns >= 0 {
			next = uint64(ns)
		}
		break
	}
	var tmp [20]byte
	c.W.Array(2)
	c.W.Bulk(strconv.AppendUint(tmp[:0], next, 10))
	c.W.Array(len(keys))
	for _, k := range keys {
		c.W.BulkString(k)
	}
}

// cmdKeysPart collects this shard's keys matching KEYS's pattern. Expired
// keys are skipped, not deleted (as Redis's KEYS does). A pattern that can
// only match keys of one slot looks at that slot only.
func cmdKeysPart(c *engine.Call) {
	pat := c.Args[1]
	all := len(pat) == 1 && pat[0] == '*'
	var out []string
	visit := func(ks *keyspace.Keyspace) {
		ks.ForEach(func(e *keyspace.Entry) bool {
			if !engine.Expired(e, c.Now) && (all || slots.MatchKey(pat, e.Key(), false)) {
				out = append(out, e.Key())
			}
			return true
		})
	}
	if slot, ok := slots.PatternSlot(pat); ok {
		ks := c.S.Keyspace(slot, false)
		switch {
		case c.S.Group().Of(slot) != c.S.ID || ks == nil:
		case !bytes.ContainsAny(pat, "*?[\\"):
			// A literal matches just the key equal to it.
			if e := ks.Get(pat); e != nil && !engine.Expired(e, c.Now) {
				out = append(out, e.Key())
			}
		default:
			visit(ks)
		}
	} else {
		c.S.ForEachSlot(func(_ int, ks *keyspace.Keyspace) { visit(ks) })
	}
	c.Result(out)
}

func mergeKeys(w *resp.Writer, _ [][]byte, parts []any) {
	n := 0
	for _, p := range parts {
		k, _ := p.([]string)
		n += len(k)
	}
	w.Array(n)
	for _, p := range parts {
		k, _ := p.([]string)
		for _, key := range k {
			w.BulkString(key)
		}
	}
}

// randomPart is one shard's RANDOMKEY candidate with the number of keys it
// was drawn from, so the merge can weight shards by size.
type randomPart struct {
	key    string
	weight int64
}

func cmdRandomKeyPart(c *engine.Call) {
	if key, n := c.S.RandomKey(c.Now); n > 0 {
		c.Result(randomPart{key: key, weight: n})
	}
}

func mergeRandomKey(w *resp.Writer, _ [][]byte, parts []any) {
	var total int64
	for _, p := range parts {
		if rp, ok := p.(randomPart); ok {
			total += rp.weight
		}
	}
	if total == 0 {
		w.Null()
		return
	}
	r := rand.Int64N(total)
	for _, p := range parts {
		rp, ok := p.(randomPart)
		if !ok {
			continue
		}
		if r < rp.weight {
			w.BulkString(rp.key)
			return
		}
		r -= rp.weight
	}
}

// cmdDBSizePart counts this shard's keys (expired ones not yet removed
// included, as Redis's DBSIZE does).
func cmdDBSizePart(c *engine.Call) {
	n := int64(0)
	c.S.ForEachSlot(func(_ int, ks *keyspace.Keyspace) { n += int64(ks.Len()) })
	c.Result(n)
}

func mergeSum(w *resp.Writer, _ [][]byte, parts []any) {
	n := int64(0)
	for _, p := range parts {
		v, _ := p.(int64)
		n += v
	}
	w.Int(n)
}

// flushArgsErr validates FLUSHDB/FLUSHALL [ASYNC|SYNC].
func flushArgsErr(args [][]byte) string {
	if len(args) > 2 || len(args) == 2 && !engine.EqFold(args[1], "async") && !engine.EqFold(args[1], "sync") {
		return engine.ErrSyntax
	}
	return ""
}

// cmdFlushPart drops every slot of this shard. Dropping is O(1) per slot,
// so ASYNC and SYNC behave the same.
func cmdFlushPart(c *engine.Call) {
	if flushArgsErr(c.Args) != "" {
		return
	}
	c.S.TrackFlush()
	flush := func() {
		var flushed []string // replicas drop the same slots (FLUSHSLOTS)
		c.S.ForEachSlot(func(slot int, _ *keyspace.Keyspace) {
			if c.S.DropSlot(slot) > 0 && c.S.Streaming() {
				flushed = append(flushed, strconv.Itoa(slot))
			}
		})
		if len(flushed) > 0 {
			c.PropagateStrings(append([]string{engine.FlushSlots}, flushed...)...)
		}
		c.S.SignalAllBlocked()
	}
	if !strings.EqualFold(string(c.Args[0]), "flushall") {
		flush() // FLUSHDB: the client's database
		return
	}
	c.S.ForEachDB(func(int) { flush() })
	if c.S.ID == 0 {
		c.Result(c.S.Group().OnFlushAll)
	}
}

func mergeFlush(w *resp.Writer, args [][]byte, parts []any) {
	if msg := flushArgsErr(args); msg != "" {
		w.Error(msg)
		return
	}
	for _, p := range parts {
		if fn, ok := p.(func()); ok && fn != nil {
			fn() // FLUSHALL: the node's follow-up (an empty snapshot)
		}
	}
	w.OK()
}
