// Package list is the value of a Redis list: a sequence of byte strings
// with O(1) push and pop at both ends.
//
// Elements live in chunks of at most maxChunk items, and the chunks in a
// deque of their own, so a push never copies more than one chunk's worth of
// pointers, and reaching index i walks chunk lengths from the nearer end
// (O(min(i, n-i)/maxChunk)), which keeps LINDEX and LSET near either end
// cheap and is never worse than Redis's quicklist walk. Insertion and
// removal inside a chunk move at most maxChunk items. Interior removals keep
// neighbouring chunks from both becoming small (merging them), so the chunk
// count stays within about 2n/maxChunk.
//
// Elements are Go strings: immutable, so a [List.Clone] can share them and
// replies can be written straight from them.
package list

// maxChunk is the most items one chunk holds.
const maxChunk = 128

type chunk = deque[string]

// List is a list value. The zero value is an empty list. It is not safe for
// concurrent use.
type List struct {
	chunks deque[*chunk]
	n      int
	bytes  int // total length of the elements
	// spare is the last end chunk that emptied, kept for the next push so
	// a stack oscillating across a chunk boundary does not allocate on
	// every push.
	spare *chunk
}

// New returns an empty list.
func New() *List { return &List{} }

// Len is the number of elements.
func (l *List) Len() int { return l.n }

// Bytes is the total length of the elements.
func (l *List) Bytes() int { return l.bytes }

// Chunks is the number of chunks (for memory estimates).
func (l *List) Chunks() int { return l.chunks.Len() }

// PushBack appends v.
func (l *List) PushBack(v string) {
	nc := l.chunks.Len()
	if nc == 0 || l.chunks.Back().Len() >= maxChunk {
		l.chunks.PushBack(l.newChunk(nc > 0, false), 0)
	}
	l.chunks.Back().PushBack(v, maxChunk)
	l.n++
	l.bytes += len(v)
}

// PushFront prepends v.
func (l *List) PushFront(v string) {
	nc := l.chunks.Len()
	if nc == 0 || l.chunks.Front().Len() >= maxChunk {
		l.chunks.PushFront(l.newChunk(nc > 0, true), 0)
	}
	l.chunks.Front().PushFront(v, maxChunk)
	l.n++
	l.bytes += len(v)
}

// newChunk returns a chunk for a push at one end: a full-size one when the
// list already has chunks (it will fill up), else a small one that grows.
func (l *List) newChunk(full, front bool) *chunk {
	if c := l.spare; c != nil && (full || l.n == 0) {
		l.spare = nil
		c.reserveIn(front)
		return c
	}
	c := &chunk{}
	if full {
		c.reserve(maxChunk, front)
	}
	return c
}

// retire drops an emptied end chunk, keeping a full-size one as spare.
func (l *List) retire(c *chunk) {
	if len(c.buf) == maxChunk {
		l.spare = c
	}
}

// PopFront removes and returns the first element; the list must not be
// empty.
func (l *List) PopFront() string {
	c := l.chunks.Front()
	v := c.PopFront()
	if c.Len() == 0 {
		l.retire(l.chunks.PopFront())
	}
	l.n--
	l.bytes -= len(v)
	return v
}

// PopBack removes and returns the last element; the list must not be empty.
func (l *List) PopBack() string {
	c := l.chunks.Back()
	v := c.PopBack()
	if c.Len() == 0 {
		l.retire(l.chunks.PopBack())
	}
	l.n--
	l.bytes -= len(v)
	return v
}

// locate returns the chunk index and offset of element i (0 ≤ i < Len),
// walking from the nearer end.
func (l *List) locate(i int) (ci, off int) {
	nc := l.chunks.Len()
	if i < l.n/2 {
		for ci = 0; ci < nc; ci++ {
			n := l.chunks.At(ci).Len()
			if i < n {
				return ci, i
			}
			i -= n
		}
		panic("list: index out of range")
	}
	back := l.n - 1 - i // position counted from the tail
	for ci = nc - 1; ci >= 0; ci-- {
		n := l.chunks.At(ci).Len()
		if back < n {
			return ci, n - 1 - back
		}
		back -= n
	}
	panic("list: index out of range")
}

// Index returns element i; negative i counts from the tail (-1 is the
// last). ok is false when i is out of range.
func (l *List) Index(i int) (v string, ok bool) {
	if i < 0 {
		i += l.n
	}
	if i < 0 || i >= l.n {
		return "", false
	}
	ci, off := l.locate(i)
	return l.chunks.At(ci).At(off), true
}

// Set replaces element i (negative counts from the tail); it reports false
// when i is out of range.
func (l *List) Set(i int, v string) bool {
	if i < 0 {
		i += l.n
	}
	if i < 0 || i >= l.n {
		return false
	}
	ci, off := l.locate(i)
	c := l.chunks.At(ci)
	l.bytes += len(v) - len(c.At(off))
	c.Set(off, v)
	return true
}

// Range calls fn for elements start..end (inclusive, 0 ≤ start ≤ end <
// Len) in order.
func (l *List) Range(start, end int, fn func(v string)) {
	if start > end {
		return
	}
	ci, off := l.locate(start)
	left := end - start + 1
	for ; left > 0; ci++ {
		c := l.chunks.At(ci)
		for ; off < c.Len() && left > 0; off++ {
			fn(c.At(off))
			left--
		}
		off = 0
	}
}

// Each calls fn for every element with its index, from the head (or from
// the tail when reverse is set), until fn returns false.
func (l *List) Each(reverse bool, fn func(i int, v string) bool) {
	nc := l.chunks.Len()
	if !reverse {
		i := 0
		for ci := 0; ci < nc; ci++ {
			c := l.chunks.At(ci)
			for off := 0; off < c.Len(); off++ {
				if !fn(i, c.At(off)) {
					return
				}
				i++
			}
		}
		return
	}
	i := l.n - 1
	for ci := nc - 1; ci >= 0; ci-- {
		c := l.chunks.At(ci)
		for off := c.Len() - 1; off >= 0; off-- {
			if !fn(i, c.At(off)) {
				return
			}
			i--
		}
	}
}

// Insert puts v at position i (0 ≤ i ≤ Len): before the element now at i,
// or at the tail when i == Len.
func (l *List) Insert(i int, v string) {
	switch {
	case i <= 0:
		l.PushFront(v)
		return
	case i >= l.n:
		l.PushBack(v)
		return
	}
	ci, off := l.locate(i)
	c := l.chunks.At(ci)
	if c.Len() >= maxChunk {
		// Split the full chunk in two halves and insert into the right one.
		half := c.Len() / 2
		right := &chunk{}
		right.reserve(maxChunk, false)
		for x := half; x < c.Len(); x++ {
			right.PushBack(c.At(x), maxChunk)
		}
		c.RemoveRange(half, c.Len())
		l.chunks.Insert(ci+1, right, 0)
		if off >= half {
			c, off = right, off-half
		}
	}
	c.Insert(off, v, maxChunk)
	l.n++
	l.bytes += len(v)
}

// Trim keeps only elements [start, end] (0 ≤ start ≤ end < Len); the
// others are dropped from both ends.
func (l *List) Trim(start, end int) {
	l.dropFront(start)
	l.dropBack(l.n - (end - start + 1))
}

// Clear empties the list.
func (l *List) Clear() { *l = List{} }

// dropFront removes the first k elements.
func (l *List) dropFront(k int) {
	for k > 0 {
		c := l.chunks.Front()
		if c.Len() <= k {
			k -= c.Len()
			l.n -= c.Len()
			l.bytes -= chunkBytes(c, 0, c.Len())
			l.chunks.PopFront()
			continue
		}
		l.n -= k
		l.bytes -= chunkBytes(c, 0, k)
		c.RemoveRange(0, k)
		return
	}
}

// dropBack removes the last k elements.
func (l *List) dropBack(k int) {
	for k > 0 {
		c := l.chunks.Back()
		n := c.Len()
		if n <= k {
			k -= n
			l.n -= n
			l.bytes -= chunkBytes(c, 0, n)
			l.chunks.PopBack()
			continue
		}
		l.n -= k
		l.bytes -= chunkBytes(c, n-k, n)
		c.RemoveRange(n-k, n)
		return
	}
}

func chunkBytes(c *chunk, i, j int) int {
	b := 0
	for ; i < j; i++ {
		b += len(c.At(i))
	}
	return b
}

// Remove deletes elements equal to v: up to limit of them (0: all),
// scanning from the head, or from the tail when reverse is set, and stops
// as soon as the limit is reached. It returns how many were removed.
func (l *List) Remove(v string, limit int, reverse bool) int {
	removed := 0
	nc := l.chunks.Len()
	first, last := -1, -1 // range of chunk indexes visited
	for step := 0; step < nc && (limit == 0 || removed < limit); step++ {
		ci := step
		if reverse {
			ci = nc - 1 - step
		}
		if first < 0 || ci < first {
			first = ci
		}
		if ci > last {
			last = ci
		}
		removed += l.filterChunk(l.chunks.At(ci), v, limit-removed, limit == 0, reverse)
	}
	if removed > 0 {
		l.n -= removed
		l.bytes -= removed * len(v)
		l.compact(first, last)
	}
	return removed
}

// filterChunk removes items equal to v from c, at most max unless all is
// set, in the given direction, compacting the chunk in place.
func (l *List) filterChunk(c *chunk, v string, max int, all, reverse bool) int {
	n := c.Len()
	removed := 0
	if !reverse {
		w := 0
		for r := 0; r < n; r++ {
			x := c.At(r)
			if x == v && (all || removed < max) {
				removed++
				continue
			}
			c.Set(w, x)
			w++
		}
		if removed > 0 {
			c.RemoveRange(w, n)
		}
		return removed
	}
	w := n - 1
	for r := n - 1; r >= 0; r-- {
		x := c.At(r)
		if x == v && (all || removed < max) {
			removed++
			continue
		}
		c.Set(w, x)
		w--
	}
	if removed > 0 {
		c.RemoveRange(0, removed)
	}
	return removed
}

// compact drops the empty chunks among indexes [first, last] and merges
// adjacent chunks (from first-1 to last+1) whose combined length fits in
// half a chunk, so interior removals cannot leave long runs of tiny chunks.
func (l *List) compact(first, last int) {
	if first < 0 {
		return
	}
	if first > 0 {
		first--
	}
	if last < l.chunks.Len()-1 {
		last++
	}
	// Remove empty chunks in the range.
	w := first
	for r := first; r <= last; r++ {
		c := l.chunks.At(r)
		if c.Len() > 0 {
			l.chunks.Set(w, c)
			w++
		}
	}
	if w <= last {
		l.chunks.RemoveRange(w, last+1)
	}
	last = w - 1
	for ci := first; ci < last && ci+1 < l.chunks.Len(); {
		a, b := l.chunks.At(ci), l.chunks.At(ci+1)
		if a.Len()+b.Len() > maxChunk/2 {
			ci++
			continue
		}
		for x := 0; x < b.Len(); x++ {
			a.PushBack(b.At(x), maxChunk)
		}
		l.chunks.RemoveRange(ci+1, ci+2)
		last--
	}
}

// Clone returns an independent copy (elements are shared, being
// immutable).
func (l *List) Clone() *List {
	out := &List{}
	for ci := 0; ci < l.chunks.Len(); ci++ {
		c := l.chunks.At(ci)
		nc := &chunk{}
		nc.buf = make([]string, c.Len())
		copy(nc.buf, c.buf[c.lo:c.hi])
		nc.lo, nc.hi = 0, c.Len()
		out.chunks.PushBack(nc, 0)
	}
	out.n, out.bytes = l.n, l.bytes
	return out
}
