// Package set implements the set value with Redis 7.0's two encodings,
// which clients can observe: an "intset" (a sorted array of 64-bit
// integers, listed in ascending order) while every member is a canonical
// integer and the set is small, and a "hashtable" otherwise. A set only
// ever converts from intset to hashtable, as in Redis 7.0 (there is no
// listpack set before 7.2).
//
// The hashtable is actors/engine/types/dict, whose reverse-binary cursor gives
// SSCAN its guarantees across resizes.
package set

import (
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/slotd/slotd/actors/engine/types/dict"
	"github.com/slotd/slotd/netio/resp"
)

// maxIntsetCap is Redis's hard cap on intset entries whatever the
// configured set-max-intset-entries.
const maxIntsetCap = 1 << 30

// Set is a set of strings. The zero value is an empty intset.
type Set struct {
	ints  []int64              // the intset, ascending, while ht == nil
	ht    *dict.Dict[struct{}] // the hashtable encoding
	bytes int                  // total member length in hashtable mode
	// width is the intset's integer width in bytes (0 means 2). Like
	// Redis's it only grows: removing the wide members keeps it, and DUMP
	// writes it.
	width uint8
}

// NewIntset returns an empty set in the intset encoding.
func NewIntset() *Set { return &Set{} }

// NewHashtable returns an empty set in the hashtable encoding.
func NewHashtable(hint int) *Set { return &Set{ht: dict.New[struct{}](hint)} }

// NewFor returns an empty set in the encoding Redis picks for a set about
// to receive first: intset when it is a canonical integer.
func NewFor(first []byte) *Set {
	if _, ok := resp.ParseInt(first); ok {
		return NewIntset()
	}
	return NewHashtable(0)
}

// IsIntset reports whether the set uses the intset encoding.
func (s *Set) IsIntset() bool { return s.ht == nil }

// Encoding is what OBJECT ENCODING reports.
func (s *Set) Encoding() string {
	if s.ht == nil {
		return "intset"
	}
	return "hashtable"
}

// Len is the number of members.
func (s *Set) Len() int {
	if s.ht == nil {
		return len(s.ints)
	}
	return s.ht.Len()
}

// IntWidth is the byte width of the intset's integers (2, 4 or 8): the
// widest any member ever needed, as in Redis.
func (s *Set) IntWidth() int { return max(2, int(s.width)) }

// WidenInts raises the intset's integer width to w bytes (RESTORE keeps
// the width of the payload's intset).
func (s *Set) WidenInts(w int) {
	if w > int(s.width) {
		s.width = uint8(w)
	}
}

// intWidth is the narrowest intset width that holds v.
func intWidth(v int64) uint8 {
	switch {
	case v < -1<<31 || v > 1<<31-1:
		return 8
	case v < -1<<15 || v > 1<<15-1:
		return 4
	}
	return 2
}

// MemberBytes is the total member length in hashtable mode.
func (s *Set) MemberBytes() int { return s.bytes }

// Buckets is the hashtable's bucket count (0 for an intset).
func (s *Set) Buckets() int {
	if s.ht == nil {
		return 0
	}
	return s.ht.Buckets()
}

// Add inserts m and reports whether it was new. maxIntset is
// set-max-intset-entries: an intset growing past it, or receiving a
// non-integer, becomes a hashtable.
func (s *Set) Add(m []byte, maxIntset int) bool {
	if s.ht == nil {
		if v, ok := resp.ParseInt(m); ok {
			i, found := slices.BinarySearch(s.ints, v)
			if found {
				return false
			}
			s.ints = slices.Insert(s.ints, i, v)
			s.width = max(s.width, intWidth(v))
			if len(s.ints) > min(maxIntset, maxIntsetCap) {
				s.convert()
			}
			return true
		}
		s.convert()
	}
	if s.ht.Set(m, struct{}{}) {
		s.bytes += len(m)
		return true
	}
	return false
}

// AddString is Add for a string member.
func (s *Set) AddString(m string, maxIntset int) bool {
	if s.ht == nil {
		return s.Add([]byte(m), maxIntset)
	}
	if s.ht.SetString(m, struct{}{}) {
		s.bytes += len(m)
		return true
	}
	return false
}

// convert switches to the hashtable encoding.
func (s *Set) convert() {
	ht := dict.New[struct{}](len(s.ints))
	var buf [20]byte
	for _, v := range s.ints {
		m := strconv.AppendInt(buf[:0], v, 10)
		ht.Set(m, struct{}{})
		s.bytes += len(m)
	}
	s.ints, s.width = nil, 0
	s.ht = ht
}

// Remove deletes m and reports whether it was present.
func (s *Set) Remove(m []byte) bool {
	if s.ht == nil {
		v, ok := resp.ParseInt(m)
		if !ok {
			return false
		}
		i, found := slices.BinarySearch(s.ints, v)
		if !found {
			return false
		}
		s.ints = slices.Delete(s.ints, i, i+1)
		return true
	}
	if _, ok := s.ht.Delete(m); ok {
		s.bytes -= len(m)
		return true
	}
	return false
}

// Has reports whether m is a member.
func (s *Set) Has(m []byte) bool {
	if s.ht == nil {
		v, ok := resp.ParseInt(m)
		if !ok {
			return false
		}
		_, found := slices.BinarySearch(s.ints, v)
		return found
	}
	return s.ht.Has(m)
}

// HasString is Has for a string member.
func (s *Set) HasString(m string) bool {
	if s.ht == nil {
		return s.Has([]byte(m))
	}
	_, ok := s.ht.GetString(m)
	return ok
}

// Random returns a (nearly) uniformly chosen member; s must not be empty. A
// nil r uses the global source.
func (s *Set) Random(r *rand.Rand) string {
	if s.ht == nil {
		var i int
		if r == nil {
			i = rand.IntN(len(s.ints))
		} else {
			i = r.IntN(len(s.ints))
		}
		return strconv.FormatInt(s.ints[i], 10)
	}
	m, _ := s.ht.Random(r)
	return m
}

// ForEach calls fn for every member (ascending for an intset) until it
// returns false. fn may not modify the set.
func (s *Set) ForEach(fn func(m string) bool) {
	if s.ht == nil {
		for _, v := range s.ints {
			if !fn(strconv.FormatInt(v, 10)) {
				return
			}
		}
		return
	}
	s.ht.ForEach(func(m string, _ struct{}) bool { return fn(m) })
}

// Members returns every member (ascending for an intset).
func (s *Set) Members() []string {
	out := make([]string, 0, s.Len())
	s.ForEach(func(m string) bool {
		out = append(out, m)
		return true
	})
	return out
}

// Scan visits one hashtable bucket and returns the next cursor (0 when
// done); an intset is visited whole in one call, as Redis does. fn may not
// modify the set.
func (s *Set) Scan(cursor uint64, fn func(m string)) uint64 {
	if s.ht == nil {
		s.ForEach(func(m string) bool {
			fn(m)
			return true
		})
		return 0
	}
	return s.ht.Scan(cursor, func(m string, _ struct{}) { fn(m) })
}

// Clone is Copy for callers that hold values as any (COPY).
func (s *Set) Clone() any { return s.Copy() }

// Copy returns an independent copy in the same encoding.
func (s *Set) Copy() *Set {
	if s.ht == nil {
		return &Set{ints: slices.Clone(s.ints), width: s.width}
	}
	return &Set{ht: s.ht.Clone(nil), bytes: s.bytes}
}
