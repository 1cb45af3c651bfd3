package hashcmd

// Hash commands: HSET HSETNX HGET HMSET HMGET HGETALL HDEL HEXISTS HLEN
// HKEYS HVALS HINCRBY HINCRBYFLOAT HSTRLEN HSCAN HRANDFIELD. The value is a
// *hashValue in Entry.Obj (actors/engine/types/hash underneath), compact
// ("listpack", insertion-ordered) until hash-max-listpack-entries /
// hash-max-listpack-value are exceeded, then a table ("hashtable"), as in
// Redis, so small hashes reply in exactly Redis's order. A hash that
// becomes empty is deleted.

import (
	"strconv"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/actors/engine/types/hash"
	"github.com/slotd/slotd/actors/engine/types/ld"
	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/slots"
)

func registerHashCore() {
	command.Register(
		hashSpec("hset", -4, "Set the string value of a hash field", "2.0.0", cmdHSet, nil, "write", "denyoom", "fast"),
		hashSpec("hsetnx", 4, "Set the value of a hash field, only if the field does not exist", "2.0.0", cmdHSetNX, nil,
			"write", "denyoom", "fast"),
		hashSpec("hget", 3, "Get the value of a hash field", "2.0.0", cmdHGet, nil, "readonly", "fast"),
		hashSpec("hmset", -4, "Set multiple hash fields to multiple values", "2.0.0", cmdHSet, nil,
			"write", "denyoom", "fast"),
		hashSpec("hmget", -3, "Get the values of all the given hash fields", "2.0.0", cmdHMGet, nil, "readonly", "fast"),
		hashSpec("hgetall", 2, "Get all the fields and values in a hash", "2.0.0", cmdHGetAll,
			[]string{"nondeterministic_output_order"}, "readonly"),
		hashSpec("hdel", -3, "Delete one or more hash fields", "2.0.0", cmdHDel, nil, "write", "fast"),
		hashSpec("hexists", 3, "Determine if a hash field exists", "2.0.0", cmdHExists, nil, "readonly", "fast"),
		hashSpec("hlen", 2, "Get the number of fields in a hash", "2.0.0", cmdHLen, nil, "readonly", "fast"),
		hashSpec("hkeys", 2, "Get all the fields in a hash", "2.0.0", cmdHKeys,
			[]string{"nondeterministic_output_order"}, "readonly"),
		hashSpec("hvals", 2, "Get all the values in a hash", "2.0.0", cmdHVals,
			[]string{"nondeterministic_output_order"}, "readonly"),
		hashSpec("hincrby", 4, "Increment the integer value of a hash field by the given number", "2.0.0", cmdHIncrBy, nil,
			"write", "denyoom", "fast"),
		hashSpec("hincrbyfloat", 4, "Increment the float value of a hash field by the given amount", "2.6.0",
			cmdHIncrByFloat, nil, "write", "denyoom", "fast"),
		hashSpec("hstrlen", 3, "Get the length of the value of a hash field", "3.2.0", cmdHStrLen, nil, "readonly", "fast"),
		hashSpec("hscan", -3, "Incrementally iterate hash fields and associated values", "2.8.0", cmdHScan,
			[]string{"nondeterministic_output"}, "readonly"),
		hashSpec("hrandfield", -2, "Get one or multiple random fields from a hash", "6.2.0", cmdHRandField,
			[]string{"nondeterministic_output"}, "readonly"),
	)
}

// hashSpec builds the spec of a hash command whose only key is argument 1.
func hashSpec(name string, arity int, summary, since string, h engine.Handler, tips []string, flags ...string) *command.Spec {
	return engine.Handle(&command.Spec{Name: name, Arity: arity, Flags: flags, First: 1, Last: 1, Step: 1,
		Categories: engine.TypeCategories(flags, "hash"), Tips: tips, Group: "hash", Since: since, Summary: summary,
		Exec: command.Shard}, h)
}

// readableHash looks key up for a read: its entry (nil when missing), or
// false after replying WRONGTYPE.
func readableHash(c *engine.Call, key []byte) (*keyspace.Entry, bool) {
	return c.OfKind(c.Lookup(key), keyspace.KindHash)
}

// writableHash returns key's hash for a write, creating an empty one when
// missing (Redis's hashTypeLookupWriteOrCreate; the caller then stores at
// least one field), or false after replying WRONGTYPE.
func writableHash(c *engine.Call, key []byte) (*hash.Hash, bool) {
	e := c.LookupWrite(key)
	if e == nil {
		e = c.Create(key, keyspace.KindHash)
		v := &engine.HashValue{}
		e.Obj = v
		return &v.Hash, true
	}
	if e.Kind != keyspace.KindHash {
		c.W.Error(engine.ErrWrongType)
		return nil, false
	}
	return engine.HashOf(e), true
}

// cmdHSet implements HSET (the number of new fields) and HMSET (+OK).
func cmdHSet(c *engine.Call) {
	if len(c.Args)%2 == 1 {
		c.W.Error("ERR wrong number of arguments for '" + c.Cmd.Spec.Name + "' command")
		return
	}
	h, ok := writableHash(c, c.Args[1])
	if !ok {
		return
	}
	lim := c.HashLimits()
	var added int64
	for i := 2; i < len(c.Args); i += 2 {
		if h.Set(c.Args[i], c.Args[i+1], lim) {
			added++
		}
	}
	c.Notify(engine.NotifyHash, "hset", c.Args[1])
	if c.Cmd.Spec.Name == "hmset" {
		c.W.OK()
	} else {
		c.W.Int(added)
	}
}

func cmdHSetNX(c *engine.Call) {
	h, ok := writableHash(c, c.Args[1])
	if !ok {
		return
	}
	if h.Has(c.Args[2]) {
		c.Unchanged()
		c.W.Int(0)
		return
	}
	h.Set(c.Args[2], c.Args[3], c.HashLimits())
	c.Notify(engine.NotifyHash, "hset", c.Args[1])
	c.W.Int(1)
}

func cmdHGet(c *engine.Call) {
	e, ok := readableHash(c, c.Args[1])
	if !ok {
		return
	}
	if e != nil {
		if v, ok := engine.HashOf(e).Get(c.Args[2]); ok {
			c.W.BulkString(v)
			return
		}
	}
	c.W.Null()
}

// cmdHMGet replies one value or null per field (all null for a missing
// key).
func cmdHMGet(c *engine.Call) {
	e, ok := readableHash(c, c.Args[1])
	if !ok {
		return
	}
	fields := c.Args[2:]
	c.W.Array(len(fields))
	for _, f := range fields {
		if e != nil {
			if v, ok := engine.HashOf(e).Get(f); ok {
				c.W.BulkString(v)
				continue
			}
		}
		c.W.Null()
	}
}

func cmdHGetAll(c *engine.Call) { hashDump(c, true, true) }
func cmdHKeys(c *engine.Call)   { hashDump(c, true, false) }
func cmdHVals(c *engine.Call)   { hashDump(c, false, true) }

// hashDump writes every field and/or value: a map for HGETALL (a flat
// array in RESP2), an array for HKEYS and HVALS.
func hashDump(c *engine.Call, fields, values bool) {
	e, ok := readableHash(c, c.Args[1])
	if !ok {
		return
	}
	n := 0
	if e != nil {
		n = engine.HashOf(e).Len()
	}
	if fields && values {
		c.W.Map(n)
	} else {
		c.W.Array(n)
	}
	if e == nil {
		return
	}
	engine.HashOf(e).Each(func(f, v string) bool {
		if fields {
			c.W.BulkString(f)
		}
		if values {
			c.W.BulkString(v)
		}
		return true
	})
}

// cmdHDel implements HDEL key field...: the number removed; deleting the
// last field deletes the key.
func cmdHDel(c *engine.Call) {
	key := c.Args[1]
	e := c.LookupWrite(key)
	if e == nil {
		c.W.Int(0)
		return
	}
	if e.Kind != keyspace.KindHash {
		c.W.Error(engine.ErrWrongType)
		return
	}
	h := engine.HashOf(e)
	c.RemoveMembers(key, engine.NotifyHash, "hdel", h.Delete, h.Len)
}

func cmdHExists(c *engine.Call) {
	e, ok := readableHash(c, c.Args[1])
	if !ok {
		return
	}
	if e != nil && engine.HashOf(e).Has(c.Args[2]) {
		c.W.Int(1)
	} else {
		c.W.Int(0)
	}
}

func cmdHLen(c *engine.Call) {
	e, ok := readableHash(c, c.Args[1])
	if !ok {
		return
	}
	if e == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(engine.HashOf(e).Len()))
}

func cmdHStrLen(c *engine.Call) {
	e, ok := readableHash(c, c.Args[1])
	if !ok {
		return
	}
	if e != nil {
		if v, ok := engine.HashOf(e).Get(c.Args[2]); ok {
			c.W.Int(int64(len(v)))
			return
		}
	}
	c.W.Int(0)
}

// cmdHIncrBy implements HINCRBY key field increment.
func cmdHIncrBy(c *engine.Call) {
	incr, ok := c.IntArg(c.Args[3])
	if !ok {
		return
	}
	h, ok := writableHash(c, c.Args[1])
	if !ok {
		return
	}
	var cur int64
	if v, ok := h.Get(c.Args[2]); ok {
		if cur, ok = engine.ParseInt([]byte(v)); !ok {
			c.W.Error("ERR hash value is not an integer")
			return
		}
	}
	if engine.AddOverflows(cur, incr) {
		c.W.Error(engine.ErrOverflow)
		return
	}
	cur += incr
	var tmp [20]byte
	h.SetString(c.Args[2], string(strconv.AppendInt(tmp[:0], cur, 10)), c.HashLimits())
	c.Notify(engine.NotifyHash, "hincrby", c.Args[1])
	c.W.Int(cur)
}

// cmdHIncrByFloat implements HINCRBYFLOAT key field increment with the
// long double arithmetic INCRBYFLOAT uses (actors/engine/types/ld).
func cmdHIncrByFloat(c *engine.Call) {
	incr, st := ld.Parse(c.Args[3])
	if st == ld.Invalid {
		c.W.Error(engine.ErrNotFloat)
		return
	}
	if st == ld.Infinite {
		c.W.Error("ERR value is NaN or Infinity")
		return
	}
	h, ok := writableHash(c, c.Args[1])
	if !ok {
		return
	}
	cur, curSt := ld.FromInt64(0), ld.OK
	if v, ok := h.Get(c.Args[2]); ok {
		cur, curSt = ld.Parse([]byte(v))
		if curSt == ld.Invalid {
			c.W.Error("ERR hash value is not a float")
			return
		}
	}
	sum, ok := c.SumLD(cur, curSt, incr, st)
	if !ok {
		return
	}
	out := ld.AppendHuman(nil, sum)
	h.SetString(c.Args[2], string(out), c.HashLimits())
	c.Notify(engine.NotifyHash, "hincrbyfloat", c.Args[1])
	c.W.Bulk(out)
	if c.Replicating() {
		c.Propagate(engine.CmdHSET, c.Args[1], c.Args[2], out)
	}
}

// cmdHScan implements HSCAN key cursor [MATCH pattern] [COUNT count]. As
// in Redis the cursor is checked first, then the key, then the options; a
// compact hash is returned whole with cursor 0.
func cmdHScan(c *engine.Call) {
	cursor, e, o, ok := engine.StartCollScan(c, func(k []byte) (*keyspace.Entry, bool) { return readableHash(c, k) })
	if !ok {
		return
	}
	var out []string
	// Redis counts fields and values alike against COUNT.
	next := engine.HashOf(e).Scan(cursor, o.Count/2+o.Count%2, func(f, v string) {
		if o.Pattern == nil || slots.MatchKey(o.Pattern, f, false) {
			out = append(out, f, v)
		}
	})
	c.WriteScanReply(next, out)
}

// cmdHRandField implements HRANDFIELD key [count [WITHVALUES]]. A
// negative count may repeat fields and returns exactly -count of them; a
// positive one returns distinct fields, at most the hash's size. With
// WITHVALUES, RESP3 gets [field, value] pairs, RESP2 a flat array.
func cmdHRandField(c *engine.Call) {
	if len(c.Args) < 3 {
		e, ok := readableHash(c, c.Args[1])
		if !ok {
			return
		}
		if e == nil {
			c.W.Null()
			return
		}
		f, _ := engine.HashOf(e).Random(c.S.Rand())
		c.W.BulkString(f)
		return
	}
	n, withValues, ok := c.ParseRandWith("withvalues")
	if !ok {
		return
	}
	e, ok := readableHash(c, c.Args[1])
	if !ok {
		return
	}
	if e == nil || n == 0 {
		c.W.Array(0)
		return
	}
	h := engine.HashOf(e)
	resp3 := c.W.Proto >= 3
	emit := func(f, v string) {
		if withValues && resp3 {
			c.W.Array(2)
		}
		c.W.BulkString(f)
		if withValues {
			c.W.BulkString(v)
		}
	}
	header := func(k int64) {
		if withValues && !resp3 {
			k *= 2
		}
		c.W.Array(int(k))
	}
	size := int64(h.Len())
	switch {
	case n < 0 || n == 1:
		// Repeats allowed: draw every pick independently.
		k, ok := c.RandRepeats(n)
		if !ok {
			return
		}
		header(k)
		for ; k > 0; k-- {
			emit(h.Random(c.S.Rand()))
		}
	case n >= size:
		header(size)
		h.Each(func(f, v string) bool { emit(f, v); return true })
	default:
		header(n)
		h.RandomDistinct(c.S.Rand(), int(n), emit)
	}
}
