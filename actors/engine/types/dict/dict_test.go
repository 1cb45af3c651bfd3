package dict

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDictMatchesMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	d := New[int](0)
	ref := map[string]int{}
	for i := 0; i < 20000; i++ {
		k := fmt.Sprint(r.IntN(3000))
		switch r.IntN(3) {
		case 0, 1:
			_, had := ref[k]
			require.Equal(t, !had, d.Set([]byte(k), i))
			ref[k] = i
		default:
			v, ok := d.Delete([]byte(k))
			rv, rok := ref[k]
			require.Equal(t, rok, ok)
			require.Equal(t, rv, v)
			delete(ref, k)
		}
		if i%1000 == 0 {
			require.Equal(t, len(ref), d.Len())
			for k, v := range ref {
				got, ok := d.GetString(k)
				require.True(t, ok)
				require.Equal(t, v, got)
			}
		}
	}
	// Shrinks back once mostly empty.
	for k := range ref {
		_, ok := d.DeleteString(k)
		require.True(t, ok)
	}
	require.Equal(t, 0, d.Len())
	require.Equal(t, 0, d.Buckets())
	_, ok := d.Get([]byte("x"))
	require.False(t, ok)
}

// TestScanSurvivesResizes interleaves scan steps with inserts and deletes
// that grow and shrink the table: every key present for the whole scan must
// be reported.
func TestScanSurvivesResizes(t *testing.T) {
	for seed := uint64(0); seed < 8; seed++ {
		r := rand.New(rand.NewPCG(seed, 5))
		d := New[struct{}](0)
		stable := map[string]bool{}
		for i := 0; i < 100; i++ {
			k := fmt.Sprintf("s%d", i)
			d.Set([]byte(k), struct{}{})
			stable[k] = true
		}
		seen := map[string]bool{}
		churn := 0
		growing := true
		cur := uint64(0)
		start, peak, shrunk := d.Buckets(), d.Buckets(), false
		for {
			cur = d.Scan(cur, func(k string, _ struct{}) { seen[k] = true })
			if cur == 0 {
				break
			}
			peak = max(peak, d.Buckets())
			shrunk = shrunk || d.Buckets() < peak
			// Grow hard, then shrink hard, across the scan; the random
			// pauses move the resizes to different cursor positions.
			switch {
			case r.IntN(4) == 0:
			case !growing:
				for j := 0; j < 60 && churn > 0; j++ {
					churn--
					d.Delete([]byte(fmt.Sprintf("c%d", churn)))
				}
			case churn < 3000:
				for j := 0; j < 40; j++ {
					d.Set([]byte(fmt.Sprintf("c%d", churn)), struct{}{})
					churn++
				}
			default:
				growing = false
			}
		}
		for k := range stable {
			require.True(t, seen[k], "seed %d: %s not reported", seed, k)
		}
		require.Greater(t, peak, start, "the table grew during the scan")
		require.True(t, shrunk, "the table shrank during the scan")
	}
}

func TestRandomCoversAll(t *testing.T) {
	d := New[int](0)
	for i := 0; i < 50; i++ {
		d.Set([]byte(fmt.Sprint(i)), i)
	}
	r := rand.New(rand.NewPCG(3, 3))
	seen := map[string]int{}
	for i := 0; i < 20000; i++ {
		k, v := d.Random(r)
		require.Equal(t, k, fmt.Sprint(v))
		seen[k]++
	}
	require.Len(t, seen, 50)
	for _, n := range seen {
		// About 400 each; bucket-then-chain sampling (as Redis's) is not
		// exactly uniform and the hash seed differs per process.
		require.Greater(t, n, 200)
	}
	require.Panics(t, func() { New[int](0).Random(nil) })
}

func TestCloneIsIndependent(t *testing.T) {
	d := New[int](8)
	for i := 0; i < 100; i++ {
		d.Set([]byte(fmt.Sprint(i)), i)
	}
	c := d.Clone(func(v int) int { return v * 2 })
	d.Delete([]byte("5"))
	require.Equal(t, 100, c.Len())
	v, ok := c.GetString("5")
	require.True(t, ok)
	require.Equal(t, 10, v)
	n := 0
	c.ForEach(func(string, int) bool { n++; return n < 10 })
	require.Equal(t, 10, n)
}
