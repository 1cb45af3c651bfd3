package setcmd

// Set commands, part 1: the value helpers shared by every set command, the
// OBJECT ENCODING / memory hooks, and the single-key commands (SADD, SREM,
// SISMEMBER, SMISMEMBER, SCARD, SMOVE). The value is an actors/engine/types/set.Set
// in Entry.Obj; it keeps Redis 7.0's intset/hashtable encoding rules so
// SMEMBERS of a small integer set comes out sorted as it does from Redis.

import (
	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/actors/engine/types/set"
	"github.com/slotd/slotd/netio/command"
)

func registerSet() {
	command.Register(
		setSpec("sadd", -3, "Add one or more members to a set", "1.0.0", cmdSAdd, "write", "denyoom", "fast"),
		setSpec("srem", -3, "Remove one or more members from a set", "1.0.0", cmdSRem, "write", "fast"),
		setSpec("sismember", 3, "Determine if a given value is a member of a set", "1.0.0", cmdSIsMember,
			"readonly", "fast"),
		setSpec("smismember", -3, "Returns the membership associated with the given elements for a set", "6.2.0",
			cmdSMIsMember, "readonly", "fast"),
		setSpec("scard", 2, "Get the number of members in a set", "1.0.0", cmdSCard, "readonly", "fast"),
		engine.SzKeys(setSpec("smove", 4, "Move a member from one set to another", "1.0.0", cmdSMove, "write", "fast"),
			1, 2, 1),
	)
}

// setSpec builds the spec of a set command whose only key is argument 1.
// ACL categories follow from the flags as Redis derives them.
func setSpec(name string, arity int, summary, since string, h engine.Handler, flags ...string) *command.Spec {
	return engine.SzSpec("set", "set", name, arity, summary, since, h, flags...)
}

// setOf returns e's set (nil for a missing key); ok is false, after writing
// WRONGTYPE, when the key holds another type.
func setOf(c *engine.Call, e *keyspace.Entry) (*set.Set, bool) {
	if e == nil {
		return nil, true
	}
	if e.Kind != keyspace.KindSet {
		c.W.Error(engine.ErrWrongType)
		return nil, false
	}
	return e.Obj.(*set.Set), true
}

// setRead looks key up for reading (keyspace hits/misses counted).
func setRead(c *engine.Call, key []byte) (*set.Set, bool) { return setOf(c, c.Lookup(key)) }

// setWrite looks key up for writing.
func setWrite(c *engine.Call, key []byte) (*keyspace.Entry, *set.Set, bool) {
	e := c.LookupWrite(key)
	s, ok := setOf(c, e)
	return e, s, ok
}

func cmdSAdd(c *engine.Call) {
	key := c.Args[1]
	e, s, ok := setWrite(c, key)
	if !ok {
		return
	}
	if e == nil {
		s = set.NewFor(c.Args[2])
		e = c.Create(key, keyspace.KindSet)
		e.Obj = s
	}
	max := c.MaxIntset()
	added := int64(0)
	for _, m := range c.Args[2:] {
		if s.Add(m, max) {
			added++
		}
	}
	if added == 0 {
		c.Unchanged()
	} else {
		c.Notify(engine.NotifySet, "sadd", key)
	}
	c.W.Int(added)
}

func cmdSRem(c *engine.Call) {
	key := c.Args[1]
	e, s, ok := setWrite(c, key)
	if !ok {
		return
	}
	if e == nil {
		c.Unchanged()
		c.W.Int(0)
		return
	}
	c.RemoveMembers(key, engine.NotifySet, "srem", s.Remove, s.Len)
}

func cmdSIsMember(c *engine.Call) {
	s, ok := setRead(c, c.Args[1])
	if !ok {
		return
	}
	writeIsMember(c, s, c.Args[2])
}

// cmdSMIsMember treats a missing key as an empty set.
func cmdSMIsMember(c *engine.Call) {
	s, ok := setRead(c, c.Args[1])
	if !ok {
		return
	}
	c.W.Array(len(c.Args) - 2)
	for _, m := range c.Args[2:] {
		writeIsMember(c, s, m)
	}
}

// writeIsMember writes 1 when set s (nil: a missing key) has member m, else 0.
func writeIsMember(c *engine.Call, s *set.Set, m []byte) {
	if s != nil && s.Has(m) {
		c.W.Int(1)
	} else {
		c.W.Int(0)
	}
}

func cmdSCard(c *engine.Call) {
	s, ok := setRead(c, c.Args[1])
	if !ok {
		return
	}
	if s == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(s.Len()))
}

// cmdSMove implements SMOVE source destination member. As in Redis a
// missing source answers 0 before the destination's type is looked at, and
// moving within one key only reports membership.
func cmdSMove(c *engine.Call) {
	c.Unchanged() // the keys that changed are signalled below
	srcKey, dstKey, m := c.Args[1], c.Args[2], c.Args[3]
	srcE := c.LookupWrite(srcKey)
	dstE := c.LookupWrite(dstKey)
	if srcE == nil {
		c.W.Int(0)
		return
	}
	src, ok := setOf(c, srcE)
	if !ok {
		return
	}
	dst, ok := setOf(c, dstE)
	if !ok {
		return
	}
	if srcE == dstE {
		if src.Has(m) {
			c.W.Int(1)
		} else {
			c.W.Int(0)
		}
		return
	}
	if !src.Remove(m) {
		c.W.Int(0)
		return
	}
	c.Notify(engine.NotifySet, "srem", srcKey)
	if src.Len() == 0 {
		c.Delete(srcKey)
		c.Notify(engine.NotifyGeneric, "del", srcKey)
	}
	c.Signal(srcKey)
	if dstE == nil {
		dst = set.NewFor(m)
		c.Create(dstKey, keyspace.KindSet).Obj = dst
	}
	if dst.Add(m, c.MaxIntset()) {
		c.Signal(dstKey)
		c.Notify(engine.NotifySet, "sadd", dstKey)
	}
	c.W.Int(1)
}
