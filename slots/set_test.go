package slots

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSetSize(t *testing.T) {
	assert.Equal(t, uintptr(2048), unsafe.Sizeof(Set{}))
}

func TestSetBasics(t *testing.T) {
	var s Set
	assert.Zero(t, s.Count())
	assert.Nil(t, s.Ranges())
	assert.False(t, s.Has(0))

	for _, slot := range []int{0, 1, 63, 64, 127, 5000, 16383} {
		s.Add(slot)
		assert.True(t, s.Has(slot), "slot %d", slot)
	}
	s.Add(5000) // idempotent
	assert.Equal(t, 7, s.Count())
	assert.False(t, s.Has(2))
	assert.False(t, s.Has(-1))
	assert.False(t, s.Has(NumSlots))

	s.Remove(63)
	s.Remove(62) // absent: no-op
	assert.False(t, s.Has(63))
	assert.Equal(t, 6, s.Count())

	assert.Equal(t, []Range{{0, 1}, {64, 64}, {127, 127}, {5000, 5000}, {16383, 16383}}, s.Ranges())

	var got []int
	s.ForEach(func(slot int) { got = append(got, slot) })
	assert.Equal(t, []int{0, 1, 64, 127, 5000, 16383}, got)

	// Value semantics: a copy is independent.
	c := s
	c.Remove(0)
	assert.True(t, s.Has(0))
	assert.False(t, c.Has(0))

	assert.Panics(t, func() { s.Add(NumSlots) })
	assert.Panics(t, func() { s.Add(-1) })
	assert.Panics(t, func() { s.Remove(NumSlots) })
}

func TestSetAddRange(t *testing.T) {
	cases := []struct{ lo, hi int }{
		{0, 16383}, {0, 5460}, {5461, 10922}, {10923, 16383},
		{0, 0}, {16383, 16383}, {3, 60}, {0, 63}, {64, 127}, {63, 64},
		{1, 62}, {100, 1000}, {62, 129},
	}
	for _, c := range cases {
		var s Set
		s.AddRange(c.lo, c.hi)
		assert.Equal(t, c.hi-c.lo+1, s.Count(), "%d-%d", c.lo, c.hi)
		assert.Equal(t, []Range{{c.lo, c.hi}}, s.Ranges(), "%d-%d", c.lo, c.hi)
		for slot := range NumSlots {
			require.Equal(t, slot >= c.lo && slot <= c.hi, s.Has(slot), "%d-%d slot %d", c.lo, c.hi, slot)
		}
	}

	var s Set
	s.AddRange(10, 5) // lo > hi: nothing
	assert.Zero(t, s.Count())
	assert.Panics(t, func() { s.AddRange(-1, 5) })
	assert.Panics(t, func() { s.AddRange(0, NumSlots) })

	s.AddRange(0, 5460)
	s.AddRange(10923, 16383)
	s.Add(7000)
	s.AddRange(5461, 5461)
	assert.Equal(t, []Range{{0, 5461}, {7000, 7000}, {10923, 16383}}, s.Ranges())
	assert.Equal(t, 5462+1+5461, s.Count())
}

// TestSetRandom checks Set against a plain []bool model.
func TestSetRandom(t *testing.T) {
	var s Set
	var model [NumSlots]bool
	x := uint32(12345)
	next := func(n int) int { // xorshift32
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		return int(x % uint32(n))
	}
	for round := range 2000 {
		switch next(4) {
		case 0:
			slot := next(NumSlots)
			s.Add(slot)
			model[slot] = true
		case 1:
			slot := next(NumSlots)
			s.Remove(slot)
			model[slot] = false
		case 2:
			lo := next(NumSlots)
			hi := lo + next(300)
			if hi >= NumSlots {
				hi = NumSlots - 1
			}
			s.AddRange(lo, hi)
			for i := lo; i <= hi; i++ {
				model[i] = true
			}
		case 3:
			lo := next(NumSlots)
			for i := lo; i < lo+next(200) && i < NumSlots; i++ {
				s.Remove(i)
				model[i] = false
			}
		}
		if round%100 != 99 {
			continue
		}
		var want []Range
		count := 0
		for i := 0; i < NumSlots; i++ {
			require.Equal(t, model[i], s.Has(i))
			if !model[i] {
				continue
			}
			count++
			if n := len(want); n > 0 && want[n-1].End == i-1 {
				want[n-1].End = i
			} else {
				want = append(want, Range{i, i})
			}
		}
		require.Equal(t, count, s.Count())
		require.Equal(t, want, s.Ranges())
		var each []int
		s.ForEach(func(slot int) { each = append(each, slot) })
		require.Len(t, each, count)
		for _, slot := range each {
			require.True(t, model[slot])
		}
	}
}

func TestRangeString(t *testing.T) {
	assert.Equal(t, "5", Range{5, 5}.String())
	assert.Equal(t, "0", Range{0, 0}.String())
	assert.Equal(t, "0-5460", Range{0, 5460}.String())
	assert.Equal(t, "10923-16383", Range{10923, 16383}.String())
}
