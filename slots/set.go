package slots

import (
	"math/bits"
	"strconv"
)

// Set is a bitmap of the 16384 slots (value type, 2 KiB). The zero value is
// the empty set. Slot i is bit i%64 of word i/64.
//
// Add, Remove and AddRange panic if given a slot outside 0..NumSlots-1; Has
// reports false for such a slot.
type Set [NumSlots / 64]uint64

// Add puts slot in the set.
func (s *Set) Add(slot int) {
	s[slot>>6] |= 1 << (uint(slot) & 63)
}

// Remove takes slot out of the set.
func (s *Set) Remove(slot int) {
	s[slot>>6] &^= 1 << (uint(slot) & 63)
}

// Has reports whether slot is in the set.
func (s *Set) Has(slot int) bool {
	if uint(slot) >= NumSlots {
		return false
	}
	return s[slot>>6]&(1<<(uint(slot)&63)) != 0
}

// Count returns the number of slots in the set.
func (s *Set) Count() int {
	n := 0
	for _, w := range s {
		n += bits.OnesCount64(w)
	}
	return n
}

// AddRange adds every slot from lo to hi inclusive. It does nothing if lo > hi.
func (s *Set) AddRange(lo, hi int) {
	if lo > hi {
		return
	}
	if uint(lo) >= NumSlots || uint(hi) >= NumSlots {
		panic("slots: AddRange(" + strconv.Itoa(lo) + ", " + strconv.Itoa(hi) + ") out of range")
	}
	lw, hw := lo>>6, hi>>6
	lmask := ^uint64(0) << (uint(lo) & 63)        // bits lo%64..63
	hmask := ^uint64(0) >> (63 - (uint(hi) & 63)) // bits 0..hi%64
	if lw == hw {
		s[lw] |= lmask & hmask
		return
	}
	s[lw] |= lmask
	for w := lw + 1; w < hw; w++ {
		s[w] = ^uint64(0)
	}
	s[hw] |= hmask
}

// ForEach calls fn for every slot in the set, in ascending order.
func (s *Set) ForEach(fn func(slot int)) {
	for i, w := range s {
		for w != 0 {
			fn(i<<6 | bits.TrailingZeros64(w))
			w &= w - 1
		}
	}
}

// Ranges returns the set as maximal runs of consecutive slots, in ascending
// order (nil for the empty set).
func (s *Set) Ranges() []Range {
	var out []Range
	for i := s.nextSet(0); i < NumSlots; {
		j := s.nextClear(i)
		out = append(out, Range{Start: i, End: j - 1})
		i = s.nextSet(j)
	}
	return out
}

// nextSet returns the smallest slot >= from that is in the set, or NumSlots.
func (s *Set) nextSet(from int) int {
	if from >= NumSlots {
		return NumSlots
	}
	i := from >> 6
	w := s[i] &^ (1<<(uint(from)&63) - 1)
	for {
		if w != 0 {
			return i<<6 | bits.TrailingZeros64(w)
		}
		i++
		if i == len(s) {
			return NumSlots
		}
		w = s[i]
	}
}

// nextClear returns the smallest slot >= from that is not in the set, or
// NumSlots.
func (s *Set) nextClear(from int) int {
	if from >= NumSlots {
		return NumSlots
	}
	i := from >> 6
	w := ^s[i] &^ (1<<(uint(from)&63) - 1)
	for {
		if w != 0 {
			return i<<6 | bits.TrailingZeros64(w)
		}
		i++
		if i == len(s) {
			return NumSlots
		}
		w = ^s[i]
	}
}

// Range is an inclusive run of slots Start..End.
type Range struct{ Start, End int }

// String formats the range as CLUSTER NODES does: "5" for a single slot,
// "0-5460" otherwise.
func (r Range) String() string {
	if r.Start == r.End {
		return strconv.Itoa(r.Start)
	}
	var buf [24]byte
	b := strconv.AppendInt(buf[:0], int64(r.Start), 10)
	b = append(b, '-')
	b = strconv.AppendInt(b, int64(r.End), 10)
	return string(b)
}
