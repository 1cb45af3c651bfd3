package engine

import (
	"bytes"
	"math"

	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/actors/engine/types/set"
	"github.com/slotd/slotd/netio/command"
)

// intArg parses a signed integer argument or replies ErrNotInt.
func (c *Call) IntArg(arg []byte) (int64, bool) {
	n, ok := ParseInt(arg)
	if !ok {
		c.W.Error(ErrNotInt)
	}
	return n, ok
}

// intArgs parses two signed integer arguments (a range's start and stop),
// replying ErrNotInt when either is not one.
func (c *Call) IntArgs(a, b []byte) (int64, int64, bool) {
	x, ok := c.IntArg(a)
	if !ok {
		return 0, 0, false
	}
	y, ok := c.IntArg(b)
	return x, y, ok
}

// normRange turns Redis start/stop arguments (negative from the end) into
// a range [start, end] inside a list or sorted set of n elements; ok is
// false when it is empty.
func NormRange(start, end, n int64) (int64, int64, bool) {
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	if start < 0 {
		start = 0
	}
	if start > end || start >= n {
		return 0, 0, false
	}
	if end >= n {
		end = n - 1
	}
	return start, end, true
}

// cstr is how C code sees an argument: up to its first NUL byte. Redis
// compares option names as C strings, so "nx\x00junk" is NX.
func Cstr(a []byte) []byte {
	for i, b := range a {
		if b == 0 {
			return a[:i]
		}
	}
	return a
}

// eqFold compares an argument with a lower-case ASCII word.
func EqFold(a []byte, lower string) bool {
	if len(a) != len(lower) {
		return false
	}
	for i := 0; i < len(a); i++ {
		c := a[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// typeCategories derives the ACL categories of a data-type command from its
// flags, as Redis does: read/write, the type, admin+dangerous, fast or slow.
func TypeCategories(flags []string, typ string) []string {
	var cats []string
	fast, admin := false, false
	for _, f := range flags {
		switch f {
		case "write":
			cats = append(cats, "write")
		case "readonly":
			cats = append(cats, "read")
		case "fast":
			fast = true
		case "admin":
			admin = true
		}
	}
	cats = append(cats, typ)
	if admin {
		cats = append(cats, "admin")
	}
	if fast {
		cats = append(cats, "fast")
	} else {
		cats = append(cats, "slow")
	}
	if admin {
		cats = append(cats, "dangerous")
	}
	return cats
}

// addOverflows reports whether v+by leaves the int64 range (INCRBY's and
// HINCRBY's "increment or decrement would overflow").
func AddOverflows(v, by int64) bool {
	return (by < 0 && v < 0 && by < -1<<63-v) || (by > 0 && v > 0 && by > MaxInt64-v)
}

// parseCursor accepts what Redis's strtoul-based cursor parsing accepts: an
// optional sign ("-1" wraps to 2^64-1), decimal digits, nothing else; an
// empty string is cursor 0, leading white space is refused, and a NUL byte
// ends the number as it ends a C string.
func ParseCursor(b []byte) (uint64, bool) {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	if len(b) == 0 {
		return 0, true
	}
	neg := false
	if b[0] == '+' || b[0] == '-' {
		neg = b[0] == '-'
		b = b[1:]
		if len(b) == 0 {
			return 0, false
		}
	}
	var v uint64
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		d := uint64(ch - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false // ERANGE
		}
		v = v*10 + d
	}
	if neg {
		v = -v
	}
	return v, true
}

// keySpec fills in the fields every generic key command shares.
func KeySpec(s *command.Spec) *command.Spec {
	if s.Group == "" {
		s.Group = "generic"
	}
	s.Exec = command.Shard
	return s
}

// numkeysSpec marks a spec whose keys follow a numkeys argument at index
// at: COMMAND reports no fixed key positions, and dispatch asks keysOf. A
// bad numkeys declares no keys (as Redis's key extraction does): the
// command then runs without a slot and its handler replies the error, so
// inside MULTI it is queued and fails in EXEC's reply, as in Redis.
func NumkeysSpec(s *command.Spec, at int, check func(args [][]byte) (int, string)) *command.Spec {
	s.First, s.Last, s.Step = 0, 0, 0
	s.Keys = func(args [][]byte) ([]int, error) {
		n, msg := check(args)
		if msg != "" {
			return nil, nil
		}
		idx := make([]int, n)
		for i := range idx {
			idx[i] = at + 1 + i
		}
		return idx, nil
	}
	return s
}

// szSpec is setSpec/zsetSpec for a command group and ACL category.
func SzSpec(group, cat, name string, arity int, summary, since string, h Handler, flags ...string) *command.Spec {
	return Handle(&command.Spec{Name: name, Arity: arity, Flags: flags, First: 1, Last: 1, Step: 1,
		Group: group, Since: since, Summary: summary, Exec: command.Shard, Categories: TypeCategories(flags, cat)}, h)
}

// szKeys overrides a spec's key positions.
func SzKeys(s *command.Spec, first, last, step int) *command.Spec {
	s.First, s.Last, s.Step = first, last, step
	return s
}

// szTips adds command tips.
func SzTips(s *command.Spec, tips ...string) *command.Spec {
	s.Tips = append(s.Tips, tips...)
	return s
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
// replies with its size; an empty result deletes dst. event is the
// command's keyspace event.
func (c *Call) StoreSetResult(dst []byte, s *set.Set, event string) {
	if s.Len() == 0 {
		c.SzDeleteDst(dst)
		c.W.Int(0)
		return
	}
	c.SzStoreDst(dst, keyspace.KindSet, s, NotifySet, event)
	c.W.Int(int64(s.Len()))
}

// szStoreDst is szStore for the destination of a STORE command: only the
// destination counts as modified (for WATCH and blocked clients), not the
// source keys that the command also names. It fires event (of class) on
// dst.
func (c *Call) SzStoreDst(dst []byte, kind keyspace.Kind, obj any, class int64, event string) {
	c.Unchanged()
	c.szStore(dst, kind, obj)
	c.Signal(dst)
	c.Notify(class, event, dst)
}

// szDeleteDst deletes the destination of a STORE command whose result is
// empty, signalling it (and firing 'del') only if it existed.
func (c *Call) SzDeleteDst(dst []byte) {
	c.Unchanged()
	if c.Delete(dst) {
		c.Signal(dst)
		c.Notify(NotifyGeneric, "del", dst)
	}
}

const MaxInt64 = 1<<63 - 1
