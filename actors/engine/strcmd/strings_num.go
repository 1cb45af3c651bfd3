package strcmd

import (
	"strconv"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/actors/engine/types/ld"
	"github.com/slotd/slotd/netio/command"
)

// Counters: INCR, DECR, INCRBY, DECRBY (64-bit integers kept as decimal
// text) and INCRBYFLOAT (x87 long double arithmetic, actors/engine/types/ld).
// All of them keep the key's TTL.

func registerStringsNum() {
	command.Register(
		strSpec("incr", 2, "Increment the integer value of a key by one", "1.0.0", cmdIncr,
			"write", "denyoom", "fast"),
		strSpec("decr", 2, "Decrement the integer value of a key by one", "1.0.0", cmdDecr,
			"write", "denyoom", "fast"),
		strSpec("incrby", 3, "Increment the integer value of a key by the given amount", "1.0.0", cmdIncrBy,
			"write", "denyoom", "fast"),
		strSpec("decrby", 3, "Decrement the integer value of a key by the given number", "1.0.0", cmdDecrBy,
			"write", "denyoom", "fast"),
		strSpec("incrbyfloat", 3, "Increment the float value of a key by the given amount", "2.6.0",
			cmdIncrByFloat, "write", "denyoom", "fast"),
	)
}

func cmdIncr(c *engine.Call) { incrBy(c, 1) }
func cmdDecr(c *engine.Call) { incrBy(c, -1) }

func cmdIncrBy(c *engine.Call) {
	n, ok := c.IntArg(c.Args[2])
	if !ok {
		return
	}
	incrBy(c, n)
}

func cmdDecrBy(c *engine.Call) {
	n, ok := c.IntArg(c.Args[2])
	if !ok {
		return
	}
	if n == -1<<63 {
		c.W.Error("ERR decrement would overflow")
		return
	}
	incrBy(c, -n)
}

func incrBy(c *engine.Call, by int64) {
	key := c.Args[1]
	e := c.LookupWrite(key)
	var v int64
	if e != nil {
		if e.Kind != keyspace.KindString {
			c.W.Error(engine.ErrWrongType)
			return
		}
		var ok bool
		if v, ok = engine.ParseInt(e.Str); !ok {
			c.W.Error(engine.ErrNotInt)
			return
		}
	}
	if engine.AddOverflows(v, by) {
		c.W.Error(engine.ErrOverflow)
		return
	}
	v += by
	e = numberEntry(c, key, e)
	e.Str = strconv.AppendInt(e.Str[:0], v, 10)
	c.Notify(engine.NotifyString, "incrby", key)
	c.W.Int(v)
}

// numberEntry returns key's entry (created if e is nil) ready to receive a
// number's text: the TTL is kept and a small buffer is reused, a big one
// dropped.
func numberEntry(c *engine.Call, key []byte, e *keyspace.Entry) *keyspace.Entry {
	if e == nil {
		e = c.Create(key, keyspace.KindString)
	}
	if cap(e.Str) > 64 {
		e.Str = nil
	}
	return e
}

func cmdIncrByFloat(c *engine.Call) {
	key := c.Args[1]
	e, ok := c.OfKind(c.LookupWrite(key), keyspace.KindString)
	if !ok {
		return
	}
	cur, curSt := ld.FromInt64(0), ld.OK
	if e != nil {
		cur, curSt = ld.Parse(e.Str)
	}
	if curSt == ld.Invalid {
		c.W.Error(engine.ErrNotFloat)
		return
	}
	incr, incrSt := ld.Parse(c.Args[2])
	if incrSt == ld.Invalid {
		c.W.Error(engine.ErrNotFloat)
		return
	}
	sum, ok := c.SumLD(cur, curSt, incr, incrSt)
	if !ok {
		return
	}
	e = numberEntry(c, key, e)
	e.Str = ld.AppendHuman(e.Str[:0], sum)
	c.Notify(engine.NotifyString, "incrbyfloat", key)
	c.W.Bulk(e.Str)
	// Replicas store the result rather than redo the float arithmetic.
	if c.Replicating() {
		c.Propagate(engine.CmdSET, key, e.Str, engine.ArgKEEPTTL)
	}
}
