package set

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestIntsetEncodingRules(t *testing.T) {
	s := NewFor([]byte("12"))
	require.Equal(t, "intset", s.Encoding())
	for _, m := range []string{"5", "-3", "100", "5", "9223372036854775807", "-9223372036854775808"} {
		s.Add([]byte(m), 512)
	}
	require.Equal(t, "intset", s.Encoding())
	require.Equal(t, []string{"-9223372036854775808", "-3", "5", "100", "9223372036854775807"}, s.Members())
	require.Equal(t, 8, s.IntWidth())
	// Non-canonical integers are strings: they are not members of an
	// intset, and adding one converts it.
	for _, m := range []string{"05", "+5", " 5", "-0", "5.0", "9223372036854775808"} {
		require.False(t, s.Has([]byte(m)), m)
		require.False(t, s.Remove([]byte(m)), m)
	}
	require.True(t, s.Add([]byte("-0"), 512))
	require.Equal(t, "hashtable", s.Encoding())
	require.Equal(t, 6, s.Len())
	require.True(t, s.Has([]byte("-3")))
	// Never converts back.
	require.True(t, s.Remove([]byte("-0")))
	require.Equal(t, "hashtable", s.Encoding())

	s = NewFor([]byte("a"))
	require.Equal(t, "hashtable", s.Encoding())

	s = NewIntset()
	for i := 0; i < 4; i++ {
		s.Add([]byte(strconv.Itoa(i)), 4)
	}
	require.Equal(t, "intset", s.Encoding())
	s.Add([]byte("4"), 4)
	require.Equal(t, "hashtable", s.Encoding())
	require.ElementsMatch(t, []string{"0", "1", "2", "3", "4"}, s.Members())
}

func TestIntWidth(t *testing.T) {
	s := NewIntset()
	s.Add([]byte("1"), 512)
	require.Equal(t, 2, s.IntWidth())
	s.Add([]byte("-40000"), 512)
	require.Equal(t, 4, s.IntWidth())
	s.Add([]byte("4000000000"), 512)
	require.Equal(t, 8, s.IntWidth())
}

func TestSetMatchesMap(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	for _, limit := range []int{0, 16, 512} {
		s := NewIntset()
		ref := map[string]bool{}
		for i := 0; i < 5000; i++ {
			var m string
			if r.IntN(10) == 0 {
				m = fmt.Sprintf("x%d", r.IntN(50))
			} else {
				m = strconv.Itoa(r.IntN(400) - 200)
			}
			if r.IntN(3) == 0 {
				require.Equal(t, ref[m], s.Remove([]byte(m)))
				delete(ref, m)
			} else {
				require.Equal(t, !ref[m], s.Add([]byte(m), limit))
				ref[m] = true
			}
			require.Equal(t, len(ref), s.Len())
		}
		var want []string
		for m := range ref {
			want = append(want, m)
			require.True(t, s.HasString(m))
		}
		require.ElementsMatch(t, want, s.Members())
		// A full scan reports everything.
		seen := map[string]bool{}
		for cur := s.Scan(0, func(m string) { seen[m] = true }); cur != 0; {
			cur = s.Scan(cur, func(m string) { seen[m] = true })
		}
		require.Len(t, seen, len(ref))
		c := s.Copy()
		require.ElementsMatch(t, want, c.Members())
		require.Equal(t, s.Encoding(), c.Encoding())
		s.Add([]byte("brand-new"), limit)
		require.False(t, c.HasString("brand-new"))
		require.NotEmpty(t, s.Random(r))
	}
}

func TestIntsetListsAscending(t *testing.T) {
	s := NewIntset()
	vals := []int{}
	for i := 0; i < 300; i++ {
		v := rand.IntN(100000) - 50000
		if s.Add([]byte(strconv.Itoa(v)), 512) {
			vals = append(vals, v)
		}
	}
	sort.Ints(vals)
	got := s.Members()
	for i, v := range vals {
		require.Equal(t, strconv.Itoa(v), got[i])
	}
	require.Equal(t, len(got), s.Len())
	// An intset scan returns everything at once with cursor 0.
	n := 0
	require.Equal(t, uint64(0), s.Scan(0, func(string) { n++ }))
	require.Equal(t, len(vals), n)
}
