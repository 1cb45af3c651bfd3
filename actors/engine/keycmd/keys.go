package keycmd

// Generic key-space commands whose keys all live in one slot: DEL, UNLINK,
// EXISTS, TOUCH, TYPE, RENAME, RENAMENX and COPY. Multi-key forms reach
// here only when every key hashes to the same slot (dispatch answers
// CROSSSLOT otherwise), so each command runs entirely inside one keyspace.

import (
	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/netio/command"
)

var multiKeyTips = []string{"request_policy:multi_shard", "response_policy:agg_sum"}

func registerKeys() {
	command.Register(
		engine.KeySpec(engine.Handle(&command.Spec{Name: "del", Arity: -2, Flags: []string{"write"}, First: 1, Last: -1, Step: 1,
			Categories: []string{"keyspace", "write", "slow"}, Tips: multiKeyTips, Since: "1.0.0",
			Summary: "Delete a key"}, cmdDel)),
		engine.KeySpec(engine.Handle(&command.Spec{Name: "unlink", Arity: -2, Flags: []string{"write", "fast"}, First: 1, Last: -1, Step: 1,
			Categories: []string{"keyspace", "write", "fast"}, Tips: multiKeyTips, Since: "4.0.0",
			Summary: "Delete a key asynchronously in another thread. Otherwise it is just as DEL, but non blocking."}, cmdDel)),
		engine.KeySpec(engine.Handle(&command.Spec{Name: "exists", Arity: -2, Flags: []string{"readonly", "fast"}, First: 1, Last: -1, Step: 1,
			Categories: []string{"keyspace", "read", "fast"}, Tips: multiKeyTips, Since: "1.0.0",
			Summary: "Determine if a key exists"}, cmdExists)),
		engine.KeySpec(engine.Handle(&command.Spec{Name: "touch", Arity: -2, Flags: []string{"readonly", "fast"}, First: 1, Last: -1, Step: 1,
			Categories: []string{"keyspace", "read", "fast"}, Tips: multiKeyTips, Since: "3.2.1",
			Summary: "Alters the last access time of a key(s). Returns the number of existing keys specified."}, cmdExists)),
		engine.KeySpec(engine.Handle(&command.Spec{Name: "type", Arity: 2, Flags: []string{"readonly", "fast"}, First: 1, Last: 1, Step: 1,
			Categories: []string{"keyspace", "read", "fast"}, Since: "1.0.0",
			Summary: "Determine the type stored at key"}, cmdType)),
		engine.KeySpec(engine.Handle(&command.Spec{Name: "rename", Arity: 3, Flags: []string{"write"}, First: 1, Last: 2, Step: 1,
			Categories: []string{"keyspace", "write", "slow"}, Since: "1.0.0",
			Summary: "Rename a key"}, cmdRename)),
		engine.KeySpec(engine.Handle(&command.Spec{Name: "renamenx", Arity: 3, Flags: []string{"write", "fast"}, First: 1, Last: 2, Step: 1,
			Categories: []string{"keyspace", "write", "fast"}, Since: "1.0.0",
			Summary: "Rename a key, only if the new key does not exist"}, cmdRename)),
		engine.KeySpec(engine.Handle(&command.Spec{Name: "copy", Arity: -3, Flags: []string{"write", "denyoom"}, First: 1, Last: 2, Step: 1,
			Categories: []string{"keyspace", "write", "slow"}, Since: "6.2.0",
			Summary: "Copy a key"}, cmdCopy)),
	)
}

// Cloner is implemented by the values of non-string kinds (Entry.Obj) so
// that COPY can duplicate them; the copy must share no mutable state with
// the original.
type Cloner interface {
	Clone() any
}

// cmdDel implements DEL and UNLINK (freeing is O(1) here either way).
func cmdDel(c *engine.Call) {
	n := int64(0)
	for _, k := range c.Args[1:] {
		if c.Delete(k) {
			n++
		}
	}
	if n == 0 {
		c.Unchanged() // nothing to signal, count as a change, or propagate
	}
	c.W.Int(n)
}

// cmdExists implements EXISTS and TOUCH: a key named twice counts twice.
func cmdExists(c *engine.Call) {
	n := int64(0)
	for _, k := range c.Args[1:] {
		if c.Lookup(k) != nil {
			n++
		}
	}
	c.W.Int(n)
}

func cmdType(c *engine.Call) {
	e := c.Lookup(c.Args[1])
	if e == nil {
		c.W.Simple("none")
		return
	}
	c.W.Simple(e.Kind.String())
}

// cmdRename implements RENAME and RENAMENX. The value and TTL move to the
// new name; an existing destination (RENAME only) is replaced.
func cmdRename(c *engine.Call) {
	nx := len(c.Args[0]) == len("renamenx")
	src, dst := c.Args[1], c.Args[2]
	e := c.LookupWrite(src)
	if e == nil {
		c.W.Error("ERR no such key")
		return
	}
	if string(src) == string(dst) {
		c.Unchanged()
		if nx {
			c.W.Int(0)
		} else {
			c.W.OK()
		}
		return
	}
	if c.LookupWrite(dst) != nil {
		if nx {
			c.Unchanged()
			c.W.Int(0)
			return
		}
		c.Delete(dst)
	}
	kind, str, obj, expire := e.Kind, e.Str, e.Obj, e.Expire
	c.Delete(src)
	ne := c.Create(dst, kind)
	ne.Str, ne.Obj = str, obj
	if expire != 0 {
		c.SetExpire(ne, expire)
	}
	if nx {
		c.W.Int(1)
	} else {
		c.W.OK()
	}
}

// keysMaxDB is the database count Redis reports by default ("databases
// 16"); only db 0 holds data here, as on a Redis Cluster node.
const keysMaxDB = 16

// cmdCopy implements COPY source destination [DB db] [REPLACE].
func cmdCopy(c *engine.Call) {
	c.Unchanged() // only a successful copy signals, and only its destination
	replace := false
	db := int64(0)
	for i := 3; i < len(c.Args); i++ {
		switch a := c.Args[i]; {
		case engine.EqFold(a, "replace"):
			replace = true
		case engine.EqFold(a, "db") && i+1 < len(c.Args):
			v, ok := engine.ParseInt(c.Args[i+1])
			if !ok {
				c.W.Error(engine.ErrNotInt)
				return
			}
			if v != int64(int32(v)) {
				c.W.Error("ERR value is out of range, value must between -2147483648 and 2147483647")
				return
			}
			if v < 0 || v >= keysMaxDB {
				c.W.Error("ERR DB index is out of range")
				return
			}
			db = v
			i++
		default:
			c.W.Error(engine.ErrSyntax)
			return
		}
	}
	if db != 0 {
		// What a Redis Cluster node answers for any db but 0.
		c.W.Error("ERR Copying to another database is not allowed in cluster mode")
		return
	}
	src, dst := c.Args[1], c.Args[2]
	if string(src) == string(dst) {
		c.W.Error("ERR source and destination objects are the same")
		return
	}
	e := c.Lookup(src)
	if e == nil {
		c.W.Int(0)
		return
	}
	var obj any
	if e.Kind != keyspace.KindString {
		cl, ok := e.Obj.(Cloner)
		if !ok {
			c.W.Error("ERR COPY is not supported for values of type " + e.Kind.String())
			return
		}
		obj = cl.Clone()
	}
	if c.LookupWrite(dst) != nil {
		if !replace {
			c.W.Int(0)
			return
		}
		c.Delete(dst)
	}
	ne := c.Create(dst, e.Kind)
	if e.Kind == keyspace.KindString {
		ne.Str = append(make([]byte, 0, len(e.Str)), e.Str...)
	} else {
		ne.Obj = obj
	}
	if e.Expire != 0 {
		c.SetExpire(ne, e.Expire)
	}
	c.Signal(dst)
	c.W.Int(1)
}
