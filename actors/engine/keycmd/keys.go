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
			c.Notify(engine.NotifyGeneric, "del", k)
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
	c.Notify(engine.NotifyGeneric, "rename_from", src)
	c.Notify(engine.NotifyGeneric, "rename_to", dst)
	if nx {
		c.W.Int(1)
	} else {
		c.W.OK()
	}
}

// cmdCopy implements COPY source destination [DB db] [REPLACE].
func cmdCopy(c *engine.Call) {
	c.Unchanged() // only a successful copy signals, and only its destination
	replace := false
	db := c.DB()
	for i := 3; i < len(c.Args); i++ {
		switch a := c.Args[i]; {
		case engine.EqFold(a, "replace"):
			replace = true
		case engine.EqFold(a, "db") && i+1 < len(c.Args):
			v, msg := dbIndex(c.Args[i+1], "")
			if msg != "" {
				c.W.Error(msg)
				return
			}
			limit := c.S.Group().Databases()
			if c.S.Group().ClusterMode() {
				limit = engine.DefaultDatabases // a cluster node's databases setting
			}
			if v < 0 || v >= limit {
				c.W.Error(errDBRange)
				return
			}
			db = v
			i++
		default:
			c.W.Error(engine.ErrSyntax)
			return
		}
	}
	if c.S.Group().ClusterMode() && db != 0 {
		// A cluster node's reply for any db but 0 (it has a single one).
		c.W.Error("ERR Copying to another database is not allowed in cluster mode")
		return
	}
	src, dst := c.Args[1], c.Args[2]
	if db == c.DB() && string(src) == string(dst) {
		c.W.Error(errSameObject)
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
	kind, str, expire := e.Kind, e.Str, e.Expire
	copied := false
	c.InDB(db, func() {
		if c.LookupWrite(dst) != nil {
			if !replace {
				return
			}
			c.Delete(dst)
		}
		ne := c.Create(dst, kind)
		if kind == keyspace.KindString {
			ne.Str = append(make([]byte, 0, len(str)), str...)
		} else {
			ne.Obj = obj
		}
		if expire != 0 {
			c.SetExpire(ne, expire)
		}
		c.Signal(dst)
		c.Notify(engine.NotifyGeneric, "copy_to", dst)
		copied = true
	})
	if !copied {
		c.W.Int(0)
		return
	}
	c.W.Int(1)
}
