package stream

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

type modelEntry struct {
	id ID
	fv []string
}

func fvOf(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

func collect(t *testing.T, s *Stream, start, end ID, rev bool) []modelEntry {
	t.Helper()
	var out []modelEntry
	it := s.Iter(start, end, rev)
	for id, n, ok := it.Next(); ok; id, n, ok = it.Next() {
		e := modelEntry{id: id}
		for i := 0; i < n; i++ {
			f, v := it.Field()
			e.fv = append(e.fv, string(f), string(v))
		}
		out = append(out, e)
	}
	return out
}

func TestParseID(t *testing.T) {
	for _, c := range []struct {
		in   string
		miss uint64
		mode ParseMode
		want ID
		seq  bool
		ok   bool
	}{
		{"1-2", 0, Strict, ID{1, 2}, true, true},
		{"5", 7, Lenient, ID{5, 7}, true, true},
		{"-", 0, Lenient, MinID, true, true},
		{"+", 0, Lenient, MaxID, true, true},
		{"+", 0, Strict, ID{}, false, false},
		{"3-*", 0, StrictSeqStar, ID{3, 0}, false, true},
		{"3-*", 0, Strict, ID{}, false, false},
		{"-1", 0, Strict, ID{}, false, false},
		{"18446744073709551615-18446744073709551615", 0, Strict, MaxID, true, true},
		{"18446744073709551616", 0, Strict, ID{}, false, false},
		{"1-x", 0, Strict, ID{}, false, false},
		{"", 0, Strict, ID{}, false, false},
	} {
		id, seq, ok := ParseID([]byte(c.in), c.miss, c.mode)
		require.Equal(t, c.ok, ok, c.in)
		if ok {
			require.Equal(t, c.want, id, c.in)
			require.Equal(t, c.seq, seq, c.in)
		}
	}
}

// TestModel drives a stream with random adds, deletes and trims and
// checks ranges in both directions against a plain slice.
func TestModel(t *testing.T) {
	for seed := uint64(0); seed < 30; seed++ {
		rng := rand.New(rand.NewPCG(seed, 1))
		s := New()
		var m []modelEntry
		cfg := Config{NodeMaxBytes: int64(64 + rng.IntN(400)), NodeMaxEntries: int64(1 + rng.IntN(10))}
		ms := uint64(1)
		for step := 0; step < 600; step++ {
			switch r := rng.IntN(10); {
			case r < 6:
				ms += uint64(rng.IntN(3))
				nf := 1 + rng.IntN(3)
				var fv []string
				for i := 0; i < nf; i++ {
					f := []string{"a", "b", "c", "123", "-5"}[rng.IntN(5)]
					fv = append(fv, f, fmt.Sprint(rng.IntN(100000)-500))
				}
				if rng.IntN(3) == 0 {
					fv = []string{"a", "x", "b", "y"}
				}
				id, err := s.Add(cfg, ID{ms, 0}, false, fvOf(fv...))
				require.NoError(t, err)
				m = append(m, modelEntry{id, fv})
			case r < 8 && len(m) > 0:
				k := rng.IntN(len(m))
				require.Equal(t, 1, s.DeleteIDs([]ID{m[k].id}))
				require.Equal(t, 0, s.DeleteIDs([]ID{m[k].id}))
				m = append(m[:k], m[k+1:]...)
			case r == 8:
				maxLen := int64(rng.IntN(len(m) + 1))
				got := s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: maxLen})
				want := max(int64(len(m))-maxLen, 0)
				require.Equal(t, want, got)
				m = m[len(m)-int(min(maxLen, int64(len(m)))):]
			default:
				if len(m) > 0 {
					min := m[rng.IntN(len(m))].id
					n := s.Trim(TrimArgs{Strategy: TrimMinID, MinID: min, Approx: true})
					k := 0
					for k < len(m) && m[k].id.Less(min) {
						k++
					}
					require.LessOrEqual(t, n, int64(k))
					m = m[n:]
				}
			}
			require.Equal(t, uint64(len(m)), s.Len())
			if len(m) > 0 {
				require.Equal(t, m[0].id, s.FirstID)
				require.Equal(t, m[len(m)-1].id, s.LastValid())
			}
			if step%37 == 0 {
				all := collect(t, s, MinID, MaxID, false)
				require.Equal(t, len(m), len(all))
				for i := range m {
					require.Equal(t, m[i], all[i])
				}
				rev := collect(t, s, MinID, MaxID, true)
				for i := range m {
					require.Equal(t, m[len(m)-1-i], rev[i])
				}
				if len(m) > 2 {
					a, b := m[len(m)/3].id, m[2*len(m)/3].id
					sub := collect(t, s, a, b, false)
					require.Equal(t, m[len(m)/3:2*len(m)/3+1], sub)
				}
			}
		}
	}
}

func TestNodeBoundariesAndApproxTrim(t *testing.T) {
	s := New()
	for i := 1; i <= 250; i++ {
		_, err := s.Add(DefaultConfig, ID{uint64(i), 0}, true, fvOf("f", "v"))
		require.NoError(t, err)
	}
	require.Equal(t, 3, s.Nodes()) // 100 + 100 + 50
	require.Equal(t, int64(0), s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: 200, Approx: true}))
	require.Equal(t, int64(100), s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: 140, Approx: true}))
	require.Equal(t, int64(10), s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: 140}))
	require.Equal(t, uint64(140), s.Len())
	require.Equal(t, ID{111, 0}, s.FirstID)
}

func TestIDMap(t *testing.T) {
	var m idMap[int]
	rng := rand.New(rand.NewPCG(1, 2))
	ref := map[ID]int{}
	for i := 0; i < 20000; i++ {
		id := ID{uint64(rng.IntN(3000)), uint64(rng.IntN(3))}
		if rng.IntN(3) == 0 {
			_, had := ref[id]
			require.Equal(t, had, m.Delete(id))
			delete(ref, id)
		} else {
			_, had := ref[id]
			require.Equal(t, !had, m.Set(id, i))
			ref[id] = i
		}
	}
	require.Equal(t, len(ref), m.Len())
	prev := ID{}
	n := 0
	m.Ascend(MinID, func(id ID, v int) bool {
		require.True(t, n == 0 || prev.Less(id))
		require.Equal(t, ref[id], v)
		prev = id
		n++
		return true
	})
	require.Equal(t, len(ref), n)
}
