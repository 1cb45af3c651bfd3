package sortcmd

import (
	"bytes"
	"math"
	"sort"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/actors/engine/types/cnum"
	"github.com/slotd/slotd/actors/engine/types/set"
	"github.com/slotd/slotd/actors/engine/types/zset"
	"github.com/slotd/slotd/netio/command"
)

// SORT key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC|DESC]
// [ALPHA] [STORE destination], and SORT_RO (no STORE), as Redis 7.0:
//
//   - A BY pattern without '*' (such as "nosort") means "don't sort": lists
//     and sorted sets keep their own order (reversed by DESC) and LIMIT
//     takes their range directly; a set is still sorted ALPHA when the
//     result is stored or the command runs from a script, so replicas and
//     AOF see one order.
//   - The first '*' of a pattern is replaced by the element; "key->field"
//     reads a hash field; "#" is the element itself; a pattern without '*'
//     reads nothing (GET gives nil).
//   - Numbers are read with strtod on the C string; a value that does not
//     convert fails the command ("One or more scores can't be converted
//     into double"). Equal scores fall back to comparing the elements.
//   - ALPHA compares bytes (Redis's strcoll in the C locale).
//   - In cluster mode BY with a real pattern and every GET are refused, as
//     Redis 7.0 refuses them.
//
// Pattern keys and the destination may hash to any slot of the shard actor
// running the command (a standalone node's slots are spread over its
// actors, see shard-actors): a pattern naming a key of another actor fails
// the command with errNonLocal, and a STORE destination in another actor
// is refused by the routing (CROSSSLOT). With shard-actors 1 every key is
// reachable, as in redis-server.

const (
	errBYCluster  = "ERR BY option of SORT denied in Cluster mode."
	errGETCluster = "ERR GET option of SORT denied in Cluster mode."
	errConvert    = "ERR One or more scores can't be converted into double"
	// errNonLocal is slotd's own: a standalone node spreads its slots over
	// shard actors and a SORT reaches only its own actor's keys.
	errNonLocal = "ERR SORT BY/GET pattern reached a key served by another shard actor (use a hash tag, or shard-actors 1)"
)

func registerSort() {
	flags := []string{"write", "denyoom"}
	s := engine.Handle(&command.Spec{Name: "sort", Arity: -2, Flags: flags, First: 1, Last: 1, Step: 1,
		Group: "generic", Since: "1.0.0", Summary: "Sort the elements in a list, set or sorted set",
		Exec: command.Shard, Keys: sortKeys, ActorKeys: true,
		Categories: []string{"set", "sortedset", "list", "dangerous"}}, func(c *engine.Call) { cmdSort(c, false) })
	ro := engine.Handle(&command.Spec{Name: "sort_ro", Arity: -2, Flags: []string{"readonly"}, First: 1, Last: 1,
		Step: 1, Group: "generic", Since: "7.0.0",
		Summary: "Sort the elements in a list, set or sorted set. Read-only variant of SORT.",
		Exec:    command.Shard, Keys: func([][]byte) ([]int, error) { return []int{1}, nil },
		Categories: []string{"set", "sortedset", "list", "dangerous"}}, func(c *engine.Call) { cmdSort(c, true) })
	command.Register(s, ro)
}

// sortKeys finds SORT's keys as Redis's key extraction does: the sorted
// key, then the last STORE's argument, skipping the arguments of LIMIT,
// GET and BY.
func sortKeys(args [][]byte) ([]int, error) {
	keys := []int{1}
	store := 0
	for i := 2; i < len(args); i++ {
		a := engine.Cstr(args[i])
		switch {
		case engine.EqFold(a, "limit"):
			i += 2
		case engine.EqFold(a, "get"), engine.EqFold(a, "by"):
			i++
		case engine.EqFold(a, "store") && i+1 < len(args):
			store = i + 1
		}
	}
	if store > 0 {
		keys = append(keys, store)
	}
	return keys, nil
}

// options is a parsed SORT command line.
type options struct {
	desc, alpha, dontsort  bool
	limitStart, limitCount int64
	by                     []byte // nil: sort by the elements
	gets                   [][]byte
	store                  []byte
}

// parse reads the options after the key, replying the first error.
func parse(c *engine.Call, readOnly bool) (o options, ok bool) {
	o.limitCount = -1
	args := c.Args
	for j := 2; j < len(args); j++ {
		left := len(args) - j - 1
		a := engine.Cstr(args[j])
		switch {
		case engine.EqFold(a, "asc"):
			o.desc = false
		case engine.EqFold(a, "desc"):
			o.desc = true
		case engine.EqFold(a, "alpha"):
			o.alpha = true
		case engine.EqFold(a, "limit") && left >= 2:
			start, count, ok := c.IntArgs(args[j+1], args[j+2])
			if !ok {
				return o, false
			}
			o.limitStart, o.limitCount = start, count
			j += 2
		case !readOnly && engine.EqFold(a, "store") && left >= 1:
			o.store = args[j+1]
			j++
		case engine.EqFold(a, "by") && left >= 1:
			o.by = args[j+1]
			if bytes.IndexByte(engine.Cstr(o.by), '*') < 0 {
				o.dontsort = true
			} else if c.ClusterMode() {
				c.W.Error(errBYCluster)
				return o, false
			} else if !c.FullKeyAccess(args) {
				c.W.Error("ERR BY option of SORT denied due to insufficient ACL permissions.")
				return o, false
			}
			j++
		case engine.EqFold(a, "get") && left >= 1:
			if c.ClusterMode() {
				c.W.Error(errGETCluster)
				return o, false
			}
			if !c.FullKeyAccess(args) {
				c.W.Error("ERR GET option of SORT denied due to insufficient ACL permissions.")
				return o, false
			}
			o.gets = append(o.gets, args[j+1])
			j++
		default:
			c.W.Error(engine.ErrSyntax)
			return o, false
		}
	}
	return o, true
}

// item is one element to sort with its sort key.
type item struct {
	ele   string
	score float64
	cmp   *string // ALPHA BY: the pattern's value (nil: none)
}

func cmdSort(c *engine.Call, readOnly bool) {
	c.Unchanged() // only STORE's destination is modified (signalled below)
	o, ok := parse(c, readOnly)
	if !ok {
		return
	}
	e := c.Lookup(c.Args[1])
	if e != nil && e.Kind != keyspace.KindList && e.Kind != keyspace.KindSet && e.Kind != keyspace.KindZSet {
		c.W.Error(engine.ErrWrongType)
		return
	}
	if o.dontsort && e != nil && e.Kind == keyspace.KindSet && (o.store != nil || c.InScript()) {
		// A set has no order of its own: give replicas, the AOF and
		// scripts one.
		o.dontsort, o.alpha, o.by = false, true, nil
	}
	if e != nil && e.Kind == keyspace.KindZSet {
		e.Obj.(*zset.ZSet).Compact = false // Redis converts it to a skiplist
	}
	n := int64(0)
	if e != nil {
		n = int64(length(e))
	}
	// LIMIT, clamped as Redis does (an empty range is start > end).
	start := min(max(o.limitStart, 0), n)
	count := min(max(o.limitCount, -1), n)
	end := n - 1
	if count >= 0 {
		end = start + count - 1
	}
	if start >= n {
		start, end = n-1, n-2
	}
	end = min(end, n-1)

	var items []item
	if e != nil {
		items = load(e, o, &start, &end)
	}
	if !o.dontsort {
		if ok := score(c, o, items); !ok {
			return
		}
		sortItems(items, o)
	}
	var sel []item
	if end >= start {
		sel = items[start : end+1]
	}
	// Resolve every GET first: a key out of reach fails the whole command
	// before any of the reply is written.
	var out []*string
	if len(o.gets) > 0 {
		out = make([]*string, 0, len(sel)*len(o.gets))
		for i := range sel {
			for _, p := range o.gets {
				v, ok := lookupPattern(c, p, sel[i].ele)
				if !ok {
					c.W.Error(errNonLocal)
					return
				}
				out = append(out, v)
			}
		}
	} else {
		out = make([]*string, len(sel))
		for i := range sel {
			out[i] = &sel[i].ele
		}
	}
	if o.store == nil {
		c.W.Array(len(out))
		for _, v := range out {
			if v == nil {
				c.W.Null()
			} else {
				c.W.BulkString(*v)
			}
		}
		return
	}
	store(c, o.store, out)
}

func length(e *keyspace.Entry) int {
	switch e.Kind {
	case keyspace.KindList:
		return engine.ListOf(e).Len()
	case keyspace.KindSet:
		return e.Obj.(*set.Set).Len()
	default:
		return e.Obj.(*zset.ZSet).Len()
	}
}

// load builds the vector to sort. Unsorted lists and sorted sets load only
// the LIMIT range, in their order (reversed by DESC); start and end are
// then moved to index the loaded range, as in Redis.
func load(e *keyspace.Entry, o options, start, end *int64) []item {
	n := int64(length(e))
	direct := o.dontsort && e.Kind != keyspace.KindSet && (*start != 0 || *end != n-1)
	switch {
	case e.Kind == keyspace.KindList && o.dontsort:
		l := engine.ListOf(e)
		if *end < *start {
			return nil
		}
		want := n
		if direct {
			want = *end - *start + 1
		}
		items := make([]item, 0, want)
		if o.desc {
			from := n - *start - 1
			l.Each(true, func(i int, v string) bool {
				if int64(i) > from {
					return true
				}
				items = append(items, item{ele: v})
				return int64(len(items)) < want
			})
		} else {
			l.Range(int(*start), int(*start+want-1), func(v string) { items = append(items, item{ele: v}) })
		}
		*end -= *start
		*start = 0
		return items
	case e.Kind == keyspace.KindList:
		l := engine.ListOf(e)
		items := make([]item, 0, n)
		l.Each(false, func(_ int, v string) bool {
			items = append(items, item{ele: v})
			return true
		})
		return items
	case e.Kind == keyspace.KindSet:
		items := make([]item, 0, n)
		e.Obj.(*set.Set).ForEach(func(m string) bool {
			items = append(items, item{ele: m})
			return true
		})
		return items
	case o.dontsort:
		z := e.Obj.(*zset.ZSet)
		want := n
		if direct {
			want = max(*end-*start+1, 0)
		}
		items := make([]item, 0, want)
		var nd *zset.Node
		if want > 0 {
			if o.desc {
				nd = z.ByRank(int(n - 1 - *start))
			} else {
				nd = z.ByRank(int(*start))
			}
		}
		for int64(len(items)) < want && nd != nil {
			items = append(items, item{ele: nd.Member()})
			if o.desc {
				nd = nd.Prev()
			} else {
				nd = nd.Next()
			}
		}
		*end -= *start
		*start = 0
		return items
	default:
		z := e.Obj.(*zset.ZSet)
		items := make([]item, 0, n)
		for nd := z.ByRank(0); nd != nil; nd = nd.Next() {
			items = append(items, item{ele: nd.Member()})
		}
		return items
	}
}

// score fills in the sort keys: the BY pattern's values or the elements
// themselves, read as numbers unless ALPHA. It replies and returns false
// when a pattern reaches another actor's key or a number does not convert.
func score(c *engine.Call, o options, items []item) bool {
	convErr := false
	for i := range items {
		it := &items[i]
		v := &it.ele
		if o.by != nil {
			var ok bool
			if v, ok = lookupPattern(c, o.by, it.ele); !ok {
				c.W.Error(errNonLocal)
				return false
			}
			if v == nil {
				continue
			}
		}
		if o.alpha {
			if o.by != nil {
				it.cmp = v
			}
			continue
		}
		f, ok := strtod(*v)
		if !ok {
			convErr = true
		}
		it.score = f
	}
	if convErr {
		c.W.Error(errConvert)
		return false
	}
	return true
}

// strtod reads s as Redis's SORT does: strtod on the C string, which must
// be used up, with no range error and no NaN.
func strtod(s string) (float64, bool) {
	b := engine.Cstr([]byte(s))
	f, n, erange := cnum.Strtod(b)
	if n == 0 {
		return 0, len(b) == 0
	}
	return f, n == len(b) && !erange && !math.IsNaN(f)
}

func sortItems(items []item, o options) {
	cmp := func(a, b *item) int {
		if !o.alpha {
			switch {
			case a.score > b.score:
				return 1
			case a.score < b.score:
				return -1
			}
			return bytes.Compare([]byte(a.ele), []byte(b.ele))
		}
		if o.by != nil {
			switch {
			case a.cmp == nil && b.cmp == nil:
				return 0
			case a.cmp == nil:
				return -1
			case b.cmp == nil:
				return 1
			}
			return bytes.Compare([]byte(*a.cmp), []byte(*b.cmp))
		}
		return bytes.Compare([]byte(a.ele), []byte(b.ele))
	}
	sort.SliceStable(items, func(i, j int) bool {
		r := cmp(&items[i], &items[j])
		if o.desc {
			r = -r
		}
		return r < 0
	})
}

// lookupPattern returns the value a GET or BY pattern names for ele (nil:
// none); ok is false when the key belongs to another shard actor.
func lookupPattern(c *engine.Call, pat []byte, ele string) (v *string, ok bool) {
	p := engine.Cstr(pat)
	if len(p) == 1 && p[0] == '#' {
		return &ele, true
	}
	star := bytes.IndexByte(p, '*')
	if star < 0 {
		return nil, true
	}
	post := p[star+1:]
	var field []byte
	if f := bytes.Index(post, []byte("->")); f >= 0 && f+2 < len(post) {
		field = post[f+2:]
		post = post[:f]
	}
	key := make([]byte, 0, len(p)+len(ele))
	key = append(append(append(key, p[:star]...), ele...), post...)
	e, local := c.LookupAny(key)
	if !local {
		return nil, false
	}
	if e == nil {
		return nil, true
	}
	if field != nil {
		if e.Kind != keyspace.KindHash {
			return nil, true
		}
		s, found := engine.HashOf(e).Get(field)
		if !found {
			return nil, true
		}
		return &s, true
	}
	if e.Kind != keyspace.KindString {
		return nil, true
	}
	s := string(e.Str)
	return &s, true
}

// store makes dst the list of vals (a missing GET value stores ""), or
// deletes it when the result is empty, and replies the length. Replicas
// and the AOF get the result itself (DEL, then RPUSH), not the SORT.
func store(c *engine.Call, dst []byte, vals []*string) {
	slot, _ := c.LocalSlot(dst) // the routing kept dst in this actor
	c.InSlot(slot, func(sc *engine.Call) {
		if len(vals) == 0 {
			if sc.Delete(dst) {
				sc.Signal(dst)
				sc.Propagate(engine.CmdDEL, dst)
				sc.Notify(engine.NotifyGeneric, "del", dst)
			} else {
				sc.NoPropagate()
			}
			return
		}
		lv := &engine.ListValue{}
		for _, v := range vals {
			if v == nil {
				lv.List.PushBack("")
			} else {
				lv.List.PushBack(*v)
			}
		}
		sc.SzStoreDst(dst, keyspace.KindList, lv, engine.NotifyList, "sortstore")
		if sc.Replicating() {
			sc.Propagate(engine.CmdDEL, dst)
			push := make([][]byte, 0, len(vals)+2)
			push = append(push, cmdRPUSH, dst)
			lv.List.Each(false, func(_ int, v string) bool {
				push = append(push, []byte(v))
				return true
			})
			sc.Propagate(push...)
		} else {
			sc.NoPropagate()
		}
	})
	c.W.Int(int64(len(vals)))
}

var cmdRPUSH = []byte("RPUSH")
