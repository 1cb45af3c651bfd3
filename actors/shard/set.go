package shard

// Set commands, part 1: the value helpers shared by every set command, the
// OBJECT ENCODING / memory hooks, and the single-key commands (SADD, SREM,
// SISMEMBER, SMISMEMBER, SCARD, SMOVE). The value is an actors/engine/types/set.Set
// in Entry.Obj; it keeps Redis 7.0's intset/hashtable encoding rules so
// SMEMBERS of a small integer set comes out sorted as it does from Redis.

import (
	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/actors/engine/types/set"
	"github.com/slotd/slotd/netio/command"
)

func init() {
	command.Register(
		setSpec("sadd", -3, "Add one or more members to a set", "1.0.0", cmdSAdd, "write", "denyoom", "fast"),
		setSpec("srem", -3, "Remove one or more members from a set", "1.0.0", cmdSRem, "write", "fast"),
		setSpec("sismember", 3, "Determine if a given value is a member of a set", "1.0.0", cmdSIsMember,
			"readonly", "fast"),
		setSpec("smismember", -3, "Returns the membership associated with the given elements for a set", "6.2.0",
			cmdSMIsMember, "readonly", "fast"),
		setSpec("scard", 2, "Get the number of members in a set", "1.0.0", cmdSCard, "readonly", "fast"),
		szKeys(setSpec("smove", 4, "Move a member from one set to another", "1.0.0", cmdSMove, "write", "fast"),
			1, 2, 1),
	)
}

// setSpec builds the spec of a set command whose only key is argument 1.
// ACL categories follow from the flags as Redis derives them.
func setSpec(name string, arity int, summary, since string, h Handler, flags ...string) *command.Spec {
	return szSpec("set", "set", name, arity, summary, since, h, flags...)
}

// szSpec is setSpec/zsetSpec for a command group and ACL category.
func szSpec(group, cat, name string, arity int, summary, since string, h Handler, flags ...string) *command.Spec {
	return &command.Spec{Name: name, Arity: arity, Flags: flags, First: 1, Last: 1, Step: 1,
		Group: group, Since: since, Summary: summary, Exec: command.Shard, Handler: h,
		Categories: typeCategories(flags, cat)}
}

// szKeys overrides a spec's key positions.
func szKeys(s *command.Spec, first, last, step int) *command.Spec {
	s.First, s.Last, s.Step = first, last, step
	return s
}

// szTips adds command tips.
func szTips(s *command.Spec, tips ...string) *command.Spec {
	s.Tips = append(s.Tips, tips...)
	return s
}

// setEncoding is OBJECT ENCODING for a set entry.
func setEncoding(e *keyspace.Entry) string {
	if s, ok := e.Obj.(*set.Set); ok {
		return s.Encoding()
	}
	return "hashtable"
}

// setMemory estimates the bytes a set value takes in Redis (for MEMORY
// USAGE): the intset blob, or the dict with its entries and member strings.
func setMemory(e *keyspace.Entry) int64 {
	s, ok := e.Obj.(*set.Set)
	if !ok {
		return 0
	}
	const robj = 16
	if s.IsIntset() {
		return robj + 8 + int64(s.IntWidth()*s.Len())
	}
	// dict header, bucket array, one 24-byte entry and one sds (header +
	// bytes + NUL, rounded to the allocator's 8-byte classes) per member.
	n := int64(s.Len())
	return robj + 56 + 8*int64(s.Buckets()) + n*24 + int64(s.MemberBytes()) + n*(3+1+4)
}

func (c *Call) maxIntset() int {
	return int(min(c.S.group.SetMaxIntsetEntries.Load(), 1<<30))
}

// setOf returns e's set (nil for a missing key); ok is false, after writing
// WRONGTYPE, when the key holds another type.
func (c *Call) setOf(e *keyspace.Entry) (*set.Set, bool) {
	if e == nil {
		return nil, true
	}
	if e.Kind != keyspace.KindSet {
		c.W.Error(ErrWrongType)
		return nil, false
	}
	return e.Obj.(*set.Set), true
}

// setRead looks key up for reading (keyspace hits/misses counted).
func (c *Call) setRead(key []byte) (*set.Set, bool) { return c.setOf(c.Lookup(key)) }

// setWrite looks key up for writing.
func (c *Call) setWrite(key []byte) (*keyspace.Entry, *set.Set, bool) {
	e := c.LookupWrite(key)
	s, ok := c.setOf(e)
	return e, s, ok
}

// szStore makes key hold obj of kind, replacing whatever value and TTL it
// had (Redis's setKey).
func (c *Call) szStore(key []byte, kind keyspace.Kind, obj any) {
	e := c.LookupWrite(key)
	if e == nil {
		e = c.Create(key, kind)
	} else {
		e.Kind, e.Str = kind, nil
		if e.Expire != 0 {
			c.SetExpire(e, 0)
		}
	}
	e.Obj = obj
}

// storeSetResult stores a SINTERSTORE/SUNIONSTORE/SDIFFSTORE result and
// replies with its size; an empty result deletes dst.
func (c *Call) storeSetResult(dst []byte, s *set.Set) {
	if s.Len() == 0 {
		c.szDeleteDst(dst)
		c.W.Int(0)
		return
	}
	c.szStoreDst(dst, keyspace.KindSet, s)
	c.W.Int(int64(s.Len()))
}

// szStoreDst is szStore for the destination of a STORE command: only the
// destination counts as modified (for WATCH and blocked clients), not the
// source keys that the command also names.
func (c *Call) szStoreDst(dst []byte, kind keyspace.Kind, obj any) {
	c.Unchanged()
	c.szStore(dst, kind, obj)
	c.Signal(dst)
}

// szDeleteDst deletes the destination of a STORE command whose result is
// empty, signalling it only if it existed.
func (c *Call) szDeleteDst(dst []byte) {
	c.Unchanged()
	if c.Delete(dst) {
		c.Signal(dst)
	}
}

func cmdSAdd(c *Call) {
	key := c.Args[1]
	e, s, ok := c.setWrite(key)
	if !ok {
		return
	}
	if e == nil {
		s = set.NewFor(c.Args[2])
		e = c.Create(key, keyspace.KindSet)
		e.Obj = s
	}
	max := c.maxIntset()
	added := int64(0)
	for _, m := range c.Args[2:] {
		if s.Add(m, max) {
			added++
		}
	}
	if added == 0 {
		c.Unchanged()
	}
	c.W.Int(added)
}

func cmdSRem(c *Call) {
	key := c.Args[1]
	e, s, ok := c.setWrite(key)
	if !ok {
		return
	}
	if e == nil {
		c.Unchanged()
		c.W.Int(0)
		return
	}
	c.removeMembers(key, s.Remove, s.Len)
}

func cmdSIsMember(c *Call) {
	s, ok := c.setRead(c.Args[1])
	if !ok {
		return
	}
	c.writeIsMember(s, c.Args[2])
}

// cmdSMIsMember treats a missing key as an empty set.
func cmdSMIsMember(c *Call) {
	s, ok := c.setRead(c.Args[1])
	if !ok {
		return
	}
	c.W.Array(len(c.Args) - 2)
	for _, m := range c.Args[2:] {
		c.writeIsMember(s, m)
	}
}

// writeIsMember writes 1 when set s (nil: a missing key) has member m, else 0.
func (c *Call) writeIsMember(s *set.Set, m []byte) {
	if s != nil && s.Has(m) {
		c.W.Int(1)
	} else {
		c.W.Int(0)
	}
}

func cmdSCard(c *Call) {
	s, ok := c.setRead(c.Args[1])
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
func cmdSMove(c *Call) {
	c.Unchanged() // the keys that changed are signalled below
	srcKey, dstKey, m := c.Args[1], c.Args[2], c.Args[3]
	srcE := c.LookupWrite(srcKey)
	dstE := c.LookupWrite(dstKey)
	if srcE == nil {
		c.W.Int(0)
		return
	}
	src, ok := c.setOf(srcE)
	if !ok {
		return
	}
	dst, ok := c.setOf(dstE)
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
	if src.Len() == 0 {
		c.Delete(srcKey)
	}
	c.Signal(srcKey)
	if dstE == nil {
		dst = set.NewFor(m)
		c.Create(dstKey, keyspace.KindSet).Obj = dst
	}
	if dst.Add(m, c.maxIntset()) {
		c.Signal(dstKey)
	}
	c.W.Int(1)
}
