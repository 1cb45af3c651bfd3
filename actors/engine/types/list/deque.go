package list

// deque is a slice with free room at both ends: the live items are
// buf[lo:hi]. Pushing and popping at either end is O(1) amortised; inserting
// or removing inside moves the shorter side. It is used twice: for the items
// of one chunk (capped at maxChunk) and for the sequence of chunks.
type deque[T any] struct {
	buf    []T
	lo, hi int
}

func (d *deque[T]) Len() int { return d.hi - d.lo }

func (d *deque[T]) At(i int) T { return d.buf[d.lo+i] }

func (d *deque[T]) Set(i int, v T) { d.buf[d.lo+i] = v }

func (d *deque[T]) Front() T { return d.buf[d.lo] }

func (d *deque[T]) Back() T { return d.buf[d.hi-1] }

// PushBack appends v. limit caps the capacity a regrowth may reach (it
// must exceed Len); 0 means no cap.
func (d *deque[T]) PushBack(v T, limit int) {
	if d.hi == len(d.buf) {
		d.regrow(false, limit)
	}
	d.buf[d.hi] = v
	d.hi++
}

// PushFront prepends v; limit as for PushBack.
func (d *deque[T]) PushFront(v T, limit int) {
	if d.lo == 0 {
		d.regrow(true, limit)
	}
	d.lo--
	d.buf[d.lo] = v
}

func (d *deque[T]) PopFront() T {
	var zero T
	v := d.buf[d.lo]
	d.buf[d.lo] = zero // let the GC have it
	d.lo++
	d.recenterIfEmpty()
	return v
}

func (d *deque[T]) PopBack() T {
	var zero T
	d.hi--
	v := d.buf[d.hi]
	d.buf[d.hi] = zero
	d.recenterIfEmpty()
	return v
}

// recenterIfEmpty puts an emptied deque's indexes in the middle so it can
// grow either way without reallocating.
func (d *deque[T]) recenterIfEmpty() {
	if d.lo == d.hi {
		d.lo = len(d.buf) / 2
		d.hi = d.lo
	}
}

// Insert puts v at position i (0 ≤ i ≤ Len), moving the shorter side.
func (d *deque[T]) Insert(i int, v T, limit int) {
	n := d.Len()
	if i == n {
		d.PushBack(v, limit)
		return
	}
	if i == 0 {
		d.PushFront(v, limit)
		return
	}
	if (i < n/2 || d.hi == len(d.buf)) && d.lo > 0 {
		copy(d.buf[d.lo-1:], d.buf[d.lo:d.lo+i])
		d.lo--
	} else {
		if d.hi == len(d.buf) {
			d.regrow(false, limit)
		}
		copy(d.buf[d.lo+i+1:d.hi+1], d.buf[d.lo+i:d.hi])
		d.hi++
	}
	d.buf[d.lo+i] = v
}

// RemoveRange deletes items [i, j), moving the shorter side.
func (d *deque[T]) RemoveRange(i, j int) {
	if i >= j {
		return
	}
	var zero T
	n := d.Len()
	k := j - i
	if i < n-j {
		copy(d.buf[d.lo+k:d.lo+j], d.buf[d.lo:d.lo+i])
		clear(d.buf[d.lo : d.lo+k])
		d.lo += k
	} else {
		copy(d.buf[d.lo+i:], d.buf[d.lo+j:d.hi])
		for x := d.hi - k; x < d.hi; x++ {
			d.buf[x] = zero
		}
		d.hi -= k
	}
	d.recenterIfEmpty()
}

// regrow makes room at the front (front) or back. The capacity doubles
// (capped by limit); when it is already at the cap the items are only
// re-centred, which the caller guarantees leaves room (Len < limit).
func (d *deque[T]) regrow(front bool, limit int) {
	n := d.Len()
	c := 2 * (n + 1)
	if c < 4 {
		c = 4
	}
	if limit > 0 && c > limit {
		c = limit
	}
	if c < n+1 {
		c = n + 1
	}
	free := c - n
	lo := free / 2
	if front {
		lo = (free + 1) / 2
	}
	if c == len(d.buf) {
		// Same size: slide the items inside the buffer.
		copy(d.buf[lo:lo+n], d.buf[d.lo:d.hi])
		var zero T
		for x := range d.buf {
			if x < lo || x >= lo+n {
				d.buf[x] = zero
			}
		}
	} else {
		nb := make([]T, c)
		copy(nb[lo:], d.buf[d.lo:d.hi])
		d.buf = nb
	}
	d.lo, d.hi = lo, lo+n
}

// reserveIn positions an empty deque's indexes for pushes at the front
// (front) or back, keeping its buffer.
func (d *deque[T]) reserveIn(front bool) {
	if front {
		d.lo, d.hi = len(d.buf), len(d.buf)
	} else {
		d.lo, d.hi = 0, 0
	}
}

// reserve gives an empty deque a buffer of capacity c positioned for pushes
// at the front (front) or back, so a chunk that will fill up is allocated
// once.
func (d *deque[T]) reserve(c int, front bool) {
	d.buf = make([]T, c)
	if front {
		d.lo, d.hi = c, c
	} else {
		d.lo, d.hi = 0, 0
	}
}
