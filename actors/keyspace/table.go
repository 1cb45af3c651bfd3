package keyspace

import "math/bits"

// minBuckets is the smallest bucket array a non-empty table uses.
const minBuckets = 4

// table is a chained hash table over Entries with a power-of-two bucket
// array. It is threaded through one of the two link slots of Entry (the link
// argument, linkMain or linkExpire), so the same entry can sit in two tables
// at once. It does not own its entries' liveness flags; Keyspace does.
type table struct {
	buckets []*Entry // nil until the first insert
	count   int
}

func (t *table) mask() uint64 { return uint64(len(t.buckets) - 1) }

// insert pushes e onto the head of its bucket. It never resizes; the caller
// decides when to call fit.
func (t *table) insert(e *Entry, link int) {
	if t.buckets == nil {
		t.buckets = make([]*Entry, minBuckets)
	}
	b := &t.buckets[e.hash&t.mask()]
	e.next[link] = *b
	*b = e
	t.count++
}

// unlink removes e from its bucket chain and reports whether it was there.
func (t *table) unlink(e *Entry, link int) bool {
	if len(t.buckets) == 0 {
		return false
	}
	for p := &t.buckets[e.hash&t.mask()]; *p != nil; p = &(*p).next[link] {
		if *p == e {
			*p = e.next[link]
			e.next[link] = nil
			t.count--
			return true
		}
	}
	return false
}

// fit grows the table once it holds more entries than buckets (load factor
// 1) and shrinks it once it is less than 1/8 full, but never below
// minBuckets. It is O(1) unless a resize is due.
func (t *table) fit(link int) {
	n := len(t.buckets)
	switch {
	case t.count > n:
		t.resize(nextPow2(t.count), link)
	case n > minBuckets && t.count*8 < n:
		// Land at load <= 1/2 so that the next few inserts don't grow again.
		t.resize(max(minBuckets, nextPow2(2*t.count)), link)
	}
}

// resize moves every entry into a fresh array of n buckets (a power of two).
// Entries keep their cached hash, so nothing is rehashed.
func (t *table) resize(n int, link int) {
	if n == len(t.buckets) {
		return
	}
	nb := make([]*Entry, n)
	mask := uint64(n - 1)
	for _, e := range t.buckets {
		for e != nil {
			next := e.next[link]
			b := &nb[e.hash&mask]
			e.next[link] = *b
			*b = e
			e = next
		}
	}
	t.buckets = nb
}

// nextPow2 returns the smallest power of two >= n (1 for n <= 1).
func nextPow2(n int) int {
	if n <= 1 {
		return 1
	}
	return 1 << bits.Len(uint(n-1))
}

// scanBatch is how many chain entries a scan step collects on the stack
// before spilling to the heap. Chains are short (load factor <= 1), so the
// spill practically never happens.
const scanBatch = 16

// collect appends the chain of the bucket selected by cursor to batch and
// returns it with the cursor of the next bucket to visit (0 when the scan is
// complete).
//
// This is Redis's reverse-binary cursor: set every bit above the mask, add 1
// to the bit-reversed value and reverse back. That increments the masked
// cursor starting at its most significant bit, so the visit order for a
// table of 2^n buckets is a refinement of the order for 2^(n-1) buckets: each
// small-table bucket b is the union of the big-table buckets b and b+2^(n-1),
// which are visited consecutively. Hence a cursor returned under one size
// is still a valid position under any other size, and every bucket not yet
// visited under the old size is still ahead of it under the new one.
//
// The returned cursor has no bits set at or above len(buckets).
func (t *table) collect(cursor uint64, link int, batch []*Entry) ([]*Entry, uint64) {
	if len(t.buckets) == 0 {
		return batch, 0
	}
	mask := t.mask()
	for e := t.buckets[cursor&mask]; e != nil; e = e.next[link] {
		batch = append(batch, e)
	}
	cursor |= ^mask
	cursor = bits.Reverse64(bits.Reverse64(cursor) + 1)
	return batch, cursor
}
