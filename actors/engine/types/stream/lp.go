package stream

import (
	"encoding/binary"
	"strconv"
)

// Listpack primitives for stream nodes. A listpack is a 6-byte header
// (total bytes, uint32; element count, uint16 with 65535 meaning "too many
// to say"), elements, and an 0xFF terminator. An element is an encoding
// byte with small integers and short lengths folded in, its data, and its
// own size written backwards so the list can be walked from either end.
// Texts that are canonical int64 decimals are stored as integers, as
// Redis's lpAppend does, and read back as the same text.

const (
	lpHeader  = 6
	lpEnd     = 0xff
	lpUnknown = 65535
)

// lpNew returns an empty listpack with room for capHint bytes.
func lpNew(capHint int) []byte {
	lp := make([]byte, lpHeader+1, max(capHint, lpHeader+1))
	lp[lpHeader] = lpEnd
	binary.LittleEndian.PutUint32(lp, uint32(lpHeader+1))
	return lp
}

// lpBytes is the listpack's total size.
func lpBytes(lp []byte) int { return len(lp) }

func lpSetHeader(lp []byte, count int) {
	binary.LittleEndian.PutUint32(lp, uint32(len(lp)))
	if count >= lpUnknown {
		count = lpUnknown
	}
	binary.LittleEndian.PutUint16(lp[4:], uint16(count))
}

func lpCount(lp []byte) int { return int(binary.LittleEndian.Uint16(lp[4:])) }

// intText reports whether s is the canonical decimal text of an int64 (what
// Redis's string2ll accepts), and its value.
func intText(s []byte) (int64, bool) {
	n := len(s)
	if n == 0 || n > 20 {
		return 0, false
	}
	if n == 1 && s[0] == '0' {
		return 0, true
	}
	i, neg := 0, false
	if s[0] == '-' {
		neg, i = true, 1
		if n == 1 {
			return 0, false
		}
	}
	if s[i] < '1' || s[i] > '9' {
		return 0, false
	}
	var v uint64
	for ; i < n; i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if v > (1<<64-1)/10 {
			return 0, false
		}
		v2 := v*10 + uint64(c-'0')
		if v2 < v {
			return 0, false
		}
		v = v2
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true
	}
	if v > 1<<63-1 {
		return 0, false
	}
	return int64(v), true
}

// encInt writes the encoding of integer v (without backlen).
func encInt(b []byte, v int64) []byte {
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

func encStr(b []byte, s []byte) []byte {
	n := len(s)
	switch {
	case n < 64:
		b = append(b, 0x80|byte(n))
	case n < 4096:
		b = append(b, 0xe0|byte(n>>8), byte(n))
	default:
		b = binary.LittleEndian.AppendUint32(append(b, 0xf0), uint32(n))
	}
	return append(b, s...)
}

func backlenLen(l int) int {
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

func appendBacklen(b []byte, l int) []byte {
	k := backlenLen(l)
	for i := k - 1; i >= 0; i-- {
		g := byte(l>>(7*i)) & 127
		if i != k-1 {
			g |= 128
		}
		b = append(b, g)
	}
	return b
}

// elem encodes one element (encoding, data, backlen) into b.
func elemInt(b []byte, v int64) []byte {
	start := len(b)
	b = encInt(b, v)
	return appendBacklen(b, len(b)-start)
}

func elemText(b []byte, s []byte) []byte {
	if v, ok := intText(s); ok {
		return elemInt(b, v)
	}
	start := len(b)
	b = encStr(b, s)
	return appendBacklen(b, len(b)-start)
}

// elemTextSize is the size elemText gives s.
func elemTextSize(s []byte) int {
	var l int
	if v, ok := intText(s); ok {
		l = intEncSize(v)
	} else {
		switch n := len(s); {
		case n < 64:
			l = 1 + n
		case n < 4096:
			l = 2 + n
		default:
			l = 5 + n
		}
	}
	return l + backlenLen(l)
}

func intEncSize(v int64) int {
	switch {
	case v >= 0 && v <= 127:
		return 1
	case v >= -4096 && v <= 4095:
		return 2
	case v >= -1<<15 && v < 1<<15:
		return 3
	case v >= -1<<23 && v < 1<<23:
		return 4
	case v >= -1<<31 && v < 1<<31:
		return 5
	}
	return 9
}

// lpAppend adds encoded elements (made with elemInt/elemText) of n entries
// before the terminator.
func lpAppend(lp []byte, enc []byte, n int) []byte {
	count := lpCount(lp)
	lp = append(lp[:len(lp)-1], enc...)
	lp = append(lp, lpEnd)
	if count != lpUnknown {
		count += n
	}
	lpSetHeader(lp, count)
	return lp
}

// elem is one decoded element: an integer, or text pointing into the
// listpack.
type elem struct {
	isInt bool
	i     int64
	s     []byte
}

// lpRead decodes the element at p and returns it with the offset of the
// next element. The listpack must be well formed (nodes built here, or
// checked by Validate).
func lpRead(lp []byte, p int) (e elem, next int) {
	b := lp[p]
	var size int
	switch {
	case b&0x80 == 0:
		e = elem{isInt: true, i: int64(b)}
		size = 1
	case b&0xc0 == 0x80:
		l := int(b & 0x3f)
		e.s = lp[p+1 : p+1+l]
		size = 1 + l
	case b&0xe0 == 0xc0:
		u := int64(b&0x1f)<<8 | int64(lp[p+1])
		if u >= 1<<12 {
			u -= 1 << 13
		}
		e = elem{isInt: true, i: u}
		size = 2
	case b&0xf0 == 0xe0:
		l := int(b&0x0f)<<8 | int(lp[p+1])
		e.s = lp[p+2 : p+2+l]
		size = 2 + l
	case b == 0xf0:
		l := int(binary.LittleEndian.Uint32(lp[p+1:]))
		e.s = lp[p+5 : p+5+l]
		size = 5 + l
	default: // 0xf1..0xf4
		w := [...]int{2, 3, 4, 8}[b-0xf1]
		var u uint64
		for i := w - 1; i >= 0; i-- {
			u = u<<8 | uint64(lp[p+1+i])
		}
		e = elem{isInt: true, i: int64(u<<(64-8*w)) >> (64 - 8*w)}
		size = 1 + w
	}
	return e, p + size + backlenLen(size)
}

// lpInt reads the integer element at p.
func lpInt(lp []byte, p int) (int64, int) {
	e, next := lpRead(lp, p)
	if !e.isInt {
		v, _ := strconv.ParseInt(string(e.s), 10, 64)
		return v, next
	}
	return e.i, next
}

// lpSkip returns the offset after the element at p, reading only its
// encoding.
func lpSkip(lp []byte, p int) int {
	b := lp[p]
	var size int
	switch {
	case b&0x80 == 0:
		size = 1
	case b&0xc0 == 0x80:
		size = 1 + int(b&0x3f)
	case b&0xe0 == 0xc0:
		size = 2
	case b&0xf0 == 0xe0:
		size = 2 + (int(b&0x0f)<<8 | int(lp[p+1]))
	case b == 0xf0:
		size = 5 + int(binary.LittleEndian.Uint32(lp[p+1:]))
	default:
		size = 1 + [...]int{2, 3, 4, 8}[b-0xf1]
	}
	if size <= 127 {
		return p + size + 1
	}
	return p + size + backlenLen(size)
}

// text returns e as text, using buf for integers.
func (e elem) text(buf *[20]byte) []byte {
	if e.isInt {
		return strconv.AppendInt(buf[:0], e.i, 10)
	}
	return e.s
}

// lpReplaceInt replaces the element at p with integer v, moving the rest
// of the listpack when the encoding size changes. It returns the listpack
// and the size difference.
func lpReplaceInt(lp []byte, p int, v int64) ([]byte, int) {
	old := lpSkip(lp, p) - p
	var tmp [16]byte
	enc := elemInt(tmp[:0], v)
	d := len(enc) - old
	switch {
	case d == 0:
		copy(lp[p:], enc)
		return lp, 0
	case d < 0:
		copy(lp[p:], enc)
		copy(lp[p+len(enc):], lp[p+old:])
		lp = lp[:len(lp)+d]
	default:
		n := len(lp)
		lp = append(lp, enc[:d]...) // grow
		copy(lp[p+len(enc):], lp[p+old:n])
		copy(lp[p:], enc)
	}
	binary.LittleEndian.PutUint32(lp, uint32(len(lp)))
	return lp, d
}
