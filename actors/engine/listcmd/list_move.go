package listcmd

// List commands over several keys: LMOVE, RPOPLPUSH and LMPOP. Their core
// is written as "serve now" functions (popFirstNonEmpty, moveNow) that
// either serve the request, replying, or report that nothing could be
// popped without writing anything, so the blocking variants (BLPOP, BRPOP,
// BLMPOP, BLMOVE, BRPOPLPUSH) can call the same code and park when it
// returns false; a parked command is simply run again when its keys are
// signalled.

import (
	"strconv"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/netio/command"
)

func registerListMove() {
	command.Register(
		engine.Handle(&command.Spec{Name: "lmove", Arity: 5, Flags: []string{"write", "denyoom"}, First: 1, Last: 2, Step: 1,
			Categories: []string{"write", "list", "slow"}, Group: "list", Since: "6.2.0",
			Summary: "Pop an element from a list, push it to another list and return it",
			Exec:    command.Shard}, cmdLMove),
		engine.Handle(&command.Spec{Name: "rpoplpush", Arity: 3, Flags: []string{"write", "denyoom"}, First: 1, Last: 2, Step: 1,
			Categories: []string{"write", "list", "slow"}, Group: "list", Since: "1.2.0",
			Summary: "Remove the last element in a list, prepend it to another list and return it",
			Exec:    command.Shard}, cmdRPopLPush),
		engine.WithArgError(engine.Handle(&command.Spec{Name: "lmpop", Arity: -4, Flags: []string{"write", "movablekeys"},
			Categories: []string{"write", "list", "slow"}, Group: "list", Since: "7.0.0",
			Summary: "Pop elements from a list", Keys: listNumKeysAt(1),
			Exec: command.Shard}, cmdLMPop), engine.MpopArgErrors(1, false, parseLMPopArgs)),
	)
}

// listNumKeysAt returns the key finder of commands shaped "cmd ... numkeys key
// [key ...] ..." with numkeys at argument idx, following Redis's key-spec
// rules: when numkeys is not a non-negative integer or names more keys than
// there are arguments, the command has no keys (it then runs without a
// slot, and its handler replies the argument error before touching any
// key).
func listNumKeysAt(idx int) func(args [][]byte) ([]int, error) {
	return func(args [][]byte) ([]int, error) {
		if idx >= len(args) {
			return nil, nil
		}
		n, ok := engine.ParseInt(args[idx])
		first := idx + 1
		if !ok || n <= 0 || n > int64(len(args)-first) {
			return nil, nil
		}
		keys := make([]int, n)
		for i := range keys {
			keys[i] = first + i
		}
		return keys, nil
	}
}

// parseMoveEnds reads the wherefrom and whereto (LEFT|RIGHT) of LMOVE and
// BLMOVE, arguments 3 and 4, replying a syntax error to a bad one.
func parseMoveEnds(c *engine.Call) (from, to listEnd, ok bool) {
	if from, ok = parseListEnd(c, c.Args[3]); ok {
		to, ok = parseListEnd(c, c.Args[4])
	}
	return from, to, ok
}

// cmdLMove implements LMOVE source destination LEFT|RIGHT LEFT|RIGHT.
func cmdLMove(c *engine.Call) {
	from, to, ok := parseMoveEnds(c)
	if !ok {
		return
	}
	if !moveNow(c, c.Args[1], c.Args[2], from, to) {
		c.W.Null()
	}
}

// cmdRPopLPush implements RPOPLPUSH source destination.
func cmdRPopLPush(c *engine.Call) {
	if !moveNow(c, c.Args[1], c.Args[2], listTail, listHead) {
		c.W.Null()
	}
}

// moveNow is the serve-now core of LMOVE, RPOPLPUSH, BLMOVE and
// BRPOPLPUSH: it pops an element from src's end from and pushes it onto
// dst's end to (creating dst), replying with the element. A source or
// destination of another type is answered WRONGTYPE. It returns false,
// having written nothing, when src is missing (so nothing can be served
// yet).
func moveNow(c *engine.Call, src, dst []byte, from, to listEnd) bool {
	se, ok := writableList(c, src)
	if !ok {
		return true
	}
	if se == nil {
		c.Unchanged() // an existing destination is not signalled
		return false
	}
	de, ok := writableList(c, dst)
	if !ok {
		return true
	}
	sl := engine.ListOf(se)
	v := pop(sl, from)
	dl := sl // src == dst rotates the list
	if de == nil {
		dl = newList(c, dst)
	} else if de != se {
		dl = engine.ListOf(de)
	}
	push(dl, to, v)
	c.Notify(engine.NotifyList, pushEvent(to), dst)
	c.Notify(engine.NotifyList, popEvent(from), src)
	deleteIfEmpty(c, src, sl)
	c.W.BulkString(v)
	if c.Replicating() {
		c.Propagate(engine.CmdLMOVE, src, dst, endArg(from), endArg(to)) // BLMOVE and BRPOPLPUSH too
	}
	return true
}

func endArg(e listEnd) []byte {
	if e == listHead {
		return []byte("LEFT")
	}
	return []byte("RIGHT")
}

// popShape is the reply shape of the multi-key pops.
type popShape uint8

const (
	// popKeyElement replies [key, element] (BLPOP, BRPOP).
	popKeyElement popShape = iota
	// popKeyElements replies [key, [element ...]] (LMPOP, BLMPOP).
	popKeyElements
)

// popFirstNonEmpty is the serve-now core of LMPOP, BLPOP, BRPOP and
// BLMPOP: it looks at keys in order and pops up to count elements from the
// first non-empty list, replying in the given shape; the first existing key
// holding another type gets WRONGTYPE. It returns false, having written
// nothing, when every key is missing.
func popFirstNonEmpty(c *engine.Call, keys [][]byte, end listEnd, count int64, shape popShape) bool {
	// Only the list popped from changes: signal it alone, not every key.
	c.Unchanged()
	for _, key := range keys {
		e := c.LookupWrite(key)
		if e == nil {
			continue
		}
		if e.Kind != keyspace.KindList {
			c.W.Error(engine.ErrWrongType)
			return true
		}
		l := engine.ListOf(e)
		if l.Len() == 0 {
			continue
		}
		c.W.Array(2)
		c.W.Bulk(key)
		if shape == popKeyElement {
			c.W.BulkString(pop(l, end))
		} else {
			popRange(c, l, end, count)
		}
		c.Notify(engine.NotifyList, popEvent(end), key)
		deleteIfEmpty(c, key, l)
		c.Signal(key)
		if c.Replicating() {
			// Replicas pop from the key that served, never blocking.
			verb := "LPOP"
			if end != listHead {
				verb = "RPOP"
			}
			if shape == popKeyElement {
				c.PropagateStrings(verb, string(key))
			} else {
				c.PropagateStrings(verb, string(key), strconv.FormatInt(count, 10))
			}
		}
		return true
	}
	return false
}

// mpopArgs are the parsed arguments of LMPOP/BLMPOP after numkeys.
type mpopArgs struct {
	keys  [][]byte
	end   listEnd
	count int64
}

// parseMPop parses "numkeys key [key ...] LEFT|RIGHT [COUNT count]" from
// argument idx with Redis's checks and error texts, replying on error.
func parseMPop(c *engine.Call, idx int) (mpopArgs, bool) {
	var a mpopArgs
	var where int
	var ok bool
	if a.keys, where, ok = c.MpopKeys(idx); !ok {
		return a, false
	}
	if a.end, ok = parseListEnd(c, c.Args[where]); !ok {
		return a, false
	}
	a.count, ok = c.MpopCount(where + 1)
	return a, ok
}

// cmdLMPop implements LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count].
func cmdLMPop(c *engine.Call) {
	a, ok := parseMPop(c, 1)
	if !ok {
		return
	}
	if !popFirstNonEmpty(c, a.keys, a.end, a.count, popKeyElements) {
		c.W.NullArray()
	}
}

// parseLMPopArgs is [B]LMPOP's argument check for mpopArgErrors.
func parseLMPopArgs(c *engine.Call, idx int) bool {
	_, ok := parseMPop(c, idx)
	return ok
}
