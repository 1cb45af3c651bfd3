package rdb

import (
	"encoding/binary"
	"strconv"
)

// Listpack, Redis 7's compact sequence of strings and integers: a 6-byte
// header (total bytes as uint32, element count as uint16, 65535 meaning
// "count them"), the entries, and a 0xFF terminator. Each entry is an
// encoding byte (with small integers and short string lengths folded in),
// the data, and the entry's own length written backwards ("backlen") so
// the list can be walked from the tail.

const (
	lpHeaderSize = 6
	lpEOF        = 0xff
	lpCountMax   = 65535 // header count meaning "unknown"
)

// Listpack builds a listpack blob.
type Listpack struct {
	b []byte
	n int
}

// NewListpack returns an empty listpack builder.
func NewListpack() *Listpack {
	lp := &Listpack{}
	lp.Reset()
	return lp
}

// Reset empties the builder, keeping its buffer.
func (lp *Listpack) Reset() {
	lp.b = append(lp.b[:0], 0, 0, 0, 0, 0, 0)
	lp.n = 0
}

// Len is the number of entries.
func (lp *Listpack) Len() int { return lp.n }

// Size is the blob size once finished (header and terminator included).
func (lp *Listpack) Size() int { return len(lp.b) + 1 }

// Append adds s, as an integer entry when s is the canonical text of an
// int64 (as Redis's lpAppend does), else as a string entry.
func (lp *Listpack) Append(s string) {
	start := len(lp.b)
	if v, ok := parseInt(s); ok {
		lp.b = appendLPInt(lp.b, v)
	} else {
		lp.b = appendLPStrHeader(lp.b, len(s))
		lp.b = append(lp.b, s...)
	}
	lp.b = appendBacklen(lp.b, len(lp.b)-start)
	lp.n++
}

// Finish terminates the blob, fills in its header and returns it. The
// builder must be Reset before it is used again.
func (lp *Listpack) Finish() []byte {
	lp.b = append(lp.b, lpEOF)
	binary.LittleEndian.PutUint32(lp.b, uint32(len(lp.b)))
	binary.LittleEndian.PutUint16(lp.b[4:], uint16(min(lp.n, lpCountMax)))
	return lp.b
}

// lpEntrySize is the number of bytes Append adds for s.
func lpEntrySize(s string) int {
	var l int
	if v, ok := parseInt(s); ok {
		switch {
		case v >= 0 && v <= 127:
			l = 1
		case v >= -4096 && v <= 4095:
			l = 2
		case v >= -1<<15 && v < 1<<15:
			l = 3
		case v >= -1<<23 && v < 1<<23:
			l = 4
		case v >= -1<<31 && v < 1<<31:
			l = 5
		default:
			l = 9
		}
	} else {
		l = lpStrHeaderSize(len(s)) + len(s)
	}
	return l + backlenSize(l)
}

func appendLPInt(b []byte, v int64) []byte {
	switch {
	case v >= 0 && v <= 127:
		return append(b, byte(v))
	case v >= -4096 && v <= 4095:
		u := uint16(v) & 0x1fff
		return append(b, 0xc0|byte(u>>8), byte(u))
	case v >= -1<<15 && v < 1<<15:
		return binary.LittleEndian.AppendUint16(append(b, 0xf1), uint16(v))
	case v >= -1<<23 && v < 1<<23:
		u := uint32(v)
		return append(b, 0xf2, byte(u), byte(u>>8), byte(u>>16))
	case v >= -1<<31 && v < 1<<31:
		return binary.LittleEndian.AppendUint32(append(b, 0xf3), uint32(v))
	}
	return binary.LittleEndian.AppendUint64(append(b, 0xf4), uint64(v))
}

func lpStrHeaderSize(n int) int {
	switch {
	case n < 64:
		return 1
	case n < 4096:
		return 2
	}
	return 5
}

func appendLPStrHeader(b []byte, n int) []byte {
	switch {
	case n < 64:
		return append(b, 0x80|byte(n))
	case n < 4096:
		return append(b, 0xe0|byte(n>>8), byte(n))
	}
	return binary.LittleEndian.AppendUint32(append(b, 0xf0), uint32(n))
}

func backlenSize(l int) int {
	switch {
	case l <= 127:
		return 1
	case l < 16383:
		return 2
	case l < 2097151:
		return 3
	case l < 268435455:
		return 4
	}
	return 5
}

// appendBacklen writes l, the size of the entry just written, most
// significant 7-bit group first; every byte but the first has its high bit
// set, so a reader coming from the end knows where the field starts.
func appendBacklen(b []byte, l int) []byte {
	k := backlenSize(l)
	for i := k - 1; i >= 0; i-- {
		g := byte(l>>(7*i)) & 127
		if i != k-1 {
			g |= 128
		}
		b = append(b, g)
	}
	return b
}

// listpackEach validates lp entry by entry (as sanitize-dump-payload does)
// and calls fn with each entry as text (integers in decimal). The text may
// point into lp.
func listpackEach(lp []byte, fn func(s []byte) error) (int, error) {
	if len(lp) < lpHeaderSize+1 || int(binary.LittleEndian.Uint32(lp)) != len(lp) || lp[len(lp)-1] != lpEOF {
		return 0, errFormat("listpack header")
	}
	declared := int(binary.LittleEndian.Uint16(lp[4:]))
	end := len(lp) - 1
	count := 0
	var num [20]byte
	for p := lpHeaderSize; p < end; {
		var val []byte
		var size int
		b := lp[p]
		need := func(k int) bool { return p+k <= end }
		switch {
		case b&0x80 == 0:
			size = 1
			val = strconv.AppendInt(num[:0], int64(b), 10)
		case b&0xc0 == 0x80:
			l := int(b & 0x3f)
			size = 1 + l
			if !need(size) {
				return 0, errFormat("listpack entry")
			}
			val = lp[p+1 : p+size]
		case b&0xe0 == 0xc0:
			if !need(2) {
				return 0, errFormat("listpack entry")
			}
			u := int64(b&0x1f)<<8 | int64(lp[p+1])
			if u >= 1<<12 {
				u -= 1 << 13
			}
			size = 2
			val = strconv.AppendInt(num[:0], u, 10)
		case b&0xf0 == 0xe0:
			if !need(2) {
				return 0, errFormat("listpack entry")
			}
			l := int(b&0x0f)<<8 | int(lp[p+1])
			size = 2 + l
			if !need(size) {
				return 0, errFormat("listpack entry")
			}
			val = lp[p+2 : p+size]
		case b == 0xf0:
			if !need(5) {
				return 0, errFormat("listpack entry")
			}
			l := uint64(binary.LittleEndian.Uint32(lp[p+1:]))
			if uint64(end-p) < 5+l {
				return 0, errFormat("listpack entry")
			}
			size = 5 + int(l)
			val = lp[p+5 : p+size]
		case b >= 0xf1 && b <= 0xf4:
			w := [...]int{2, 3, 4, 8}[b-0xf1]
			size = 1 + w
			if !need(size) {
				return 0, errFormat("listpack entry")
			}
			var u uint64
			for i := w - 1; i >= 0; i-- {
				u = u<<8 | uint64(lp[p+1+i])
			}
			v := int64(u<<(64-8*w)) >> (64 - 8*w) // sign-extend
			val = strconv.AppendInt(num[:0], v, 10)
		default:
			return 0, errFormat("listpack encoding")
		}
		bl := backlenSize(size)
		if !need(size + bl) {
			return 0, errFormat("listpack entry")
		}
		var want [5]byte
		if string(appendBacklen(want[:0], size)) != string(lp[p+size:p+size+bl]) {
			return 0, errFormat("listpack backlen")
		}
		if err := fn(val); err != nil {
			return 0, err
		}
		count++
		p += size + bl
	}
	if declared != lpCountMax && declared != count {
		return 0, errFormat("listpack count")
	}
	return count, nil
}
