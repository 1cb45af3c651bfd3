package strcmd

import (
	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/netio/command"
)

// BITFIELD and BITFIELD_RO: signed and unsigned integers of 1..64 bits (u63
// at most, as replies are signed 64-bit) at arbitrary bit offsets of a
// string, most significant bit first, with WRAP, SAT or FAIL overflow.

func registerBitmapField() {
	command.Register(
		bitSpec("bitfield", -2, "Perform arbitrary bitfield integer operations on strings", "3.2.0",
			cmdBitfield, "write", "denyoom"),
		bitSpec("bitfield_ro", -2,
			"Perform arbitrary bitfield integer operations on strings. Read-only variant of BITFIELD", "6.0.0",
			cmdBitfieldRO, "readonly", "fast"),
	)
}

// Overflow behaviours.
const (
	bfWrap = iota
	bfSat
	bfFail
)

// Operations.
const (
	bfGet = iota
	bfSet
	bfIncrBy
)

type bitfieldOp struct {
	offset   uint64
	value    int64 // SET value or INCRBY increment
	op       int
	overflow int
	bits     uint
	signed   bool
}

const errBitfieldType = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."

func cmdBitfield(c *engine.Call)   { bitfield(c, false) }
func cmdBitfieldRO(c *engine.Call) { bitfield(c, true) }

// bitfield parses every operation before touching the key (so a bad one
// anywhere answers an error and changes nothing), then runs them in order.
func bitfield(c *engine.Call, readOnly bool) {
	var ops []bitfieldOp
	overflow := bfWrap
	writes := false
	var highest uint64
	args := c.Args
	for j := 2; j < len(args); j++ {
		rem := len(args) - j - 1
		sub := engine.Cstr(args[j])
		var op int
		switch {
		case engine.EqFold(sub, "get") && rem >= 2:
			op = bfGet
		case engine.EqFold(sub, "set") && rem >= 3:
			op = bfSet
		case engine.EqFold(sub, "incrby") && rem >= 3:
			op = bfIncrBy
		case engine.EqFold(sub, "overflow") && rem >= 1:
			j++
			switch kind := engine.Cstr(args[j]); {
			case engine.EqFold(kind, "wrap"):
				overflow = bfWrap
			case engine.EqFold(kind, "sat"):
				overflow = bfSat
			case engine.EqFold(kind, "fail"):
				overflow = bfFail
			default:
				c.W.Error("ERR Invalid OVERFLOW type specified")
				return
			}
			continue
		default:
			c.W.Error(engine.ErrSyntax)
			return
		}
		signed, width, ok := parseBitfieldType(args[j+1])
		if !ok {
			c.W.Error(errBitfieldType)
			return
		}
		off, ok := bitOffset(c, args[j+2], int(width))
		if !ok {
			return
		}
		var v int64
		if op != bfGet {
			writes = true
			highest = max(highest, off+uint64(width)-1)
			if v, ok = engine.ParseInt(args[j+3]); !ok {
				c.W.Error(engine.ErrNotInt)
				return
			}
			j++
		}
		ops = append(ops, bitfieldOp{offset: off, value: v, op: op, overflow: overflow, bits: width, signed: signed})
		j += 2
	}

	var e *keyspace.Entry
	grown := false
	if !writes {
		c.Unchanged()
		if e = c.Lookup(args[1]); e != nil && e.Kind != keyspace.KindString {
			c.W.Error(engine.ErrWrongType)
			return
		}
	} else {
		if readOnly {
			c.W.Error("ERR BITFIELD_RO only supports the GET subcommand")
			return
		}
		if e, grown = bitString(c, args[1], highest); e == nil {
			return
		}
	}

	c.W.Array(len(ops))
	changes := 0
	for i := range ops {
		o := &ops[i]
		if o.op == bfGet {
			var p []byte
			if e != nil {
				p = e.Str
			}
			u := getBits(p, o.offset, o.bits)
			if o.signed {
				c.W.Int(signExtend(u, o.bits))
			} else {
				c.W.Int(int64(u))
			}
			continue
		}
		oldU := getBits(e.Str, o.offset, o.bits)
		var newU uint64
		var reply int64
		var over int
		if o.signed {
			old := signExtend(oldU, o.bits)
			var nv, limit int64
			if o.op == bfIncrBy {
				over, limit = signedOverflow(old, o.value, o.bits, o.overflow)
				nv = old + o.value
				if over != 0 {
					nv = limit
				}
				reply = nv
			} else {
				nv = o.value
				if over, limit = signedOverflow(nv, 0, o.bits, o.overflow); over != 0 {
					nv = limit
				}
				reply = old
			}
			newU = uint64(nv)
		} else {
			var limit uint64
			if o.op == bfIncrBy {
				newU = oldU + uint64(o.value)
				if over, limit = unsignedOverflow(oldU, o.value, o.bits, o.overflow); over != 0 {
					newU = limit
				}
				reply = int64(newU)
			} else {
				newU = uint64(o.value)
				if over, limit = unsignedOverflow(newU, 0, o.bits, o.overflow); over != 0 {
					newU = limit
				}
				reply = int64(oldU)
			}
		}
		if over != 0 && o.overflow == bfFail {
			c.W.Null()
			continue
		}
		c.W.Int(reply)
		setBits(e.Str, o.offset, o.bits, newU)
		if grown || oldU != newU&widthMask(o.bits) {
			changes++
		}
	}
	if changes == 0 {
		c.Unchanged()
	} else {
		c.Notify(engine.NotifyString, "setbit", c.Args[1])
	}
}

// parseBitfieldType parses i1..i64 or u1..u63 (lower-case sign letter, as
// Redis requires).
func parseBitfieldType(arg []byte) (signed bool, width uint, ok bool) {
	a := engine.Cstr(arg)
	if len(a) == 0 || (a[0] != 'i' && a[0] != 'u') {
		return false, 0, false
	}
	n, ok := engine.ParseInt(a[1:])
	signed = a[0] == 'i'
	if !ok || n < 1 || (signed && n > 64) || (!signed && n > 63) {
		return false, 0, false
	}
	return signed, uint(n), true
}

func widthMask(bits uint) uint64 {
	if bits == 64 {
		return ^uint64(0)
	}
	return 1<<bits - 1
}

// getBits reads the bits-wide unsigned field at bit offset off of p;
// bytes past the end of p read as zero.
func getBits(p []byte, off uint64, bits uint) uint64 {
	byt, shift := off>>3, uint(off&7)
	// Load the 9 bytes that can hold the field as a 72-bit big-endian
	// window: hi gets the first 8, lo the ninth.
	var hi uint64
	var lo byte
	for i := uint64(0); i < 9; i++ {
		var b byte
		if byt+i < uint64(len(p)) {
			b = p[byt+i]
		}
		if i < 8 {
			hi = hi<<8 | uint64(b)
		} else {
			lo = b
		}
	}
	w := hi << shift
	if shift > 0 {
		w |= uint64(lo) >> (8 - shift)
	}
	return w >> (64 - bits)
}

// setBits writes the low bits bits of v at bit offset off of p (which
// must be long enough).
func setBits(p []byte, off uint64, bits uint, v uint64) {
	for bits > 0 {
		byt, bo := off>>3, uint(off&7)
		n := min(8-bo, bits) // bits that go into this byte
		chunk := byte(v >> (bits - n) & (1<<n - 1))
		shift := 8 - bo - n
		mask := byte((1<<n - 1) << shift)
		p[byt] = p[byt]&^mask | chunk<<shift
		off += uint64(n)
		bits -= n
	}
}

// signExtend interprets the low bits bits of u as two's complement.
func signExtend(u uint64, bits uint) int64 {
	if bits < 64 && u&(1<<(bits-1)) != 0 {
		u |= ^uint64(0) << bits
	}
	return int64(u)
}

// unsignedOverflow reports whether value+incr leaves [0, 2^bits-1]: 1
// above, -1 below, 0 inside. It also returns the value to store instead
// under WRAP (value+incr modulo 2^bits) or SAT (the bound). A value that is
// already out of range (a negative SET) counts as overflowing upwards, as
// in Redis.
func unsignedOverflow(value uint64, incr int64, bits uint, kind int) (int, uint64) {
	maxV := widthMask(bits)
	maxIncr := int64(maxV - value)
	minIncr := int64(-value)
	wrap := (value + uint64(incr)) & maxV
	if value > maxV || (incr > 0 && incr > maxIncr) {
		switch kind {
		case bfWrap:
			return 1, wrap
		case bfSat:
			return 1, maxV
		}
		return 1, 0
	}
	if incr < 0 && incr < minIncr {
		switch kind {
		case bfWrap:
			return -1, wrap
		case bfSat:
			return -1, 0
		}
		return -1, 0
	}
	return 0, 0
}

// signedOverflow is unsignedOverflow for [-2^(bits-1), 2^(bits-1)-1];
// WRAP keeps the low bits and sign-extends them.
func signedOverflow(value, incr int64, bits uint, kind int) (int, int64) {
	maxV := int64(1)<<(bits-1) - 1
	if bits == 64 {
		maxV = 1<<63 - 1
	}
	minV := -maxV - 1
	maxIncr := int64(uint64(maxV) - uint64(value))
	minIncr := minV - value
	wrap := func() int64 {
		c := uint64(value) + uint64(incr)
		if bits < 64 {
			if c&(1<<(bits-1)) != 0 {
				c |= ^uint64(0) << bits
			} else {
				c &= widthMask(bits)
			}
		}
		return int64(c)
	}
	if value > maxV || (bits != 64 && incr > maxIncr) || (value >= 0 && incr > 0 && incr > maxIncr) {
		switch kind {
		case bfWrap:
			return 1, wrap()
		case bfSat:
			return 1, maxV
		}
		return 1, 0
	}
	if value < minV || (bits != 64 && incr < minIncr) || (value < 0 && incr < 0 && incr < minIncr) {
		switch kind {
		case bfWrap:
			return -1, wrap()
		case bfSat:
			return -1, minV
		}
		return -1, 0
	}
	return 0, 0
}
