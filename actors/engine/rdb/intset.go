package rdb

import (
	"encoding/binary"
	"math"
)

// Intset, the blob of a small all-integer set: the element width (2, 4 or
// 8, uint32), the count (uint32), then the integers in ascending order,
// little-endian, all of that width.

// AppendIntset appends the intset blob of ints (ascending, distinct), using
// the narrowest width that holds them all as Redis does for a set built by
// additions. (Redis never narrows an intset after removals, so a set that
// once held a wide integer may DUMP wider there.)
func AppendIntset(b []byte, ints []int64) []byte { return AppendIntsetWidth(b, ints, 2) }

// AppendIntsetWidth is AppendIntset with integers at least minWidth bytes
// wide (a set keeps the width of the widest member it ever held).
func AppendIntsetWidth(b []byte, ints []int64, minWidth int) []byte {
	w := minWidth
	for _, v := range ints {
		if v < math.MinInt32 || v > math.MaxInt32 {
			w = 8
			break
		}
		if v < math.MinInt16 || v > math.MaxInt16 {
			w = max(w, 4)
		}
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(w))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(ints)))
	for _, v := range ints {
		switch w {
		case 2:
			b = binary.LittleEndian.AppendUint16(b, uint16(v))
		case 4:
			b = binary.LittleEndian.AppendUint32(b, uint32(v))
		default:
			b = binary.LittleEndian.AppendUint64(b, uint64(v))
		}
	}
	return b
}

// intsetValues validates an intset blob (width, size, strictly ascending,
// not empty) and returns its integers.
func intsetValues(b []byte) ([]int64, error) {
	if len(b) < 8 {
		return nil, errFormat("intset header")
	}
	w := binary.LittleEndian.Uint32(b)
	if w != 2 && w != 4 && w != 8 {
		return nil, errFormat("intset encoding")
	}
	n := uint64(binary.LittleEndian.Uint32(b[4:]))
	if n == 0 || 8+n*uint64(w) != uint64(len(b)) {
		return nil, errFormat("intset size")
	}
	out := make([]int64, n)
	d := b[8:]
	for i := range out {
		var v int64
		switch w {
		case 2:
			v = int64(int16(binary.LittleEndian.Uint16(d[2*i:])))
		case 4:
			v = int64(int32(binary.LittleEndian.Uint32(d[4*i:])))
		default:
			v = int64(binary.LittleEndian.Uint64(d[8*i:]))
		}
		if i > 0 && v <= out[i-1] {
			return nil, errFormat("intset order")
		}
		out[i] = v
	}
	return out, nil
}
