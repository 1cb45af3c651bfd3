package list

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// check verifies l against the model and the chunk invariants.
func check(t *testing.T, l *List, model []string) {
	t.Helper()
	require.Equal(t, len(model), l.Len())
	var got []string
	l.Each(false, func(i int, v string) bool {
		require.Equal(t, len(got), i)
		got = append(got, v)
		return true
	})
	if len(model) == 0 {
		require.Empty(t, got)
	} else {
		require.Equal(t, model, got)
	}
	var rev []string
	l.Each(true, func(i int, v string) bool {
		require.Equal(t, len(model)-1-len(rev), i)
		rev = append(rev, v)
		return true
	})
	slices.Reverse(rev)
	require.Equal(t, got, rev)
	bytes, n := 0, 0
	for ci := 0; ci < l.chunks.Len(); ci++ {
		c := l.chunks.At(ci)
		require.Positive(t, c.Len(), "empty chunk %d", ci)
		require.LessOrEqual(t, c.Len(), maxChunk)
		require.LessOrEqual(t, 0, c.lo)
		require.LessOrEqual(t, c.hi, len(c.buf))
		n += c.Len()
		for i := 0; i < c.Len(); i++ {
			bytes += len(c.At(i))
		}
	}
	require.Equal(t, l.n, n)
	require.Equal(t, bytes, l.Bytes())
	// Chunk count stays proportional to the length.
	require.LessOrEqual(t, l.chunks.Len(), 2*l.n/(maxChunk/2)+3, "too many chunks: %d for %d", l.chunks.Len(), l.n)
}

func TestPushPopBothEnds(t *testing.T) {
	l := New()
	var model []string
	for i := 0; i < 1000; i++ {
		v := strconv.Itoa(i)
		if i%3 == 0 {
			l.PushFront(v)
			model = append([]string{v}, model...)
		} else {
			l.PushBack(v)
			model = append(model, v)
		}
	}
	check(t, l, model)
	for i := range model {
		v, ok := l.Index(i)
		require.True(t, ok)
		require.Equal(t, model[i], v)
		v, ok = l.Index(i - len(model))
		require.True(t, ok)
		require.Equal(t, model[i], v)
	}
	_, ok := l.Index(len(model))
	require.False(t, ok)
	_, ok = l.Index(-len(model) - 1)
	require.False(t, ok)
	for len(model) > 0 {
		if len(model)%2 == 0 {
			require.Equal(t, model[0], l.PopFront())
			model = model[1:]
		} else {
			require.Equal(t, model[len(model)-1], l.PopBack())
			model = model[:len(model)-1]
		}
	}
	check(t, l, nil)
	require.Zero(t, l.Chunks())
}

// TestRandomOps drives every operation at random against a slice model.
func TestRandomOps(t *testing.T) {
	for seed := uint64(0); seed < 30; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		l := New()
		var model []string
		val := func() string { return strconv.Itoa(r.IntN(20)) }
		for step := 0; step < 3000; step++ {
			switch op := r.IntN(12); {
			case op < 3:
				v := val()
				l.PushBack(v)
				model = append(model, v)
			case op < 5:
				v := val()
				l.PushFront(v)
				model = append([]string{v}, model...)
			case op == 5 && len(model) > 0:
				require.Equal(t, model[0], l.PopFront())
				model = model[1:]
			case op == 6 && len(model) > 0:
				require.Equal(t, model[len(model)-1], l.PopBack())
				model = model[:len(model)-1]
			case op == 7:
				i := r.IntN(len(model) + 1)
				v := "i" + val()
				l.Insert(i, v)
				model = slices.Insert(model, i, v)
			case op == 8 && len(model) > 0:
				i := r.IntN(len(model))
				v := "s" + val()
				require.True(t, l.Set(i, v))
				model[i] = v
			case op == 9 && r.IntN(8) == 0:
				v := val()
				limit := r.IntN(4)
				reverse := r.IntN(2) == 0
				want := removeModel(&model, v, limit, reverse)
				require.Equal(t, want, l.Remove(v, limit, reverse))
			case op == 10 && len(model) > 0 && r.IntN(10) == 0:
				s := r.IntN(len(model))
				e := s + r.IntN(len(model)-s)
				l.Trim(s, e)
				model = append([]string(nil), model[s:e+1]...)
			case op == 11 && len(model) > 0:
				s := r.IntN(len(model))
				e := s + r.IntN(len(model)-s)
				var got []string
				l.Range(s, e, func(v string) { got = append(got, v) })
				require.Equal(t, model[s:e+1], got)
			}
			if step%97 == 0 {
				check(t, l, model)
			}
		}
		check(t, l, model)
		c := l.Clone()
		check(t, c, model)
		if len(model) > 0 {
			c.PushFront("clone-only")
			c.Set(len(model)/2, "x")
			check(t, l, model)
		}
	}
}

func removeModel(model *[]string, v string, limit int, reverse bool) int {
	m := *model
	removed := 0
	if !reverse {
		out := m[:0:0]
		for _, x := range m {
			if x == v && (limit == 0 || removed < limit) {
				removed++
				continue
			}
			out = append(out, x)
		}
		*model = out
		return removed
	}
	var out []string
	for i := len(m) - 1; i >= 0; i-- {
		if m[i] == v && (limit == 0 || removed < limit) {
			removed++
			continue
		}
		out = append(out, m[i])
	}
	slices.Reverse(out)
	*model = out
	return removed
}

// TestFragmentation removes most elements from the middle of a long list:
// chunks must merge so the chunk count stays proportional.
func TestFragmentation(t *testing.T) {
	l := New()
	var model []string
	for i := 0; i < 20000; i++ {
		v := strconv.Itoa(i % 50)
		l.PushBack(v)
		model = append(model, v)
	}
	for k := 0; k < 48; k++ {
		v := strconv.Itoa(k)
		want := removeModel(&model, v, 0, k%2 == 0)
		require.Equal(t, want, l.Remove(v, 0, k%2 == 0))
	}
	check(t, l, model)
	require.Equal(t, 800, l.Len())
}

func TestInsertSplitsFullChunks(t *testing.T) {
	l := New()
	var model []string
	for i := 0; i < 5*maxChunk; i++ {
		l.PushBack(strconv.Itoa(i))
		model = append(model, strconv.Itoa(i))
	}
	for k := 0; k < 600; k++ {
		i := (k * 7919) % (len(model) + 1)
		l.Insert(i, "x")
		model = slices.Insert(model, i, "x")
	}
	check(t, l, model)
}

func BenchmarkPushPop(b *testing.B) {
	l := New()
	for i := 0; i < b.N; i++ {
		l.PushBack("value")
		if l.Len() > 1000 {
			l.PopFront()
		}
	}
}

func BenchmarkIndexNearEnds(b *testing.B) {
	l := New()
	for i := 0; i < 1_000_000; i++ {
		l.PushBack("v")
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l.Index(i % 100)
		l.Index(-1 - i%100)
	}
}

// TestOscillateAtChunkBoundary pushes and pops across a chunk boundary at
// both ends, which reuses the spare chunk.
func TestOscillateAtChunkBoundary(t *testing.T) {
	l := New()
	var model []string
	for i := 0; i < maxChunk; i++ {
		l.PushBack(strconv.Itoa(i))
		model = append(model, strconv.Itoa(i))
	}
	for i := 0; i < 300; i++ {
		v := "x" + strconv.Itoa(i)
		if i%2 == 0 {
			l.PushBack(v)
			require.Equal(t, v, l.PopBack())
			l.PushFront(v)
			model = append([]string{v}, model...)
		} else {
			require.Equal(t, model[0], l.PopFront())
			model = model[1:]
		}
		check(t, l, model)
	}
}
