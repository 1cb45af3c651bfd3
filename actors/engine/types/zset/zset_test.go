package zset

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// model is the reference: members sorted by (score, member).
type model struct {
	items []item
}

type item struct {
	m string
	s float64
}

func less(a, b item) bool { return a.s < b.s || (a.s == b.s && a.m < b.m) }

func (md *model) find(m string) int {
	for i, it := range md.items {
		if it.m == m {
			return i
		}
	}
	return -1
}

func (md *model) add(m string, s float64) {
	md.items = append(md.items, item{m, s})
	sort.Slice(md.items, func(i, j int) bool { return less(md.items[i], md.items[j]) })
}

func (md *model) del(i int) { md.items = append(md.items[:i], md.items[i+1:]...) }

// checkSpans verifies every link's span against the level-0 ranks.
func checkSpans(t *testing.T, z *ZSet) {
	t.Helper()
	rank := map[*Node]int{&z.sl.head: 0}
	r := 0
	for n := z.sl.first(); n != nil; n = n.lv[0].next {
		r++
		rank[n] = r
	}
	require.Equal(t, z.Len(), r)
	for i := 0; i < z.sl.level; i++ {
		for x := &z.sl.head; x.lv[i].next != nil; x = x.lv[i].next {
			require.Equal(t, rank[x.lv[i].next]-rank[x], x.lv[i].span, "span at level %d", i)
		}
	}
	for i := z.sl.level; i < len(z.sl.head.lv); i++ {
		require.Nil(t, z.sl.head.lv[i].next, "unused level %d linked", i)
	}
}

// check compares z with the model exhaustively.
func check(t *testing.T, z *ZSet, md *model) {
	t.Helper()
	require.Equal(t, len(md.items), z.Len())
	checkSpans(t, z)
	i := 0
	var prev *Node
	for n := z.First(); n != nil; n = n.Next() {
		require.Equal(t, md.items[i].m, n.Member())
		require.Equal(t, md.items[i].s, n.Score())
		require.Equal(t, prev, n.Prev())
		prev = n
		i++
	}
	require.Equal(t, prev, z.Last())
	for i, it := range md.items {
		require.Equal(t, it.m, z.ByRank(i).Member())
		r, ok := z.Rank([]byte(it.m))
		require.True(t, ok)
		require.Equal(t, i, r)
		s, ok := z.Score([]byte(it.m))
		require.True(t, ok)
		require.Equal(t, it.s, s)
	}
	require.Nil(t, z.ByRank(-1))
	require.Nil(t, z.ByRank(len(md.items)))
	_, ok := z.Rank([]byte("absent"))
	require.False(t, ok)
	// ZSCAN from 0 to 0 sees every member.
	seen := map[string]float64{}
	for cur := z.Scan(0, func(m string, s float64) { seen[m] = s }); cur != 0; {
		cur = z.Scan(cur, func(m string, s float64) { seen[m] = s })
	}
	require.Len(t, seen, len(md.items))
}

func randScore(r *rand.Rand) float64 {
	switch r.IntN(6) {
	case 0:
		return math.Inf(1 - 2*r.IntN(2))
	case 1:
		return float64(r.IntN(5)) // many ties
	default:
		return float64(r.IntN(200)-100) / 4
	}
}

func TestZSetRandomOpsMatchModel(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		r := rand.New(rand.NewPCG(seed, 99))
		z := New(false)
		md := &model{}
		for op := 0; op < 1500; op++ {
			m := fmt.Sprintf("m%d", r.IntN(150))
			switch k := r.IntN(20); {
			case k < 10: // add or update
				s := randScore(r)
				if i := md.find(m); i >= 0 {
					md.del(i)
					md.add(m, s)
					n := z.Get([]byte(m))
					z.SetScore(n, s)
				} else {
					md.add(m, s)
					z.Add([]byte(m), s)
				}
			case k < 14:
				i := md.find(m)
				require.Equal(t, i >= 0, z.Delete([]byte(m)))
				if i >= 0 {
					md.del(i)
				}
			case k < 15 && len(md.items) > 0:
				a := r.IntN(len(md.items))
				b := min(len(md.items)-1, a+r.IntN(4))
				require.Equal(t, b-a+1, z.DeleteRangeByRank(a, b))
				md.items = append(md.items[:a], md.items[b+1:]...)
			case k < 16:
				lo := randScore(r)
				sr := ScoreRange{Min: lo, Max: lo + 1, MinEx: r.IntN(2) == 0, MaxEx: r.IntN(2) == 0}
				var keep []item
				for _, it := range md.items {
					if !(sr.GteMin(it.s) && sr.LteMax(it.s)) {
						keep = append(keep, it)
					}
				}
				require.Equal(t, len(md.items)-len(keep), z.DeleteRangeByScore(sr))
				md.items = keep
			default:
				// range queries against the model
				sr := ScoreRange{Min: randScore(r), Max: randScore(r), MinEx: r.IntN(2) == 0, MaxEx: r.IntN(2) == 0}
				var in []item
				for _, it := range md.items {
					if sr.GteMin(it.s) && sr.LteMax(it.s) {
						in = append(in, it)
					}
				}
				require.Equal(t, len(in), z.CountInRange(sr), "count %+v", sr)
				f, l := z.FirstInRange(sr), z.LastInRange(sr)
				if len(in) == 0 {
					require.Nil(t, f)
					require.Nil(t, l)
				} else {
					require.Equal(t, in[0].m, f.Member())
					require.Equal(t, in[len(in)-1].m, l.Member())
				}
			}
			if op%50 == 0 {
				check(t, z, md)
			}
		}
		check(t, z, md)
		require.Greater(t, len(md.items), 20)
		c := z.Copy()
		check(t, c, md)
		z.Delete([]byte(md.items[0].m)) // the copy is independent
		check(t, c, md)
	}
}

func TestZSetLexRanges(t *testing.T) {
	for _, compact := range []bool{false, true} {
		testLexRanges(t, compact)
	}
}

func testLexRanges(t *testing.T, compact bool) {
	r := rand.New(rand.NewPCG(7, 7))
	z := New(compact)
	var all []string
	for i := 0; i < 300; i++ {
		m := fmt.Sprintf("%c%d", 'a'+r.IntN(26), r.IntN(50))
		if z.Get([]byte(m)) == nil {
			z.Add([]byte(m), 0)
			all = append(all, m)
		}
	}
	sort.Strings(all)
	bound := func() LexBound {
		switch r.IntN(8) {
		case 0:
			return LexBound{Inf: -1, Ex: true}
		case 1:
			return LexBound{Inf: 1, Ex: true}
		}
		v := all[r.IntN(len(all))]
		if r.IntN(3) == 0 {
			v = v[:1]
		}
		return LexBound{Val: v, Ex: r.IntN(2) == 0}
	}
	for i := 0; i < 2000; i++ {
		lr := LexRange{Min: bound(), Max: bound()}
		var in []string
		for _, m := range all {
			if lr.GteMin(m) && lr.LteMax(m) {
				in = append(in, m)
			}
		}
		require.Equal(t, len(in), z.CountInLex(lr), "%+v", lr)
		f, l := z.FirstInLex(lr), z.LastInLex(lr)
		if len(in) == 0 {
			require.Nil(t, f)
			continue
		}
		require.Equal(t, in[0], f.Member())
		require.Equal(t, in[len(in)-1], l.Member())
	}
	lr := LexRange{Min: LexBound{Val: "m"}, Max: LexBound{Inf: 1, Ex: true}}
	n := 0
	for _, m := range all {
		if m >= "m" {
			n++
		}
	}
	require.Equal(t, n, z.DeleteRangeByLex(lr))
	require.Equal(t, len(all)-n, z.Len())
	checkSpans(t, z)
}

func TestLexRangeEmpty(t *testing.T) {
	minus, plus := LexBound{Inf: -1, Ex: true}, LexBound{Inf: 1, Ex: true}
	require.False(t, LexRange{Min: minus, Max: plus}.Empty())
	require.True(t, LexRange{Min: plus, Max: minus}.Empty())
	require.True(t, LexRange{Min: minus, Max: minus}.Empty())
	require.True(t, LexRange{Min: plus, Max: plus}.Empty())
	require.False(t, LexRange{Min: LexBound{Val: "a"}, Max: LexBound{Val: "a"}}.Empty())
	require.True(t, LexRange{Min: LexBound{Val: "a", Ex: true}, Max: LexBound{Val: "a"}}.Empty())
	require.True(t, LexRange{Min: LexBound{Val: "b"}, Max: LexBound{Val: "a"}}.Empty())
	require.True(t, ScoreRange{Min: 1, Max: 1, MinEx: true}.Empty())
	require.False(t, ScoreRange{Min: 1, Max: 1}.Empty())
	require.True(t, ScoreRange{Min: 2, Max: 1}.Empty())
}

func TestCompactNormalisesNegativeZero(t *testing.T) {
	z := New(true)
	n := z.Add([]byte("a"), math.Copysign(0, -1))
	require.False(t, math.Signbit(n.Score()))
	require.Equal(t, "listpack", z.Encoding())

	z = New(false)
	n = z.Add([]byte("a"), math.Copysign(0, -1))
	require.True(t, math.Signbit(n.Score()))
	require.Equal(t, "skiplist", z.Encoding())
	z.MakeCompact()
	require.False(t, math.Signbit(z.First().Score()))
	require.Equal(t, "listpack", z.Encoding())
}

func TestSetScoreKeepsOrder(t *testing.T) {
	z := New(false)
	for i := 0; i < 10; i++ {
		z.Add([]byte{byte('a' + i)}, float64(i))
	}
	n := z.Get([]byte("c"))
	require.Same(t, n, z.SetScore(n, 2.5)) // stays between b and d: updated in place
	moved := z.SetScore(z.Get([]byte("a")), 100)
	require.Equal(t, "a", z.Last().Member())
	require.Same(t, moved, z.Get([]byte("a")))
	r, _ := z.Rank([]byte("a"))
	require.Equal(t, 9, r)
	checkSpans(t, z)
}

func BenchmarkZSetAdd(b *testing.B) {
	z := New(false)
	r := rand.New(rand.NewPCG(1, 2))
	keys := make([][]byte, b.N)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("member:%d", i))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		z.Add(keys[i], r.Float64())
	}
}

// BenchmarkZSetUpdate is redis-benchmark's ZADD: random members of a
// 100000-member set get random integer scores (mostly moves).
func BenchmarkZSetUpdate(b *testing.B) {
	const n = 100000
	z := New(false)
	r := rand.New(rand.NewPCG(3, 4))
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("element:%012d", i))
		z.Add(keys[i], float64(r.IntN(n)))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := keys[r.IntN(n)]
		if nd := z.Get(k); nd != nil {
			z.SetScore(nd, float64(r.IntN(n)))
		} else {
			z.Add(k, float64(r.IntN(n)))
		}
	}
}
