package keyspace

import (
	"hash/maphash"
	"unsafe"
)

// Index is the key lookup table shared by all keyspaces of one shard actor:
// one open-addressing table (linear probing, backward-shift deletion) of
// (hash, entry) pairs. A lookup touches the index's array and then only the
// entry it finds, instead of a per-slot header, a bucket array and a chain;
// on a 100k-key working set that is two to three cache misses fewer per GET.
//
// Keys are told apart by (owning Keyspace, key): a key normally lives in the
// one slot its name hashes to, but nothing here relies on that.
//
// An Index is not safe for concurrent use; the zero value is ready to use.
type Index struct {
	cells   []cell // power-of-two length; nil until the first insert
	count   int
	expires int // keys with a TTL, over all keyspaces using the index
}

type cell struct {
	hash uint64
	e    *Entry // nil: free
}

// minCells is the smallest non-empty table.
const minCells = 8

// NewIndex returns an empty index.
func NewIndex() *Index { return new(Index) }

// NewKeyspace returns an empty keyspace whose keys are looked up in ix.
func (ix *Index) NewKeyspace() *Keyspace { return &Keyspace{idx: ix} }

// Len is the number of keys of all keyspaces using ix.
func (ix *Index) Len() int { return ix.count }

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
	mask := uint64(len(ix.cells) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		c := &ix.cells[i]
		if c.e == nil {
			return nil
		}
		if c.hash == h && c.e.ks == ks && c.e.key == key {
			return c.e
		}
	}
}

// insert adds e (not yet in the index). The table stays at most 3/4 full,
// so probe runs stay short.
func (ix *Index) insert(e *Entry) {
	if (ix.count+1)*4 > len(ix.cells)*3 {
		ix.resize(max(minCells, 2*len(ix.cells)))
	}
	mask := uint64(len(ix.cells) - 1)
	for i := e.hash & mask; ; i = (i + 1) & mask {
		if ix.cells[i].e == nil {
			ix.cells[i] = cell{hash: e.hash, e: e}
			ix.count++
			return
		}
	}
}

// remove takes e out of the index and reports whether it was there. The
// cells after it in its probe run move back, so no tombstones are needed.
func (ix *Index) remove(e *Entry) bool {
	if ix.count == 0 {
		return false
	}
	mask := uint64(len(ix.cells) - 1)
	i := e.hash & mask
	for ; ix.cells[i].e != e; i = (i + 1) & mask {
		if ix.cells[i].e == nil {
			return false
		}
	}
	for j := (i + 1) & mask; ix.cells[j].e != nil; j = (j + 1) & mask {
		// The cell at j may fill the hole at i unless its home lies
		// (cyclically) after i and at or before j.
		if (j-ix.cells[j].hash)&mask >= (j-i)&mask {
			ix.cells[i] = ix.cells[j]
			i = j
		}
	}
	ix.cells[i] = cell{}
	ix.count--
	if n := len(ix.cells); n > minCells && ix.count*8 < n {
		ix.resize(max(minCells, nextPow2(2*ix.count)))
	}
	return true
}

// resize moves every cell into a fresh table of n cells (a power of two).
func (ix *Index) resize(n int) {
	if ix.count == 0 {
		ix.cells = nil
		if n > 0 {
			ix.cells = make([]cell, n)
		}
		return
	}
	old := ix.cells
	ix.cells = make([]cell, n)
	mask := uint64(n - 1)
	for _, c := range old {
		if c.e == nil {
			continue
		}
		i := c.hash & mask
		for ix.cells[i].e != nil {
			i = (i + 1) & mask
		}
		ix.cells[i] = c
	}
}

// reset empties the index.
func (ix *Index) reset() {
	ix.cells = nil
	ix.count = 0
	ix.expires = 0
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
	var es [prefetchMax]*Entry
	n := min(len(keys), prefetchMax)
	mask := uint64(len(ix.cells) - 1)
	for i := range n {
		es[i] = ix.cells[maphash.Bytes(seed, keys[i])&mask].e
	}
	var ps [prefetchMax]*byte
	var sum uint64
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
