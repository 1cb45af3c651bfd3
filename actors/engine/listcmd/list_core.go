package listcmd

// List commands that touch one list: LPUSH RPUSH LPUSHX RPUSHX LPOP RPOP
// LLEN LRANGE LINDEX LSET LINSERT LREM LTRIM LPOS. The value is a
// *listValue in Entry.Obj (actors/engine/types/list underneath). As in Redis, a
// list that becomes empty is deleted, and argument errors, lookups and type
// checks come in the order Redis does them, which decides which error a bad
// command gets.

import (
	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/actors/engine/types/list"
	"github.com/slotd/slotd/netio/command"
)

func registerListCore() {
	command.Register(
		listSpec("lpush", -3, "Prepend one or multiple elements to a list", "1.0.0", cmdLPush, "write", "denyoom", "fast"),
		listSpec("rpush", -3, "Append one or multiple elements to a list", "1.0.0", cmdRPush, "write", "denyoom", "fast"),
		listSpec("lpushx", -3, "Prepend an element to a list, only if the list exists", "2.2.0", cmdLPushX,
			"write", "denyoom", "fast"),
		listSpec("rpushx", -3, "Append an element to a list, only if the list exists", "2.2.0", cmdRPushX,
			"write", "denyoom", "fast"),
		listSpec("lpop", -2, "Remove and get the first elements in a list", "1.0.0", cmdLPop, "write", "fast"),
		listSpec("rpop", -2, "Remove and get the last elements in a list", "1.0.0", cmdRPop, "write", "fast"),
		listSpec("llen", 2, "Get the length of a list", "1.0.0", cmdLLen, "readonly", "fast"),
		listSpec("lrange", 4, "Get a range of elements from a list", "1.0.0", cmdLRange, "readonly"),
		listSpec("lindex", 3, "Get an element from a list by its index", "1.0.0", cmdLIndex, "readonly"),
		listSpec("lset", 4, "Set the value of an element in a list by its index", "1.0.0", cmdLSet, "write", "denyoom"),
		listSpec("linsert", 5, "Insert an element before or after another element in a list", "2.2.0", cmdLInsert,
			"write", "denyoom"),
		listSpec("lrem", 4, "Remove elements from a list", "1.0.0", cmdLRem, "write"),
		listSpec("ltrim", 4, "Trim a list to the specified range", "1.0.0", cmdLTrim, "write"),
		listSpec("lpos", -3, "Return the index of matching elements on a list", "6.0.6", cmdLPos, "readonly"),
	)
}

// listSpec builds the spec of a list command whose only key is argument 1.
func listSpec(name string, arity int, summary, since string, h engine.Handler, flags ...string) *command.Spec {
	return engine.Handle(&command.Spec{Name: name, Arity: arity, Flags: flags, First: 1, Last: 1, Step: 1,
		Categories: engine.TypeCategories(flags, "list"), Group: "list", Since: since, Summary: summary,
		Exec: command.Shard}, h)
}

// newList creates key as an empty list (the caller adds elements at once:
// empty lists must not stay in the keyspace).
func newList(c *engine.Call, key []byte) *list.List {
	e := c.Create(key, keyspace.KindList)
	v := &engine.ListValue{}
	e.Obj = v
	return &v.List
}

// listEnd says which end of a list a pop or push works on.
type listEnd uint8

const (
	listHead listEnd = iota // LEFT
	listTail                // RIGHT
)

func push(l *list.List, end listEnd, v string) {
	if end == listHead {
		l.PushFront(v)
	} else {
		l.PushBack(v)
	}
}

func pop(l *list.List, end listEnd) string {
	if end == listHead {
		return l.PopFront()
	}
	return l.PopBack()
}

// parseListEnd reads LEFT or RIGHT (compared as a C string, as strcasecmp
// does), writing a syntax error otherwise.
func parseListEnd(c *engine.Call, arg []byte) (listEnd, bool) {
	switch a := engine.Cstr(arg); {
	case engine.EqFold(a, "left"):
		return listHead, true
	case engine.EqFold(a, "right"):
		return listTail, true
	}
	c.W.Error(engine.ErrSyntax)
	return 0, false
}

// writableList looks key up for a write: the list (nil when missing), or
// false after replying WRONGTYPE.
func writableList(c *engine.Call, key []byte) (*keyspace.Entry, bool) {
	return c.OfKind(c.LookupWrite(key), keyspace.KindList)
}

// readableList is writableList for reads (counts hits and misses).
func readableList(c *engine.Call, key []byte) (*keyspace.Entry, bool) {
	return c.OfKind(c.Lookup(key), keyspace.KindList)
}

// deleteIfEmpty removes key when its list has no elements left (and fires
// 'del', after the command's own event).
func deleteIfEmpty(c *engine.Call, key []byte, l *list.List) {
	if l.Len() == 0 {
		c.Delete(key)
		c.Notify(engine.NotifyGeneric, "del", key)
	}
}

// popEvent is the event of a pop from end.
func popEvent(end listEnd) string {
	if end == listHead {
		return "lpop"
	}
	return "rpop"
}

// pushEvent is the event of a push to end.
func pushEvent(end listEnd) string {
	if end == listHead {
		return "lpush"
	}
	return "rpush"
}

func cmdLPush(c *engine.Call)  { pushCommand(c, listHead, false) }
func cmdRPush(c *engine.Call)  { pushCommand(c, listTail, false) }
func cmdLPushX(c *engine.Call) { pushCommand(c, listHead, true) }
func cmdRPushX(c *engine.Call) { pushCommand(c, listTail, true) }

// pushCommand implements [LR]PUSH[X] key element...: the new length.
func pushCommand(c *engine.Call, end listEnd, onlyExisting bool) {
	key := c.Args[1]
	e, ok := writableList(c, key)
	if !ok {
		return
	}
	var l *list.List
	switch {
	case e != nil:
		l = engine.ListOf(e)
	case onlyExisting:
		c.W.Int(0)
		return
	default:
		l = newList(c, key)
	}
	for _, v := range c.Args[2:] {
		push(l, end, string(v))
	}
	c.Notify(engine.NotifyList, pushEvent(end), key)
	c.W.Int(int64(l.Len()))
}

func cmdLPop(c *engine.Call) { popCommand(c, listHead) }
func cmdRPop(c *engine.Call) { popCommand(c, listTail) }

// popCommand implements [LR]POP key [count]. Without count: one bulk or
// null; with count: an array (a null array for a missing key, an empty one
// for count 0).
func popCommand(c *engine.Call, end listEnd) {
	if len(c.Args) > 3 {
		c.W.Error("ERR wrong number of arguments for '" + c.Cmd.Spec.Name + "' command")
		return
	}
	hasCount := len(c.Args) == 3
	var count int64
	if hasCount {
		var ok bool
		if count, ok = positiveArg(c, c.Args[2], ""); !ok {
			return
		}
	}
	key := c.Args[1]
	e, ok := writableList(c, key)
	if !ok {
		return
	}
	if e == nil {
		if hasCount {
			c.W.NullArray()
		} else {
			c.W.Null()
		}
		return
	}
	if hasCount && count == 0 {
		c.Unchanged()
		c.W.Array(0)
		return
	}
	l := engine.ListOf(e)
	if !hasCount {
		v := pop(l, end)
		c.W.BulkString(v)
	} else {
		popRange(c, l, end, count)
	}
	c.Notify(engine.NotifyList, popEvent(end), key)
	deleteIfEmpty(c, key, l)
}

// popRange pops up to count elements from end and replies with them as an
// array.
func popRange(c *engine.Call, l *list.List, end listEnd, count int64) {
	n := int64(l.Len())
	if count > n {
		count = n
	}
	c.W.Array(int(count))
	for ; count > 0; count-- {
		c.W.BulkString(pop(l, end))
	}
}

// positiveArg parses a count that must be ≥ 0. Redis answers a non-number
// and a negative number alike: "ERR "+msg, by default "value is out of
// range, must be positive" (getPositiveLongFromObjectOrReply).
func positiveArg(c *engine.Call, arg []byte, msg string) (int64, bool) {
	n, ok := engine.ParseInt(arg)
	if !ok || n < 0 {
		if msg == "" {
			msg = "value is out of range, must be positive"
		}
		c.W.Error("ERR " + msg)
		return 0, false
	}
	return n, true
}

func cmdLLen(c *engine.Call) {
	e, ok := readableList(c, c.Args[1])
	switch {
	case !ok:
	case e == nil:
		c.W.Int(0)
	default:
		c.W.Int(int64(engine.ListOf(e).Len()))
	}
}

// cmdLRange implements LRANGE key start stop.
func cmdLRange(c *engine.Call) {
	start, stop, ok := c.IntArgs(c.Args[2], c.Args[3])
	if !ok {
		return
	}
	e, ok := readableList(c, c.Args[1])
	if !ok {
		return
	}
	if e == nil {
		c.W.Array(0)
		return
	}
	l := engine.ListOf(e)
	s, t, ok := engine.NormRange(start, stop, int64(l.Len()))
	if !ok {
		c.W.Array(0)
		return
	}
	c.W.Array(int(t - s + 1))
	l.Range(int(s), int(t), func(v string) { c.W.BulkString(v) })
}

// cmdLIndex implements LINDEX key index (the key is looked up before the
// index is parsed).
func cmdLIndex(c *engine.Call) {
	e, ok := readableList(c, c.Args[1])
	if !ok {
		return
	}
	if e == nil {
		c.W.Null()
		return
	}
	idx, ok := c.IntArg(c.Args[2])
	if !ok {
		return
	}
	l := engine.ListOf(e)
	if idx < -int64(l.Len()) || idx >= int64(l.Len()) {
		c.W.Null()
		return
	}
	v, _ := l.Index(int(idx))
	c.W.BulkString(v)
}

// cmdLSet implements LSET key index element.
func cmdLSet(c *engine.Call) {
	e, ok := writableList(c, c.Args[1])
	if !ok {
		return
	}
	if e == nil {
		c.W.Error("ERR no such key")
		return
	}
	idx, ok := c.IntArg(c.Args[2])
	if !ok {
		return
	}
	l := engine.ListOf(e)
	if idx < -int64(l.Len()) || idx >= int64(l.Len()) || !l.Set(int(idx), string(c.Args[3])) {
		c.W.Error("ERR index out of range")
		return
	}
	c.Notify(engine.NotifyList, "lset", c.Args[1])
	c.W.OK()
}

// cmdLInsert implements LINSERT key BEFORE|AFTER pivot element: the new
// length, -1 when the pivot is absent, 0 when the key is.
func cmdLInsert(c *engine.Call) {
	var after bool
	switch w := engine.Cstr(c.Args[2]); {
	case engine.EqFold(w, "after"):
		after = true
	case engine.EqFold(w, "before"):
	default:
		c.W.Error(engine.ErrSyntax)
		return
	}
	e, ok := writableList(c, c.Args[1])
	if !ok {
		return
	}
	if e == nil {
		c.W.Int(0)
		return
	}
	l := engine.ListOf(e)
	pivot := string(c.Args[3])
	at := -1
	l.Each(false, func(i int, v string) bool {
		if v == pivot {
			at = i
			return false
		}
		return true
	})
	if at < 0 {
		c.Unchanged()
		c.W.Int(-1)
		return
	}
	if after {
		at++
	}
	l.Insert(at, string(c.Args[4]))
	c.Notify(engine.NotifyList, "linsert", c.Args[1])
	c.W.Int(int64(l.Len()))
}

// cmdLRem implements LREM key count element: count > 0 removes the first
// count matches from the head, < 0 from the tail, 0 all of them.
func cmdLRem(c *engine.Call) {
	count, ok := c.IntArg(c.Args[2])
	if !ok {
		return
	}
	key := c.Args[1]
	e, ok := writableList(c, key)
	if !ok {
		return
	}
	if e == nil {
		c.W.Int(0)
		return
	}
	l := engine.ListOf(e)
	reverse := count < 0
	if reverse {
		count = -count // math.MinInt64 stays negative: no limit, as in Redis
	}
	limit := int(count)
	if count < 0 || int64(limit) != count || count > int64(l.Len()) {
		limit = 0
	}
	removed := l.Remove(string(c.Args[3]), limit, reverse)
	if removed == 0 {
		c.Unchanged()
	} else {
		c.Notify(engine.NotifyList, "lrem", key)
	}
	deleteIfEmpty(c, key, l)
	c.W.Int(int64(removed))
}

// cmdLTrim implements LTRIM key start stop; an empty range deletes the key.
func cmdLTrim(c *engine.Call) {
	start, stop, ok := c.IntArgs(c.Args[2], c.Args[3])
	if !ok {
		return
	}
	key := c.Args[1]
	e, ok := writableList(c, key)
	if !ok {
		return
	}
	if e == nil {
		c.W.OK()
		return
	}
	l := engine.ListOf(e)
	s, t, ok := engine.NormRange(start, stop, int64(l.Len()))
	if !ok {
		l.Clear()
	} else {
		l.Trim(int(s), int(t))
	}
	c.Notify(engine.NotifyList, "ltrim", key)
	deleteIfEmpty(c, key, l)
	c.W.OK()
}

// cmdLPos implements LPOS key element [RANK rank] [COUNT n] [MAXLEN len].
// The arithmetic on rank mirrors Redis's, including what RANK
// -9223372036854775808 does there (it negates to itself, so every match
// counts, scanning from the tail).
func cmdLPos(c *engine.Call) {
	rank, count, maxlen := int64(1), int64(-1), int64(0)
	args := c.Args
	for j := 3; j < len(args); j++ {
		opt := engine.Cstr(args[j])
		more := j+1 < len(args)
		switch {
		case engine.EqFold(opt, "rank") && more:
			j++
			var ok bool
			if rank, ok = c.IntArg(args[j]); !ok {
				return
			}
			if rank == 0 {
				c.W.Error("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... " +
					"or use negative to start from the end of the list")
				return
			}
		case engine.EqFold(opt, "count") && more:
			j++
			var ok bool
			if count, ok = positiveArg(c, args[j], "COUNT can't be negative"); !ok {
				return
			}
		case engine.EqFold(opt, "maxlen") && more:
			j++
			var ok bool
			if maxlen, ok = positiveArg(c, args[j], "MAXLEN can't be negative"); !ok {
				return
			}
		default:
			c.W.Error(engine.ErrSyntax)
			return
		}
	}
	reverse := false
	if rank < 0 {
		rank = -rank
		reverse = true
	}
	e := c.Lookup(c.Args[1])
	if e == nil {
		if count != -1 {
			c.W.Array(0)
		} else {
			c.W.Null()
		}
		return
	}
	if e.Kind != keyspace.KindList {
		c.W.Error(engine.ErrWrongType)
		return
	}
	l := engine.ListOf(e)
	want := string(c.Args[2])
	var matches, scanned int64
	var found []int64
	first := int64(-1)
	l.Each(reverse, func(i int, v string) bool {
		if maxlen != 0 && scanned >= maxlen {
			return false
		}
		scanned++
		if v != want {
			return true
		}
		matches++
		if matches < rank {
			return true
		}
		if count == -1 {
			first = int64(i)
			return false
		}
		found = append(found, int64(i))
		return count == 0 || matches-rank+1 < count
	})
	if count == -1 {
		if first < 0 {
			c.W.Null()
		} else {
			c.W.Int(first)
		}
		return
	}
	c.W.Array(len(found))
	for _, i := range found {
		c.W.Int(i)
	}
}
