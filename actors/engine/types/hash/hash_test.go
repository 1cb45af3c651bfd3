package hash

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var lim = Limits{MaxEntries: 8, MaxValue: 16}

func contents(h *Hash) map[string]string {
	m := map[string]string{}
	h.Each(func(f, v string) bool {
		m[f] = v
		return true
	})
	return m
}

func checkModel(t *testing.T, h *Hash, model map[string]string) {
	t.Helper()
	require.Equal(t, len(model), h.Len())
	require.Equal(t, model, contents(h))
	b := 0
	for f, v := range model {
		b += len(f) + len(v)
		got, ok := h.Get([]byte(f))
		require.True(t, ok)
		require.Equal(t, v, got)
	}
	require.Equal(t, b, h.Bytes())
}

func TestCompactKeepsInsertionOrder(t *testing.T) {
	h := New()
	require.True(t, h.Set([]byte("a"), []byte("1"), lim))
	require.True(t, h.Set([]byte("b"), []byte("2"), lim))
	require.True(t, h.Set([]byte("c"), []byte("3"), lim))
	require.False(t, h.Set([]byte("a"), []byte("x"), lim)) // update in place
	require.True(t, h.Delete([]byte("b")))
	require.False(t, h.Delete([]byte("b")))
	require.True(t, h.Set([]byte("b"), []byte("4"), lim))
	var order []string
	h.Each(func(f, v string) bool { order = append(order, f+"="+v); return true })
	require.Equal(t, []string{"a=x", "c=3", "b=4"}, order)
	require.True(t, h.Compact())
	// A compact hash scans whole, whatever the cursor.
	for _, cur := range []uint64{0, 5, 1 << 40} {
		n := 0
		require.Zero(t, h.Scan(cur, 1, func(string, string) { n++ }))
		require.Equal(t, 3, n)
	}
}

func TestConversion(t *testing.T) {
	h := New()
	for i := 0; i < 8; i++ {
		h.Set([]byte("f"+strconv.Itoa(i)), []byte("v"), lim)
	}
	require.True(t, h.Compact())
	h.Set([]byte("f8"), []byte("v"), lim)
	require.False(t, h.Compact(), "more than MaxEntries fields")
	for i := 0; i < 9; i++ {
		h.Delete([]byte("f" + strconv.Itoa(i)))
	}
	require.Zero(t, h.Len())
	require.False(t, h.Compact(), "never converts back")

	h = New()
	h.Set([]byte("f"), []byte(strings.Repeat("v", 16)), lim)
	require.True(t, h.Compact())
	h.Set([]byte("g"), []byte(strings.Repeat("v", 17)), lim)
	require.False(t, h.Compact(), "long value")
	checkModel(t, h, map[string]string{"f": strings.Repeat("v", 16), "g": strings.Repeat("v", 17)})

	h = New()
	h.Set([]byte(strings.Repeat("k", 17)), []byte("v"), lim)
	require.False(t, h.Compact(), "long field")
}

func TestRandomOpsAgainstMap(t *testing.T) {
	for seed := uint64(0); seed < 20; seed++ {
		r := rand.New(rand.NewPCG(seed, 3))
		h := New()
		model := map[string]string{}
		for step := 0; step < 2000; step++ {
			f := "f" + strconv.Itoa(r.IntN(60))
			switch r.IntN(4) {
			case 0, 1:
				v := strings.Repeat("x", r.IntN(18))
				_, had := model[f]
				require.Equal(t, !had, h.Set([]byte(f), []byte(v), lim))
				model[f] = v
			case 2:
				_, had := model[f]
				require.Equal(t, had, h.Delete([]byte(f)))
				delete(model, f)
			case 3:
				_, had := model[f]
				require.Equal(t, had, h.Has([]byte(f)))
			}
		}
		checkModel(t, h, model)
		c := h.Clone()
		checkModel(t, c, model)
		c.Set([]byte("clone-only"), []byte("v"), lim)
		checkModel(t, h, model)
	}
}

// TestScanSurvivesResizes adds and removes fields between HSCAN steps:
// every field present throughout must be reported.
func TestScanSurvivesResizes(t *testing.T) {
	h := New()
	stable := map[string]bool{}
	for i := 0; i < 500; i++ {
		f := "s" + strconv.Itoa(i)
		stable[f] = true
		h.Set([]byte(f), []byte("v"), lim)
	}
	seen := map[string]bool{}
	cursor, step, next := uint64(0), 0, 0
	for {
		cursor = h.Scan(cursor, 5, func(f, _ string) { seen[f] = true })
		if cursor == 0 {
			break
		}
		step++
		if step < 40 { // grow
			for k := 0; k < 200; k++ {
				h.Set([]byte("g"+strconv.Itoa(next)), []byte("v"), lim)
				next++
			}
		} else if step < 80 { // shrink back
			for k := 0; k < 300 && next > 0; k++ {
				next--
				h.Delete([]byte("g" + strconv.Itoa(next)))
			}
		}
	}
	for f := range stable {
		require.True(t, seen[f], f)
	}
}

func TestRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{3, 8, 200} {
		h := New()
		for i := 0; i < n; i++ {
			h.Set([]byte("f"+strconv.Itoa(i)), []byte("v"+strconv.Itoa(i)), lim)
		}
		hits := map[string]int{}
		for i := 0; i < 200*n; i++ {
			f, v := h.Random(r)
			require.Equal(t, "v"+f[1:], v)
			hits[f]++
		}
		require.Len(t, hits, n, "every field gets drawn")
		for _, count := range []int{1, 2, n / 2, n - 1} {
			if count <= 0 {
				continue
			}
			got := map[string]bool{}
			var order []int
			h.RandomDistinct(r, count, func(f, v string) {
				require.False(t, got[f], "repeated %s", f)
				require.Equal(t, "v"+f[1:], v)
				got[f] = true
				i, _ := strconv.Atoi(f[1:])
				order = append(order, i)
			})
			require.Len(t, got, count)
			if h.Compact() {
				require.IsIncreasing(t, order, "compact hashes sample in their order")
			}
		}
	}
}
