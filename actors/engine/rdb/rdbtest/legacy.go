// Package rdbtest writes the RDB blob encodings that Redis 7.0 still reads
// but no longer writes (ziplists, zipmaps), so tests can build payloads
// in them and check that slotd and Redis restore them alike.
package rdbtest

import (
	"encoding/binary"
	"strconv"
)

// Ziplist encodes entries as Redis 2.6–6.2 did: integers in the narrowest
// integer encoding (0..12 folded into the encoding byte), strings with 6-,
// 14- or 32-bit lengths.
func Ziplist(entries []string) []byte {
	const header = 10
	b := make([]byte, header)
	prev, tail := 0, header
	for _, s := range entries {
		start := len(b)
		tail = start
		if prev < 254 {
			b = append(b, byte(prev))
		} else {
			b = binary.LittleEndian.AppendUint32(append(b, 0xfe), uint32(prev))
		}
		if v, ok := canonicalInt(s); ok {
			switch {
			case v >= 0 && v <= 12:
				b = append(b, 0xf1+byte(v))
			case v >= -128 && v <= 127:
				b = append(b, 0xfe, byte(v))
			case v >= -1<<15 && v < 1<<15:
				b = binary.LittleEndian.AppendUint16(append(b, 0xc0), uint16(v))
			case v >= -1<<23 && v < 1<<23:
				u := uint32(v)
				b = append(b, 0xf0, byte(u), byte(u>>8), byte(u>>16))
			case v >= -1<<31 && v < 1<<31:
				b = binary.LittleEndian.AppendUint32(append(b, 0xd0), uint32(v))
			default:
				b = binary.LittleEndian.AppendUint64(append(b, 0xe0), uint64(v))
			}
		} else {
			switch n := len(s); {
			case n < 64:
				b = append(b, byte(n))
			case n < 16384:
				b = append(b, 0x40|byte(n>>8), byte(n))
			default:
				b = binary.BigEndian.AppendUint32(append(b, 0x80), uint32(n))
			}
			b = append(b, s...)
		}
		prev = len(b) - start
	}
	b = append(b, 0xff)
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	binary.LittleEndian.PutUint32(b[4:], uint32(tail))
	binary.LittleEndian.PutUint16(b[8:], uint16(min(len(entries), 65535)))
	return b
}

// Zipmap encodes field/value pairs as Redis 2.4 did, with a little free
// space after some values (which readers must skip).
func Zipmap(pairs []string) []byte {
	b := []byte{byte(min(len(pairs)/2, 254))}
	length := func(n int) {
		if n < 254 {
			b = append(b, byte(n))
		} else {
			b = binary.LittleEndian.AppendUint32(append(b, 254), uint32(n))
		}
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		length(len(pairs[i]))
		b = append(b, pairs[i]...)
		length(len(pairs[i+1]))
		free := i % 3
		b = append(b, byte(free))
		b = append(b, pairs[i+1]...)
		b = append(b, make([]byte, free)...)
	}
	return append(b, 0xff)
}

// canonicalInt reports whether s is exactly the decimal text of an int64.
func canonicalInt(s string) (int64, bool) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || strconv.FormatInt(v, 10) != s {
		return 0, false
	}
	return v, true
}
