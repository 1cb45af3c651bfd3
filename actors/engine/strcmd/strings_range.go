package strcmd

import (
	"slices"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/netio/command"
)

// Byte-range string commands: APPEND, STRLEN, GETRANGE (and its old name
// SUBSTR), SETRANGE.

func registerStringsRange() {
	command.Register(
		strSpec("append", 3, "Append a value to a key", "2.0.0", cmdAppend, "write", "denyoom", "fast"),
		strSpec("strlen", 2, "Get the length of the value stored in a key", "2.2.0", cmdStrlen,
			"readonly", "fast"),
		strSpec("getrange", 4, "Get a substring of the string stored at a key", "2.4.0", cmdGetRange,
			"readonly"),
		strSpec("substr", 4, "Get a substring of the string stored at a key", "1.0.0", cmdGetRange, "readonly"),
		strSpec("setrange", 4, "Overwrite part of a string at key starting at the specified offset", "2.2.0",
			cmdSetRange, "write", "denyoom"),
	)
}

const errStringTooLong = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"

// tooLong reports (and replies) whether a string of size+extra bytes would
// exceed proto-max-bulk-len, overflow included.
func tooLong(c *engine.Call, size, extra int64) bool {
	total := int64(uint64(size) + uint64(extra))
	if total > maxStringLen(c) || total < size || total < extra {
		c.W.Error(errStringTooLong)
		return true
	}
	return false
}

// cmdAppend grows the value in place; Go's append doubles the buffer, so a
// series of appends costs amortised O(appended bytes).
func cmdAppend(c *engine.Call) {
	key, val := c.Args[1], c.Args[2]
	e := c.LookupWrite(key)
	if e == nil {
		e = c.Create(key, keyspace.KindString)
		e.Str = append(make([]byte, 0, len(val)), val...)
		c.Notify(engine.NotifyString, "append", key)
		c.W.Int(int64(len(e.Str)))
		return
	}
	if e.Kind != keyspace.KindString {
		c.W.Error(engine.ErrWrongType)
		return
	}
	if tooLong(c, int64(len(e.Str)), int64(len(val))) {
		return
	}
	e.Str = append(e.Str, val...)
	c.Notify(engine.NotifyString, "append", key)
	c.W.Int(int64(len(e.Str)))
}

// readableString looks key up for a read: the entry (nil when missing), or
// false after replying WRONGTYPE.
func readableString(c *engine.Call, key []byte) (*keyspace.Entry, bool) {
	return c.OfKind(c.Lookup(key), keyspace.KindString)
}

func cmdStrlen(c *engine.Call) {
	e, ok := readableString(c, c.Args[1])
	switch {
	case !ok:
	case e == nil:
		c.W.Int(0)
	default:
		c.W.Int(int64(len(e.Str)))
	}
}

// clampRange resolves inclusive start/end indexes (negative from the end)
// against n bytes or bits as GETRANGE, BITCOUNT and BITPOS do. Unlike
// LRANGE's normRange both ends are clamped into the string, so an end far
// before the start of it still selects the first element; ok is false when
// nothing is selected.
func clampRange(start, end, n int64) (int64, int64, bool) {
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	start = max(start, 0)
	end = max(end, 0)
	if end >= n {
		end = n - 1
	}
	return start, end, start <= end
}

var emptyBulk = []byte{}

// cmdGetRange implements GETRANGE key start end with inclusive, possibly
// negative (from the end) indexes clamped to the string.
func cmdGetRange(c *engine.Call) {
	start, end, ok := c.IntArgs(c.Args[2], c.Args[3])
	if !ok {
		return
	}
	e, ok := readableString(c, c.Args[1])
	if !ok {
		return
	}
	if e == nil {
		c.W.Bulk(emptyBulk)
		return
	}
	n := int64(len(e.Str))
	// Both negative and crossed: empty, whatever the length (Redis 7.0).
	if start < 0 && end < 0 && start > end {
		c.W.Bulk(emptyBulk)
		return
	}
	start, end, ok = clampRange(start, end, n)
	if !ok || n == 0 {
		c.W.Bulk(emptyBulk)
		return
	}
	c.W.Bulk(e.Str[start : end+1])
}

// cmdSetRange implements SETRANGE key offset value, zero-padding the string
// up to offset.
func cmdSetRange(c *engine.Call) {
	key, val := c.Args[1], c.Args[3]
	off, ok := c.IntArg(c.Args[2])
	if !ok {
		return
	}
	if off < 0 {
		c.W.Error("ERR offset is out of range")
		return
	}
	e := c.LookupWrite(key)
	if e == nil {
		if len(val) == 0 {
			c.Unchanged()
			c.W.Int(0)
			return
		}
		if tooLong(c, off, int64(len(val))) {
			return
		}
		e = c.Create(key, keyspace.KindString)
		e.Str = make([]byte, int(off)+len(val))
		copy(e.Str[off:], val)
		c.Notify(engine.NotifyString, "setrange", key)
		c.W.Int(int64(len(e.Str)))
		return
	}
	if e.Kind != keyspace.KindString {
		c.W.Error(engine.ErrWrongType)
		return
	}
	if len(val) == 0 {
		c.Unchanged()
		c.W.Int(int64(len(e.Str)))
		return
	}
	if tooLong(c, off, int64(len(val))) {
		return
	}
	if need := int(off) + len(val); need > len(e.Str) {
		old := len(e.Str)
		e.Str = slices.Grow(e.Str, need-old)[:need]
		clear(e.Str[old:]) // capacity beyond len may hold stale bytes
	}
	copy(e.Str[off:], val)
	c.Notify(engine.NotifyString, "setrange", key)
	c.W.Int(int64(len(e.Str)))
}
