package shard

import (
	"strconv"

	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/netio/command"
)

// Counters: INCR, DECR, INCRBY, DECRBY (64-bit integers kept as decimal
// text) and INCRBYFLOAT (x87 long double arithmetic, see strings_float.go).
// All of them keep the key's TTL.

func init() {
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

func cmdIncr(c *Call) { c.incrBy(1) }
func cmdDecr(c *Call) { c.incrBy(-1) }

func cmdIncrBy(c *Call) {
	n, ok := c.intArg(c.Args[2])
	if !ok {
		return
	}
	c.incrBy(n)
}

func cmdDecrBy(c *Call) {
	n, ok := c.intArg(c.Args[2])
	if !ok {
		return
	}
	if n == -1<<63 {
		c.W.Error("ERR decrement would overflow")
		return
	}
	c.incrBy(-n)
}

func (c *Call) incrBy(by int64) {
	key := c.Args[1]
	e := c.LookupWrite(key)
	var v int64
	if e != nil {
		if e.Kind != keyspace.KindString {
			c.W.Error(ErrWrongType)
			return
		}
		var ok bool
		if v, ok = parseInt(e.Str); !ok {
			c.W.Error(ErrNotInt)
			return
		}
	}
	if addOverflows(v, by) {
		c.W.Error(ErrOverflow)
		return
	}
	v += by
	e = c.numberEntry(key, e)
	e.Str = strconv.AppendInt(e.Str[:0], v, 10)
	c.W.Int(v)
}

// addOverflows reports whether v+by leaves the int64 range (INCRBY's and
// HINCRBY's "increment or decrement would overflow").
func addOverflows(v, by int64) bool {
	return (by < 0 && v < 0 && by < -1<<63-v) || (by > 0 && v > 0 && by > maxInt64-v)
}

// numberEntry returns key's entry (created if e is nil) ready to receive a
// number's text: the TTL is kept and a small buffer is reused, a big one
// dropped.
func (c *Call) numberEntry(key []byte, e *keyspace.Entry) *keyspace.Entry {
	if e == nil {
		e = c.Create(key, keyspace.KindString)
	}
	if cap(e.Str) > 64 {
		e.Str = nil
	}
	return e
}

func cmdIncrByFloat(c *Call) {
	key := c.Args[1]
	e, ok := c.ofKind(c.LookupWrite(key), keyspace.KindString)
	if !ok {
		return
	}
	cur, curSt := ldFromInt64(0), ldOK
	if e != nil {
		cur, curSt = parseLD(e.Str)
	}
	if curSt == ldInvalid {
		c.W.Error(ErrNotFloat)
		return
	}
	incr, incrSt := parseLD(c.Args[2])
	if incrSt == ldInvalid {
		c.W.Error(ErrNotFloat)
		return
	}
	sum, ok := c.sumLD(cur, curSt, incr, incrSt)
	if !ok {
		return
	}
	e = c.numberEntry(key, e)
	e.Str = appendLDHuman(e.Str[:0], sum)
	c.W.Bulk(e.Str)
	// Replicas store the result rather than redo the float arithmetic.
	if c.Replicating() {
		c.Propagate(cmdSET, key, e.Str, argKEEPTTL)
	}
}
