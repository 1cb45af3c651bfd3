package strcmd

import (
	"encoding/binary"
	"math/bits"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/netio/command"
)

// Bitmap commands: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP. A bitmap is a
// plain string value; bit 0 is the most significant bit of the first byte.
// Strings grow zero-padded when a bit past their end is written.

func registerBitmap() {
	bitop := bitSpec("bitop", -4, "Perform bitwise operations between strings", "2.6.0", cmdBitop,
		"write", "denyoom")
	bitop.First, bitop.Last = 2, -1
	command.Register(
		bitSpec("setbit", 4, "Sets or clears the bit at offset in the string value stored at key", "2.2.0",
			cmdSetbit, "write", "denyoom"),
		bitSpec("getbit", 3, "Returns the bit value at offset in the string value stored at key", "2.2.0",
			cmdGetbit, "readonly", "fast"),
		bitSpec("bitcount", -2, "Count set bits in a string", "2.6.0", cmdBitcount, "readonly"),
		bitSpec("bitpos", -3, "Find first bit set or clear in a string", "2.8.7", cmdBitpos, "readonly"),
		bitop,
	)
}

// bitSpec builds the spec of a bitmap command (key at argument 1).
func bitSpec(name string, arity int, summary, since string, h engine.Handler, flags ...string) *command.Spec {
	return engine.Handle(&command.Spec{Name: name, Arity: arity, Flags: flags, First: 1, Last: 1, Step: 1,
		Group: "bitmap", Since: since, Summary: summary, Exec: command.Shard, Categories: engine.TypeCategories(flags, "bitmap")}, h)
}

const (
	errBitOffset = "ERR bit offset is not an integer or out of range"
	errBitValue  = "ERR bit is not an integer or out of range"
)

// bitOffset parses a bit offset as Redis's getBitOffsetFromArgument: a
// non-negative integer whose byte lies within proto-max-bulk-len. With
// hashBits > 0 the "#n" form means n*hashBits (BITFIELD).
func bitOffset(c *engine.Call, arg []byte, hashBits int) (uint64, bool) {
	hash := hashBits > 0 && len(arg) > 0 && arg[0] == '#'
	if hash {
		arg = arg[1:]
	}
	n, ok := engine.ParseInt(arg)
	if hash {
		n *= int64(hashBits) // wraps like the C multiplication
	}
	if !ok || n < 0 || n>>3 >= maxStringLen(c) {
		c.W.Error(errBitOffset)
		return 0, false
	}
	return uint64(n), true
}

// bitString returns key's string value zero-padded so that bit maxBit
// exists, creating the key if needed (Redis's lookupStringForBitCommand).
// grown reports whether the key was created or lengthened. On WRONGTYPE it
// replies and returns nil.
func bitString(c *engine.Call, key []byte, maxBit uint64) (e *keyspace.Entry, grown bool) {
	need := int(maxBit>>3) + 1
	e = c.LookupWrite(key)
	if e == nil {
		e = c.Create(key, keyspace.KindString)
		e.Str = make([]byte, need)
		return e, true
	}
	if e.Kind != keyspace.KindString {
		c.W.Error(engine.ErrWrongType)
		return nil, false
	}
	if len(e.Str) < need {
		old := len(e.Str)
		if cap(e.Str) >= need {
			e.Str = e.Str[:need]
			clear(e.Str[old:]) // capacity beyond len may hold stale bytes
		} else {
			e.Str = append(e.Str, make([]byte, need-old)...)
		}
		return e, true
	}
	return e, false
}

// cmdSetbit implements SETBIT key offset 0|1, replying with the old bit.
func cmdSetbit(c *engine.Call) {
	off, ok := bitOffset(c, c.Args[2], 0)
	if !ok {
		return
	}
	on, ok := engine.ParseInt(c.Args[3])
	if !ok || on&^1 != 0 {
		c.W.Error(errBitValue)
		return
	}
	e, grown := bitString(c, c.Args[1], off)
	if e == nil {
		return
	}
	byt, mask := off>>3, byte(0x80)>>(off&7)
	old := e.Str[byt]&mask != 0
	if on == 1 {
		e.Str[byt] |= mask
	} else {
		e.Str[byt] &^= mask
	}
	if !grown && old == (on == 1) {
		c.Unchanged()
	} else {
		c.Notify(engine.NotifyString, "setbit", c.Args[1])
	}
	if old {
		c.W.Int(1)
	} else {
		c.W.Int(0)
	}
}

// cmdGetbit implements GETBIT key offset; bits past the end are 0.
func cmdGetbit(c *engine.Call) {
	off, ok := bitOffset(c, c.Args[2], 0)
	if !ok {
		return
	}
	e, ok := readableString(c, c.Args[1])
	if !ok {
		return
	}
	if e == nil {
		c.W.Int(0)
		return
	}
	if byt := off >> 3; byt < uint64(len(e.Str)) && e.Str[byt]&(0x80>>(off&7)) != 0 {
		c.W.Int(1)
		return
	}
	c.W.Int(0)
}

// bitRange resolves BITCOUNT/BITPOS start and end (inclusive, negative
// from the end, in bytes or with BIT in bits) against a string of n bytes
// the way Redis clamps them. It returns the bit interval [from, to], or
// empty when the range selects nothing.
func bitRange(start, end int64, isBit bool, n int64) (from, to int64, empty bool) {
	total := n
	if isBit {
		total <<= 3
	}
	start, end, ok := clampRange(start, end, total)
	if !ok {
		return 0, 0, true
	}
	if isBit {
		return start, end, false
	}
	return start << 3, end<<3 | 7, false
}

// parseBitUnit reads the optional BYTE|BIT argument.
func parseBitUnit(c *engine.Call, arg []byte) (isBit, ok bool) {
	switch {
	case engine.EqFold(engine.Cstr(arg), "bit"):
		return true, true
	case engine.EqFold(engine.Cstr(arg), "byte"):
		return false, true
	}
	c.W.Error(engine.ErrSyntax)
	return false, false
}

// cmdBitcount implements BITCOUNT key [start end [BYTE|BIT]]. As in Redis a
// missing key answers 0 before the arguments are looked at.
func cmdBitcount(c *engine.Call) {
	e, ok := readableString(c, c.Args[1])
	if !ok {
		return
	}
	if e == nil {
		c.W.Int(0)
		return
	}
	p := e.Str
	from, to := int64(0), int64(len(p))*8-1
	switch len(c.Args) {
	case 2:
	case 4, 5:
		start, end, ok := c.IntArgs(c.Args[2], c.Args[3])
		if !ok {
			return
		}
		if start < 0 && end < 0 && start > end {
			c.W.Int(0)
			return
		}
		isBit := false
		if len(c.Args) == 5 {
			if isBit, ok = parseBitUnit(c, c.Args[4]); !ok {
				return
			}
		}
		var empty bool
		if from, to, empty = bitRange(start, end, isBit, int64(len(p))); empty {
			c.W.Int(0)
			return
		}
	default:
		c.W.Error(engine.ErrSyntax)
		return
	}
	if from > to {
		c.W.Int(0)
		return
	}
	c.W.Int(countBits(p, from, to))
}

// countBits counts the set bits of p in the bit interval [from, to].
func countBits(p []byte, from, to int64) int64 {
	fb, lb := from>>3, to>>3
	n := popcount(p[fb : lb+1])
	// Drop the bits of the edge bytes that lie outside the interval.
	n -= int64(bits.OnesCount8(p[fb] &^ (0xff >> (from & 7))))
	n -= int64(bits.OnesCount8(p[lb] & (0x7f >> (to & 7))))
	return n
}

// popcount counts the set bits of p, eight bytes at a time.
func popcount(p []byte) int64 {
	var n int
	for len(p) >= 32 {
		n += bits.OnesCount64(binary.LittleEndian.Uint64(p)) +
			bits.OnesCount64(binary.LittleEndian.Uint64(p[8:])) +
			bits.OnesCount64(binary.LittleEndian.Uint64(p[16:])) +
			bits.OnesCount64(binary.LittleEndian.Uint64(p[24:]))
		p = p[32:]
	}
	for len(p) >= 8 {
		n += bits.OnesCount64(binary.LittleEndian.Uint64(p))
		p = p[8:]
	}
	for _, b := range p {
		n += bits.OnesCount8(b)
	}
	return int64(n)
}

// cmdBitpos implements BITPOS key bit [start [end [BYTE|BIT]]]. A missing
// key is all zeros; with no end given a search for 0 that finds none
// answers the first bit past the string, with an explicit end it answers -1.
func cmdBitpos(c *engine.Call) {
	bit, ok := c.IntArg(c.Args[2])
	if !ok {
		return
	}
	if bit != 0 && bit != 1 {
		c.W.Error("ERR The bit argument must be 1 or 0.")
		return
	}
	e, ok := readableString(c, c.Args[1])
	if !ok {
		return
	}
	if e == nil {
		if bit == 1 {
			c.W.Int(-1)
		} else {
			c.W.Int(0)
		}
		return
	}
	p := e.Str
	from, to := int64(0), int64(len(p))*8-1
	endGiven := false
	if n := len(c.Args); n >= 4 && n <= 6 {
		start, ok := c.IntArg(c.Args[3])
		if !ok {
			return
		}
		isBit := false
		if n == 6 {
			if isBit, ok = parseBitUnit(c, c.Args[5]); !ok {
				return
			}
		}
		end := int64(-1)
		if n >= 5 {
			if end, ok = c.IntArg(c.Args[4]); !ok {
				return
			}
			endGiven = true
		}
		var empty bool
		if from, to, empty = bitRange(start, end, isBit, int64(len(p))); empty {
			c.W.Int(-1)
			return
		}
	} else if n != 3 {
		c.W.Error(engine.ErrSyntax)
		return
	}
	if from > to {
		c.W.Int(-1)
		return
	}
	pos := findBit(p, from, to, bit == 1)
	if pos < 0 && bit == 0 && !endGiven {
		pos = to + 1 // the string is taken as zero-padded on the right
	}
	c.W.Int(pos)
}

// findBit returns the first bit of p in [from, to] equal to set, or -1. It
// skips whole 8-byte words that cannot hold a match.
func findBit(p []byte, from, to int64, set bool) int64 {
	var flip byte // XOR making the wanted bit a 1
	if !set {
		flip = 0xff
	}
	fb, lb := from>>3, to>>3
	for i := fb; i <= lb; {
		if i&7 == 0 && i+8 <= lb {
			w := binary.BigEndian.Uint64(p[i:])
			if !set {
				w = ^w
			}
			if w == 0 {
				i += 8
				continue
			}
		}
		b := p[i] ^ flip
		if i == fb {
			b &= 0xff >> (from & 7)
		}
		if i == lb {
			b &= 0xff << (7 - to&7)
		}
		if b != 0 {
			return i<<3 + int64(bits.LeadingZeros8(b))
		}
		i++
	}
	return -1
}

// Bitwise operations of BITOP.
const (
	opAnd = iota
	opOr
	opXor
	opNot
)

// cmdBitop implements BITOP AND|OR|XOR|NOT destkey key [key ...]. Missing
// sources are empty strings and shorter ones are zero-padded; the result
// has the length of the longest source, and an empty result deletes
// destkey. Only destkey is signalled as modified.
func cmdBitop(c *engine.Call) {
	var op int
	switch name := engine.Cstr(c.Args[1]); {
	case engine.EqFold(name, "and"):
		op = opAnd
	case engine.EqFold(name, "or"):
		op = opOr
	case engine.EqFold(name, "xor"):
		op = opXor
	case engine.EqFold(name, "not"):
		op = opNot
	default:
		c.W.Error(engine.ErrSyntax)
		return
	}
	if op == opNot && len(c.Args) != 4 {
		c.W.Error("ERR BITOP NOT must be called with a single source key.")
		return
	}
	srcs := make([][]byte, 0, len(c.Args)-3)
	maxLen := 0
	for _, k := range c.Args[3:] {
		e := c.Lookup(k)
		if e == nil {
			srcs = append(srcs, nil)
			continue
		}
		if e.Kind != keyspace.KindString {
			c.W.Error(engine.ErrWrongType)
			return
		}
		srcs = append(srcs, e.Str)
		maxLen = max(maxLen, len(e.Str))
	}
	c.Unchanged() // the sources are keys too: signal only destkey
	dest := c.Args[2]
	if maxLen == 0 {
		if c.Delete(dest) {
			c.Signal(dest)
			c.Notify(engine.NotifyGeneric, "del", dest)
		}
		c.W.Int(0)
		return
	}
	res := make([]byte, maxLen)
	bitopInto(res, srcs, op)
	e := c.LookupWrite(dest)
	if e == nil {
		e = c.Create(dest, keyspace.KindString)
	} else {
		e.Kind = keyspace.KindString
		e.Obj = nil
		if e.Expire != 0 {
			c.SetExpire(e, 0)
		}
	}
	e.Str = res
	c.Signal(dest)
	c.Notify(engine.NotifyString, "set", dest)
	c.W.Int(int64(maxLen))
}

// bitopInto computes op over srcs into res (len = longest source), a word
// at a time where every source has data and byte by byte past the shorter
// ones.
func bitopInto(res []byte, srcs [][]byte, op int) {
	copy(res, srcs[0])
	if op == opNot {
		i := 0
		for ; i+8 <= len(res); i += 8 {
			binary.LittleEndian.PutUint64(res[i:], ^binary.LittleEndian.Uint64(res[i:]))
		}
		for ; i < len(res); i++ {
			res[i] = ^res[i]
		}
		return
	}
	for _, s := range srcs[1:] {
		if op == opAnd {
			// Bytes past this source's end are ANDed with 0.
			if len(s) < len(res) {
				clear(res[len(s):])
			}
		}
		n := min(len(s), len(res))
		i := 0
		for ; i+8 <= n; i += 8 {
			a, b := binary.LittleEndian.Uint64(res[i:]), binary.LittleEndian.Uint64(s[i:])
			switch op {
			case opAnd:
				a &= b
			case opOr:
				a |= b
			default:
				a ^= b
			}
			binary.LittleEndian.PutUint64(res[i:], a)
		}
		for ; i < n; i++ {
			switch op {
			case opAnd:
				res[i] &= s[i]
			case opOr:
				res[i] |= s[i]
			default:
				res[i] ^= s[i]
			}
		}
	}
}
