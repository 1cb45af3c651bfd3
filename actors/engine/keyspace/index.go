package keyspace

import (
	"hash/maphash"
	"unsafe"
)

// Index is the key lookup table shared by all keyspaces of one shard actor:
// open addressing (linear probing, backward-shift deletion) over (hash,
// entry) cells. A lookup touches one cell and then only the entry it finds,
// instead of a per-slot header, a bucket array and a chain; on a 100k-key
// working set that is two to three cache misses fewer per GET.
//
// The cells are split into 256 independent tables by the top bits of the
// hash. Each resizes on its own, so growing or shrinking never copies more
// than 1/256 of the index at once: a shard with millions of keys does not
// stall its event loop for a whole-table rehash (Redis rehashes
// incrementally for the same reason). The table headers take 8 KB and stay
// in cache.
//
// Keys are told apart by (owning Keyspace, key): a key normally lives in the
// one slot its name hashes to, but nothing here relies on that.
//
// An Index is not safe for concurrent use; the zero value is ready to use.
type Index struct {
	parts   [nparts]part
	count   int
	expires int   // keys with a TTL, over all keyspaces using the index
	used    int64 // the charges of the live entries (Entry.SetCharge)
}

// part is one of the Index's tables.
type part struct {
	cells []cell // power-of-two length; nil until the first insert
	count int
}

type cell struct {
	hash uint64
	e    *Entry // nil: free
}

const (
	partBits = 8
	nparts   = 1 << partBits
	// minCells is the smallest non-empty table.
	minCells = 8
)

// part returns the table that holds hash h; cells within it are chosen by
// the low bits, which are independent of the top ones.
func (ix *Index) part(h uint64) *part { return &ix.parts[h>>(64-partBits)] }

// NewIndex returns an empty index.
func NewIndex() *Index { return new(Index) }

// NewKeyspace returns an empty keyspace whose keys are looked up in ix.
func (ix *Index) NewKeyspace() *Keyspace { return &Keyspace{idx: ix} }

// Len is the number of keys of all keyspaces using ix.
func (ix *Index) Len() int { return ix.count }

// Used is the sum of the charges (Entry.SetCharge) of the live entries of
// all keyspaces using ix.
func (ix *Index) Used() int64 {
	if ix == nil {
		return 0
	}
	return ix.used
}

// Expires is the number of keys with a TTL of all keyspaces using ix, so an
// active expiry cycle can skip a shard without any.
func (ix *Index) Expires() int {
	if ix == nil {
		return 0
	}
	return ix.expires
}

// Lookup returns ks's entry for key, or nil (also for a nil ks or ix). Unlike
// ks.Get it does not read the Keyspace itself, only compares its address,
// which saves a cache miss on the hot path. ks must use ix. It does not
// allocate and does not look at Expire.
func (ix *Index) Lookup(ks *Keyspace, key []byte) *Entry {
	if ks == nil || ix == nil || ix.count == 0 {
		return nil
	}
	return ix.find(ks, maphash.Bytes(seed, key), bytesView(key))
}

// bytesView lets a []byte be compared as a string without a copy; the
// result must not outlive the call it is passed to.
func bytesView(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

func (ix *Index) find(ks *Keyspace, h uint64, key string) *Entry {
	p := ix.part(h)
	if p.count == 0 {
		return nil
	}
	mask := uint64(len(p.cells) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		c := &p.cells[i]
		if c.e == nil {
			return nil
		}
		if c.hash == h && c.e.ks == ks && c.e.key == key {
			return c.e
		}
	}
}

// insert adds e (not yet in the index). A table stays at most 3/4 full, so
// probe runs stay short.
func (ix *Index) insert(e *Entry, h uint64) {
	p := ix.part(h)
	if (p.count+1)*4 > len(p.cells)*3 {
		p.resize(max(minCells, 2*len(p.cells)))
	}
	mask := uint64(len(p.cells) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		if p.cells[i].e == nil {
			p.cells[i] = cell{hash: h, e: e}
			p.count++
			ix.count++
			return
		}
	}
}

// remove takes e out of the index and reports whether it was there. The
// cells after it in its probe run move back, so no tombstones are needed.
// The entry keeps no hash of its own (its bytes go to the charge and the
// eviction metadata), so the key is hashed again: a delete is rarer than a
// lookup.
func (ix *Index) remove(e *Entry) bool {
	h := maphash.String(seed, e.key)
	p := ix.part(h)
	if p.count == 0 {
		return false
	}
	mask := uint64(len(p.cells) - 1)
	i := h & mask
	for ; p.cells[i].e != e; i = (i + 1) & mask {
		if p.cells[i].e == nil {
			return false
		}
	}
	for j := (i + 1) & mask; p.cells[j].e != nil; j = (j + 1) & mask {
		// The cell at j may fill the hole at i unless its home lies
		// (cyclically) after i and at or before j.
		if (j-p.cells[j].hash)&mask >= (j-i)&mask {
			p.cells[i] = p.cells[j]
			i = j
		}
	}
	p.cells[i] = cell{}
	p.count--
	ix.count--
	ix.used -= int64(e.mem)
	if n := len(p.cells); n > minCells && p.count*8 < n {
		p.resize(max(minCells, nextPow2(2*p.count)))
	}
	return true
}

// resize moves every cell into a fresh table of n cells (a power of two).
func (p *part) resize(n int) {
	old := p.cells
	p.cells = make([]cell, n)
	mask := uint64(n - 1)
	for _, c := range old {
		if c.e == nil {
			continue
		}
		i := c.hash & mask
		for p.cells[i].e != nil {
			i = (i + 1) & mask
		}
		p.cells[i] = c
	}
}

// reset empties the index.
func (ix *Index) reset() {
	ix.parts = [nparts]part{}
	ix.count = 0
	ix.expires = 0
	ix.used = 0
}

// prefetchMax is how many keys one Prefetch call handles.
const prefetchMax = 16

// Prefetch reads, for up to 16 keys, the memory a lookup of each will touch
// (index cell, entry, key bytes), one level at a time across all keys. The
// loads of one level do not depend on each other, so the CPU overlaps their
// cache misses, where lookups done one after another between other work
// each pay them in full. It changes nothing and returns a meaningless value
// (which keeps the loads from being optimised away). Call it for a batch of
// commands just before executing them.
func (ix *Index) Prefetch(keys [][]byte) uint64 {
	if ix == nil || ix.count == 0 {
		return 0
	}
	var hs [prefetchMax]uint64
	var cs [prefetchMax]*cell
	var sum uint64
	n := min(len(keys), prefetchMax)
	for i := range n {
		h := maphash.Bytes(seed, keys[i])
		if p := ix.part(h); p.count > 0 {
			hs[i] = h
			cs[i] = &p.cells[h&uint64(len(p.cells)-1)]
			sum += cs[i].hash
		}
	}
	// The probe run: its cells share the home cell's cache line (or the
	// next), so the entry found is the one the lookup will want.
	var es [prefetchMax]*Entry
	for i := range n {
		if cs[i] == nil {
			continue
		}
		p := ix.part(hs[i])
		mask := uint64(len(p.cells) - 1)
		for j := hs[i] & mask; p.cells[j].e != nil; j = (j + 1) & mask {
			if p.cells[j].hash == hs[i] {
				es[i] = p.cells[j].e
				break
			}
		}
	}
	var ps [prefetchMax]*byte
	for i := range n {
		if e := es[i]; e != nil && len(e.key) > 0 {
			ps[i] = unsafe.StringData(e.key)
			sum += uint64(len(e.Str))
		}
	}
	for i := range n {
		if p := ps[i]; p != nil {
			sum += uint64(*p)
		}
	}
	return sum
}
