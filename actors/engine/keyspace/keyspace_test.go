package keyspace

import (
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/slotd/slotd/slots"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkInvariants verifies the arrays, the index and the entries'
// bookkeeping against each other.
func checkInvariants(t *testing.T, ks *Keyspace) {
	t.Helper()
	for i, e := range ks.all {
		require.Equal(t, int32(i), e.pos, "%q: stale position", e.key)
		require.True(t, ks.owns(e), "dead entry %q listed", e.key)
		require.Same(t, e, ks.GetString(e.key), "%q not reachable", e.key)
		require.Equal(t, e.Expire != 0, e.flags&flagExpires != 0, "%q: Expire and the expiry list disagree", e.key)
	}
	for i, e := range ks.exp {
		require.Equal(t, int32(i), e.epos, "%q: stale expiry position", e.key)
		require.True(t, ks.owns(e), "dead entry %q in the expiry list", e.key)
		require.NotZero(t, e.flags&flagExpires)
		require.NotZero(t, e.Expire)
	}
	withTTL := 0
	ks.ForEach(func(e *Entry) bool {
		if e.Expire != 0 {
			withTTL++
		}
		return true
	})
	require.Equal(t, withTTL, ks.ExpiresLen())
	if ks.idx != nil {
		checkIndex(t, ks.idx)
		if ks.idx.count == len(ks.all) { // the index is ks's alone
			require.Equal(t, len(ks.exp), ks.idx.Expires())
		}
	}
}

// checkIndex verifies that every cell is in its table and reachable from its
// home cell, and that each table's load stays within bounds.
func checkIndex(t *testing.T, ix *Index) {
	t.Helper()
	total := 0
	for pi := range ix.parts {
		p := &ix.parts[pi]
		n := 0
		mask := uint64(len(p.cells) - 1)
		for i, c := range p.cells {
			if c.e == nil {
				continue
			}
			n++
			require.Equal(t, maphash.String(seed, c.e.key), c.hash, "%q: stale hash", c.e.key)
			require.Same(t, p, ix.part(c.hash), "%q in the wrong table", c.e.key)
			require.NotZero(t, c.e.flags&flagLive, "dead entry %q indexed", c.e.key)
			for j := c.hash & mask; j != uint64(i); j = (j + 1) & mask {
				require.NotNil(t, p.cells[j].e, "%q cut off from its home cell", c.e.key)
			}
		}
		require.Equal(t, p.count, n)
		total += n
		if len(p.cells) > 0 {
			require.Equal(t, 0, len(p.cells)&(len(p.cells)-1), "size not a power of two")
			require.LessOrEqual(t, p.count*4, len(p.cells)*3, "overloaded")
			require.True(t, len(p.cells) == minCells || p.count*8 >= len(p.cells),
				"underloaded: %d entries in %d cells", p.count, len(p.cells))
		}
	}
	require.Equal(t, ix.count, total)
}

// cells is the total index size of ks (0 without an index).
func cells(ks *Keyspace) int {
	if ks.idx == nil {
		return 0
	}
	n := 0
	for i := range ks.idx.parts {
		n += len(ks.idx.parts[i].cells)
	}
	return n
}

func key(i int) []byte { return []byte("key:" + strconv.Itoa(i)) }

func TestZeroValue(t *testing.T) {
	for _, ks := range []*Keyspace{{}, New()} {
		assert.Zero(t, ks.Len())
		assert.Zero(t, ks.ExpiresLen())
		assert.Nil(t, ks.Get([]byte("x")))
		assert.Nil(t, ks.GetString("x"))
		assert.Nil(t, ks.Delete([]byte("x")))
		assert.Nil(t, ks.Random(nil))
		assert.Zero(t, ks.Scan(0, func(*Entry) { t.Fatal("visited") }))
		assert.Zero(t, ks.Scan(12345, func(*Entry) { t.Fatal("visited") }))
		assert.Zero(t, ks.ScanExpires(0, func(*Entry) { t.Fatal("visited") }))
		ks.ForEach(func(*Entry) bool { t.Fatal("visited"); return true })
		ks.Clear()
		assert.Zero(t, cells(ks), "an empty keyspace must not allocate an index")
		assert.Nil(t, ks.exp)
	}
}

func TestAddGetDelete(t *testing.T) {
	ks := New()
	buf := []byte("hello")
	e := ks.Add(buf)
	require.NotNil(t, e)
	assert.Equal(t, "hello", e.Key())
	assert.Equal(t, KindString, e.Kind)
	assert.Zero(t, e.Expire)
	e.Str = []byte("world")
	buf[0] = 'j' // Add must have copied the key
	assert.Equal(t, "hello", e.Key())
	assert.Same(t, e, ks.Get([]byte("hello")))
	assert.Same(t, e, ks.GetString("hello"))
	assert.Nil(t, ks.Get(buf))
	assert.Equal(t, 1, ks.Len())
	assert.NotZero(t, cells(ks))
	assert.Nil(t, ks.exp, "the expiry list is allocated lazily")

	const n = 5000
	for i := range n {
		ks.Add(key(i)).Str = key(i)
	}
	require.Equal(t, n+1, ks.Len())
	checkInvariants(t, ks)
	for i := range n {
		got := ks.Get(key(i))
		require.NotNil(t, got, i)
		require.Equal(t, key(i), got.Str)
		require.Same(t, got, ks.GetString(string(key(i))))
	}
	assert.Nil(t, ks.Get(key(n)))

	d := ks.Delete([]byte("hello"))
	require.Same(t, e, d)
	assert.Equal(t, []byte("world"), d.Str, "the deleted entry keeps its value")
	assert.Nil(t, ks.Delete([]byte("hello")))
	assert.Nil(t, ks.GetString("hello"))
	for i := 0; i < n; i += 2 {
		require.NotNil(t, ks.Delete(key(i)))
	}
	require.Equal(t, n/2, ks.Len())
	checkInvariants(t, ks)
	for i := range n {
		if i%2 == 0 {
			require.Nil(t, ks.Get(key(i)))
		} else {
			require.NotNil(t, ks.Get(key(i)))
		}
	}
	for i := 1; i < n; i += 2 {
		require.NotNil(t, ks.Delete(key(i)))
	}
	require.Zero(t, ks.Len())
	assert.LessOrEqual(t, cells(ks), nparts*minCells, "shrinks to the minimum")
	checkInvariants(t, ks)
}

func TestEmptyAndBinaryKeys(t *testing.T) {
	ks := New()
	keys := [][]byte{{}, {0}, {0, 0}, {0xff}, []byte("a\x00b")}
	for _, k := range keys {
		require.Nil(t, ks.Get(k))
		ks.Add(k)
	}
	for _, k := range keys {
		e := ks.Get(k)
		require.NotNil(t, e)
		require.Equal(t, string(k), e.Key())
	}
	require.NotNil(t, ks.GetString(""))
	require.NotNil(t, ks.Delete(nil))
	require.Nil(t, ks.Get([]byte{}))
	require.Equal(t, len(keys)-1, ks.Len())
}

func TestGetOrAdd(t *testing.T) {
	ks := New()
	e, added := ks.GetOrAdd([]byte("k"))
	require.True(t, added)
	e2, added := ks.GetOrAdd([]byte("k"))
	require.False(t, added)
	require.Same(t, e, e2)
	for i := range 100 {
		_, added := ks.GetOrAdd(key(i))
		require.True(t, added)
	}
	for i := range 100 {
		got, added := ks.GetOrAdd(key(i))
		require.False(t, added)
		require.Same(t, ks.Get(key(i)), got)
	}
	require.Equal(t, 101, ks.Len())
	checkInvariants(t, ks)
}

func TestDeleteEntry(t *testing.T) {
	ks := New()
	a := ks.Add([]byte("a"))
	b := ks.Add([]byte("b"))
	ks.SetExpire(b, 100)
	require.True(t, ks.DeleteEntry(b))
	require.False(t, ks.DeleteEntry(b))
	require.Nil(t, ks.GetString("b"))
	require.Zero(t, ks.ExpiresLen())
	require.Equal(t, int64(100), b.Expire)
	other := New()
	require.False(t, other.DeleteEntry(a), "entry of another keyspace")
	require.Equal(t, 1, ks.Len())
	// A re-added key is a new entry; the old pointer stays dead.
	b2 := ks.Add([]byte("b"))
	require.False(t, ks.DeleteEntry(b))
	require.Same(t, b2, ks.GetString("b"))
	checkInvariants(t, ks)
}

func TestResizePolicy(t *testing.T) {
	ks := New()
	grew := 0
	for i := range 1 << 14 {
		before := cells(ks)
		ks.Add(key(i))
		if cells(ks) > before {
			grew++
			// One table at a time: at most 1/256 of the index is rehashed.
			require.LessOrEqual(t, cells(ks)-before, 4*minCells+4*(i+1)/nparts+64, "key %d", i)
		}
	}
	require.Greater(t, grew, nparts, "every table grew, separately")
	checkInvariants(t, ks)
	for i := range 1 << 14 {
		ks.Delete(key(i))
		if i%1024 == 0 {
			checkIndex(t, ks.idx)
		}
	}
	assert.LessOrEqual(t, cells(ks), nparts*minCells)
	checkInvariants(t, ks)
}

func TestSharedIndex(t *testing.T) {
	ix := NewIndex()
	a, b := ix.NewKeyspace(), ix.NewKeyspace()
	ea := a.Add([]byte("k"))
	require.Nil(t, b.Get([]byte("k")), "keyspaces sharing an index keep their keys apart")
	eb := b.Add([]byte("k"))
	require.Same(t, ea, ix.Lookup(a, []byte("k")))
	require.Same(t, eb, ix.Lookup(b, []byte("k")))
	require.Nil(t, ix.Lookup(nil, []byte("k")))
	for i := range 1000 {
		a.Add(key(i))
		b.Add(key(i))
	}
	require.Equal(t, 2002, ix.Len())
	a.SetExpire(a.Get(key(1)), 5)
	a.SetExpire(a.Get(key(2)), 5)
	b.SetExpire(b.Get(key(1)), 5)
	require.Equal(t, 3, ix.Expires())
	a.Clear() // b still uses the index: a's keys leave it one by one
	require.Equal(t, 1001, ix.Len())
	require.Nil(t, ix.Lookup(a, []byte("k")))
	require.Same(t, eb, ix.Lookup(b, []byte("k")))
	require.Equal(t, 1, ix.Expires())
	checkInvariants(t, b)
	b.Delete(key(1))
	require.Zero(t, ix.Expires())
	b.Clear()
	require.Zero(t, ix.Len())
	require.Nil(t, ix.Lookup(b, []byte("k")))
}

func TestAddString(t *testing.T) {
	ks := New()
	k, v := []byte("key"), []byte("value")
	e := ks.AddString(k, v)
	k[0], v[0] = 'x', 'x' // both copied
	require.Equal(t, "key", e.Key())
	require.Equal(t, "value", string(e.Str))
	e.Str = append(e.Str, "-more"...) // growing the value leaves the key alone
	require.Equal(t, "key", e.Key())
	require.Same(t, e, ks.Get([]byte("key")))
	checkInvariants(t, ks)
}

func TestSetExpire(t *testing.T) {
	ks := New()
	for i := range 100 {
		e := ks.Add(key(i))
		if i%3 == 0 {
			ks.SetExpire(e, int64(1000+i))
		}
	}
	require.Equal(t, 34, ks.ExpiresLen())
	checkInvariants(t, ks)

	e := ks.Get(key(0))
	ks.SetExpire(e, 5) // change: still indexed once
	require.Equal(t, int64(5), e.Expire)
	require.Equal(t, 34, ks.ExpiresLen())
	ks.SetExpire(e, 0) // persist
	require.Zero(t, e.Expire)
	require.Equal(t, 33, ks.ExpiresLen())
	ks.SetExpire(e, 0)
	require.Equal(t, 33, ks.ExpiresLen())
	ks.SetExpire(e, -1) // negative (already expired) still counts as a TTL
	require.Equal(t, 34, ks.ExpiresLen())
	checkInvariants(t, ks)

	ks.Delete(key(3))
	require.Equal(t, 33, ks.ExpiresLen())
	checkInvariants(t, ks)

	// Growing and shrinking the expiry index alone.
	ks.ForEach(func(e *Entry) bool { ks.SetExpire(e, 0); return true })
	require.Zero(t, ks.ExpiresLen())
	ks.ForEach(func(e *Entry) bool { ks.SetExpire(e, 7); return true })
	require.Equal(t, 99, ks.ExpiresLen())
	checkInvariants(t, ks)

	dead := ks.Delete(key(50))
	ks.SetExpire(dead, 0) // only the field
	require.Zero(t, dead.Expire)
	require.Equal(t, 98, ks.ExpiresLen())
	checkInvariants(t, ks)
}

// scanAll runs a full Scan, calling between after every step, and returns
// how often each key was reported.
func scanAll(ks *Keyspace, expires bool, between func(step int)) map[string]int {
	seen := map[string]int{}
	fn := func(e *Entry) { seen[e.Key()]++ }
	cursor, step := uint64(0), 0
	for {
		if expires {
			cursor = ks.ScanExpires(cursor, fn)
		} else {
			cursor = ks.Scan(cursor, fn)
		}
		if cursor == 0 {
			return seen
		}
		if between != nil {
			between(step)
		}
		step++
	}
}

func TestScanStableTableVisitsEachOnce(t *testing.T) {
	ks := New()
	for i := range 1000 {
		ks.Add(key(i))
	}
	seen := scanAll(ks, false, nil)
	require.Len(t, seen, 1000)
	for k, n := range seen {
		require.Equal(t, 1, n, k)
	}
	// The cursor is always below the key count.
	for c := ks.Scan(0, func(*Entry) {}); c != 0; c = ks.Scan(c, func(*Entry) {}) {
		require.Less(t, c, uint64(ks.Len()))
	}
}

func TestScanSurvivesGrowth(t *testing.T) {
	ks := New()
	const stable = 200
	for i := range stable {
		ks.Add(key(i))
	}
	next := stable
	sizes := map[int]bool{}
	seen := scanAll(ks, false, func(step int) {
		if step >= 200 {
			// Stop growing: with one entry per call, a scan that keeps
			// growing would never finish.
			return
		}
		for range 25 {
			ks.Add(key(next))
			next++
		}
		sizes[cells(ks)] = true
	})
	require.Greater(t, len(sizes), 3, "the table should have grown several times mid-scan")
	for i := range stable {
		require.Positive(t, seen[string(key(i))], i)
	}
	checkInvariants(t, ks)
}

func TestScanSurvivesShrink(t *testing.T) {
	ks := New()
	const stable, total = 50, 20000
	for i := range total {
		ks.Add(key(i))
	}
	next := stable
	sizes := map[int]bool{}
	seen := scanAll(ks, false, func(int) {
		for range 40 {
			if next < total {
				ks.Delete(key(next))
				next++
			}
		}
		sizes[cells(ks)] = true
	})
	require.Greater(t, len(sizes), 3, "the table should have shrunk several times mid-scan")
	for i := range stable {
		require.Positive(t, seen[string(key(i))], i)
	}
	checkInvariants(t, ks)
}

// TestScanInterleavedRandom mixes growth and shrink phases with random
// inserts and deletes between Scan calls.
func TestScanInterleavedRandom(t *testing.T) {
	resizes := 0
	for seedN := range uint64(20) {
		r := rand.New(rand.NewPCG(seedN, 99))
		ks := New()
		stable := map[string]bool{}
		var volatile []string
		n := 0
		newKey := func() string { n++; return "v" + strconv.Itoa(n) }
		for range 300 + r.IntN(3000) {
			k := newKey()
			if r.IntN(4) == 0 {
				stable[k] = true
			} else {
				volatile = append(volatile, k)
			}
			ks.Add([]byte(k))
		}
		seen := scanAll(ks, false, func(step int) {
			if step >= 400 {
				return // let the scan finish
			}
			before := cells(ks)
			grow := (step/20)%2 == 0
			for range r.IntN(60) {
				if grow || len(volatile) == 0 || r.IntN(5) == 0 {
					k := newKey()
					volatile = append(volatile, k)
					ks.Add([]byte(k))
				} else {
					i := r.IntN(len(volatile))
					require.NotNil(t, ks.Delete([]byte(volatile[i])))
					volatile[i] = volatile[len(volatile)-1]
					volatile = volatile[:len(volatile)-1]
				}
			}
			if cells(ks) != before {
				resizes++
			}
		})
		for k := range stable {
			require.Positive(t, seen[k], "%s, seed %d", k, seedN)
		}
		checkInvariants(t, ks)
	}
	require.Positive(t, resizes, "the index should have been resized mid-scan")
}

func TestScanMutationInCallback(t *testing.T) {
	t.Run("delete every visited entry", func(t *testing.T) {
		ks := New()
		for i := range 3000 {
			ks.Add(key(i))
		}
		visits := 0
		cursor := uint64(0)
		for {
			cursor = ks.Scan(cursor, func(e *Entry) {
				require.Same(t, e, ks.GetString(e.Key()), "visited a dead entry")
				require.True(t, ks.DeleteEntry(e))
				visits++
			})
			if cursor == 0 {
				break
			}
		}
		// Every key was present until visited, so every key was visited.
		require.Equal(t, 3000, visits)
		require.Zero(t, ks.Len())
		checkInvariants(t, ks)
	})

	t.Run("delete neighbours", func(t *testing.T) {
		ks := New()
		keys := []string{"c0", "c1", "c2", "c3"}
		for _, k := range keys {
			ks.Add([]byte(k))
		}
		var visited []string
		next := ks.Scan(0, func(e *Entry) {
			visited = append(visited, e.Key())
			for _, k := range keys {
				ks.Delete([]byte(k)) // including e and entries not yet visited
			}
			for i := range 100 {
				ks.Add(key(i)) // and force a resize mid-callback
			}
		})
		require.Len(t, visited, 1)
		require.NotZero(t, next)
		checkInvariants(t, ks)
	})

	t.Run("persist in ScanExpires", func(t *testing.T) {
		ks := New()
		keys := []string{"x0", "x1", "x2"}
		for _, k := range keys {
			ks.SetExpire(ks.Add([]byte(k)), 1)
		}
		calls := 0
		ks.ScanExpires(1, func(e *Entry) {
			calls++
			for _, k := range keys {
				ks.SetExpire(ks.GetString(k), 0)
			}
		})
		require.Equal(t, 1, calls)
		require.Zero(t, ks.ExpiresLen())
		checkInvariants(t, ks)
	})
}

func TestScanExpires(t *testing.T) {
	ks := New()
	const n = 2000
	now := int64(1_000_000)
	want := map[string]bool{}
	for i := range n {
		e := ks.Add(key(i))
		switch i % 4 {
		case 0: // no TTL
		case 1:
			ks.SetExpire(e, now-1) // expired
			want[e.Key()] = true
		default:
			ks.SetExpire(e, now+int64(i))
			want[e.Key()] = true
		}
	}
	seen := scanAll(ks, true, nil)
	require.Len(t, seen, len(want))
	for k := range want {
		require.Equal(t, 1, seen[k], k)
	}

	// Active expiry: walk the index, deleting what has expired, while other
	// commands keep adding keys with TTLs.
	added := 0
	cursor := uint64(0)
	for {
		cursor = ks.ScanExpires(cursor, func(e *Entry) {
			require.NotZero(t, e.Expire)
			if e.Expire <= now {
				require.True(t, ks.DeleteEntry(e))
			}
		})
		if cursor == 0 {
			break
		}
		if added < 500 { // not every step: one bucket per step could never catch up
			e := ks.Add([]byte("late:" + strconv.Itoa(added)))
			ks.SetExpire(e, now+1)
			added++
		}
	}
	require.Equal(t, n-n/4+added, ks.Len())
	require.Equal(t, n/2+added, ks.ExpiresLen())
	ks.ForEach(func(e *Entry) bool {
		require.False(t, e.Expire != 0 && e.Expire <= now, "%q survived", e.Key())
		return true
	})
	checkInvariants(t, ks)
}

func TestRandom(t *testing.T) {
	ks := New()
	r := rand.New(rand.NewPCG(1, 2))
	require.Nil(t, ks.Random(r))
	const n, draws = 10, 20000
	for i := range n {
		ks.Add(key(i))
	}
	counts := map[string]int{}
	for range draws {
		counts[ks.Random(r).Key()]++
	}
	require.Len(t, counts, n, "every key must come up")
	for k, c := range counts {
		// Uniform would be 2000; chain-length bias can at worst cut a key's
		// share a few times over.
		require.Greater(t, c, draws/n/6, k)
	}
	require.NotNil(t, ks.Random(nil))

	// A mostly deleted (shrunk) table still samples everything quickly.
	for i := n; i < 5000; i++ {
		ks.Add(key(i))
	}
	for i := n; i < 5000; i++ {
		ks.Delete(key(i))
	}
	clear(counts)
	for range draws {
		counts[ks.Random(r).Key()]++
	}
	require.Len(t, counts, n)

	ks.Clear()
	require.Nil(t, ks.Random(r))
}

func TestClear(t *testing.T) {
	ks := New()
	var old []*Entry
	for i := range 100 {
		e := ks.Add(key(i))
		ks.SetExpire(e, 9)
		old = append(old, e)
	}
	ks.Clear()
	require.Zero(t, ks.Len())
	require.Zero(t, ks.ExpiresLen())
	require.Nil(t, ks.Get(key(1)))
	for _, e := range old {
		require.False(t, ks.DeleteEntry(e))
		ks.SetExpire(e, 0) // must not touch the new index
		ks.SetExpire(e, 1)
	}
	require.Zero(t, ks.ExpiresLen())
	e := ks.Add(key(1))
	ks.SetExpire(e, 3)
	require.Equal(t, 1, ks.ExpiresLen())
	checkInvariants(t, ks)

	// Clear from inside a scan callback: the rest of the batch is skipped.
	for i := range 50 {
		ks.Add(key(100 + i))
	}
	calls := 0
	fn := func(*Entry) {
		calls++
		ks.Clear()
	}
	for c := ks.Scan(0, fn); c != 0; c = ks.Scan(c, fn) {
	}
	require.Equal(t, 1, calls)
	require.Zero(t, ks.Len())
}

func TestForEach(t *testing.T) {
	ks := New()
	for i := range 500 {
		ks.Add(key(i))
	}
	seen := map[string]int{}
	ks.ForEach(func(e *Entry) bool { seen[e.Key()]++; return true })
	require.Len(t, seen, 500)
	for _, c := range seen {
		require.Equal(t, 1, c)
	}

	calls := 0
	ks.ForEach(func(*Entry) bool { calls++; return calls < 7 })
	require.Equal(t, 7, calls)

	// Deleting everything (visited or not) and adding during the walk:
	// deleted entries are not visited, added ones neither.
	visitedOld := 0
	deleted := map[string]bool{}
	ks.ForEach(func(e *Entry) bool {
		require.False(t, deleted[e.Key()], "visited a deleted entry")
		if e.Key()[:4] == "key:" {
			visitedOld++
		}
		for i := range 500 {
			if k := key(i); !deleted[string(k)] && ks.Delete(k) != nil {
				deleted[string(k)] = true
				if len(deleted)%10 == 0 {
					ks.Add([]byte("new" + strconv.Itoa(len(deleted))))
				}
			}
		}
		return true
	})
	require.Equal(t, 1, visitedOld, "the first callback deleted all other old keys")
	require.Equal(t, 50, ks.Len())
	checkInvariants(t, ks)

	// Nested walks.
	pairs := 0
	ks.ForEach(func(*Entry) bool {
		ks.ForEach(func(*Entry) bool { pairs++; return true })
		return true
	})
	require.Equal(t, 50*50, pairs)
}

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{
		KindString: "string", KindList: "list", KindHash: "hash",
		KindSet: "set", KindZSet: "zset", KindStream: "stream", 42: "unknown",
	} {
		assert.Equal(t, want, k.String())
	}
}

func TestNoAllocs(t *testing.T) {
	ks := New()
	for i := range 1000 {
		ks.Add(key(i))
	}
	k := key(500)
	ks.SetExpire(ks.Get(k), 10)
	sk := string(k)
	miss := []byte("missing")
	r := rand.New(rand.NewPCG(3, 4))
	fn := func(*Entry) {}
	pat := []byte("key:5*")
	cases := map[string]func(){
		"Get":         func() { _ = ks.Get(k) },
		"GetMiss":     func() { _ = ks.Get(miss) },
		"GetString":   func() { _ = ks.GetString(sk) },
		"Scan":        func() { ks.Scan(3, fn) },
		"ScanExpires": func() { ks.ScanExpires(0, fn) },
		"Random":      func() { _ = ks.Random(r) },
		"SetExpire":   func() { ks.SetExpire(ks.Get(k), 11) },
		"MatchKey":    func() { _ = slots.MatchKey(pat, sk, true) },
		"Match":       func() { _ = slots.Match(pat, k, false) },
	}
	for name, f := range cases {
		assert.Zero(t, testing.AllocsPerRun(100, f), name)
	}
}

func BenchmarkGetHit(b *testing.B) {
	for _, n := range []int{16, 1 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			ks := New()
			keys := make([][]byte, n)
			for i := range keys {
				keys[i] = key(i)
				ks.Add(keys[i])
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if ks.Get(keys[i&(n-1)]) == nil {
					b.Fatal("miss")
				}
			}
		})
	}
}

func BenchmarkGetMiss(b *testing.B) {
	ks := New()
	for i := range 1 << 10 {
		ks.Add(key(i))
	}
	k := []byte("no such key")
	b.ReportAllocs()
	for b.Loop() {
		if ks.Get(k) != nil {
			b.Fatal("hit")
		}
	}
}

func BenchmarkAddDelete(b *testing.B) {
	ks := New()
	for i := range 1 << 10 {
		ks.Add(key(i))
	}
	keys := make([][]byte, 1<<10)
	for i := range keys {
		keys[i] = key(1<<20 + i)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		k := keys[i&(len(keys)-1)]
		ks.Add(k)
		ks.Delete(k)
	}
}

// BenchmarkAddGrow measures inserting into a fresh keyspace, resizes included.
func BenchmarkAddGrow(b *testing.B) {
	keys := make([][]byte, 1<<16)
	for i := range keys {
		keys[i] = key(i)
	}
	b.ReportAllocs()
	for b.Loop() {
		ks := New()
		for _, k := range keys {
			ks.Add(k)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(keys)), "ns/key")
}

func BenchmarkScanFull(b *testing.B) {
	ks := New()
	for i := range 1 << 16 {
		ks.Add(key(i))
	}
	n := 0
	fn := func(*Entry) { n++ }
	b.ReportAllocs()
	for b.Loop() {
		for c := ks.Scan(0, fn); c != 0; c = ks.Scan(c, fn) {
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N<<16), "ns/key")
}

func BenchmarkRandom(b *testing.B) {
	ks := New()
	for i := range 1 << 16 {
		ks.Add(key(i))
	}
	r := rand.New(rand.NewPCG(1, 1))
	b.ReportAllocs()
	for b.Loop() {
		_ = ks.Random(r)
	}
}

// BenchmarkShardLookup is the hot path of GET in one shard actor: 100k keys
// spread over 16384 slot keyspaces sharing one index, looked up in a
// pseudo-random order (as redis-benchmark -r 100000 does), in batches of 16
// (a pipelined read), each lookup waiting for the previous one as in the
// server, where the work between two lookups leaves no room to overlap
// them. "prefetch" runs Index.Prefetch over each batch first.
func BenchmarkShardLookup(b *testing.B) {
	const nkeys, nslots, batch = 100000, 16384, 16
	ix := NewIndex()
	spaces := make([]*Keyspace, nslots)
	for i := range spaces {
		spaces[i] = ix.NewKeyspace()
	}
	keys := make([][]byte, nkeys)
	slotOf := make([]int, nkeys)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("key:%012d", i))
		slotOf[i] = int(maphash.Bytes(maphash.MakeSeed(), keys[i]) % nslots)
		spaces[slotOf[i]].AddString(keys[i], []byte("xyz"))
	}
	r := rand.New(rand.NewPCG(1, 2))
	order := make([]int, 1<<16)
	for i := range order {
		order[i] = r.IntN(nkeys)
	}
	for _, pre := range []bool{false, true} {
		b.Run(fmt.Sprintf("prefetch=%v", pre), func(b *testing.B) {
			var bk [batch][]byte
			n := 0
			for i := 0; b.Loop(); i++ {
				base := (i * batch) & (len(order) - 1)
				if pre {
					for j := range bk {
						bk[j] = keys[order[base+j]]
					}
					n += int(ix.Prefetch(bk[:]) & 1)
				}
				for j := range batch {
					k := order[base+j+n>>62]
					if e := ix.Lookup(spaces[slotOf[k]], keys[k]); e != nil {
						n += int(e.Str[0]&1) + int(e.Key()[11]&1)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/key")
		})
	}
}

// The index's Used follows the live entries' charges through adds,
// recharges, deletes and clears, on a shared index.
func TestUsedFollowsCharges(t *testing.T) {
	ix := NewIndex()
	a, b := ix.NewKeyspace(), ix.NewKeyspace()
	e1 := a.Add([]byte("k1"))
	e1.SetCharge(100)
	e2 := b.AddString([]byte("k2"), []byte("v"))
	e2.SetCharge(50)
	require.Equal(t, int64(150), ix.Used())
	e1.SetCharge(70)
	require.Equal(t, int64(120), ix.Used())
	require.NotNil(t, a.Delete([]byte("k1")))
	require.Equal(t, int64(50), ix.Used())
	e1.SetCharge(1000) // dead: not counted
	require.Equal(t, int64(50), ix.Used())
	require.Equal(t, int64(1000), e1.Charge())
	e3 := a.Add([]byte("k3"))
	e3.SetCharge(7)
	b.Clear() // shared index: entry by entry
	require.Equal(t, int64(7), ix.Used())
	a.Clear()
	require.Equal(t, int64(0), ix.Used())
	own := New()
	own.Add([]byte("x")).SetCharge(9)
	own.Clear() // own index: reset
	require.Equal(t, int64(0), own.idx.Used())
}
