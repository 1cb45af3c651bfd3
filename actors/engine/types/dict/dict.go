// Package dict is a string-keyed chained hash table for the members of
// collection values (set members, sorted-set members).
//
// A Go map would be smaller to write but cannot do two things Redis
// semantics need: a resumable cursor scan that survives resizes (SSCAN,
// ZSCAN), and cheap random sampling (SPOP, SRANDMEMBER, ZRANDMEMBER). The
// table here has a power-of-two bucket array walked with Redis's
// reverse-binary cursor (Redis uses it for SCAN too): the
// visit order for 2^n buckets refines the order for 2^(n-1) buckets, so a
// cursor handed out under one table size stays a valid position under any
// other, and every member present for the whole scan is reported at least
// once (a shrink may report some twice).
//
// Costs: every operation is O(1) expected; a resize is one O(n) pass (the
// cached hashes are not recomputed), amortised over the inserts or deletes
// that caused it. Not safe for concurrent use: a value belongs to the shard
// actor that owns its key.
package dict

import (
	"hash/maphash"
	"math/bits"
	"math/rand/v2"
)

// seed keys the hash for the whole process, so bucket placement cannot be
// predicted from outside.
var seed = maphash.MakeSeed()

const minBuckets = 4

type entry[V any] struct {
	key  string
	hash uint64
	val  V
	next *entry[V]
}

// Dict maps member strings to values of type V. The zero value is an empty,
// usable Dict.
type Dict[V any] struct {
	buckets []*entry[V]
	count   int
}

// New returns an empty Dict sized for about hint members.
func New[V any](hint int) *Dict[V] {
	d := &Dict[V]{}
	if hint > 0 {
		d.buckets = make([]*entry[V], max(minBuckets, nextPow2(hint)))
	}
	return d
}

// Len is the number of members.
func (d *Dict[V]) Len() int { return d.count }

// Buckets is the size of the bucket array (for memory estimates).
func (d *Dict[V]) Buckets() int { return len(d.buckets) }

func (d *Dict[V]) mask() uint64 { return uint64(len(d.buckets) - 1) }

// Get returns the value stored for key.
func (d *Dict[V]) Get(key []byte) (V, bool) {
	if d.count > 0 {
		h := maphash.Bytes(seed, key)
		for e := d.buckets[h&d.mask()]; e != nil; e = e.next {
			if e.hash == h && e.key == string(key) {
				return e.val, true
			}
		}
	}
	var zero V
	return zero, false
}

// GetString is Get for a string key.
func (d *Dict[V]) GetString(key string) (V, bool) {
	if d.count > 0 {
		h := maphash.String(seed, key)
		for e := d.buckets[h&d.mask()]; e != nil; e = e.next {
			if e.hash == h && e.key == key {
				return e.val, true
			}
		}
	}
	var zero V
	return zero, false
}

// Has reports whether key is a member.
func (d *Dict[V]) Has(key []byte) bool {
	_, ok := d.Get(key)
	return ok
}

// Set stores v under key (copying the key bytes) and reports whether key was
// new.
func (d *Dict[V]) Set(key []byte, v V) bool {
	h := maphash.Bytes(seed, key)
	if d.count > 0 {
		for e := d.buckets[h&d.mask()]; e != nil; e = e.next {
			if e.hash == h && e.key == string(key) {
				e.val = v
				return false
			}
		}
	}
	d.insert(&entry[V]{key: string(key), hash: h, val: v})
	return true
}

// SetString is Set for a string key; the string is kept as is (callers can
// share one string between the dict and another index).
func (d *Dict[V]) SetString(key string, v V) bool {
	h := maphash.String(seed, key)
	if d.count > 0 {
		for e := d.buckets[h&d.mask()]; e != nil; e = e.next {
			if e.hash == h && e.key == key {
				e.val = v
				return false
			}
		}
	}
	d.insert(&entry[V]{key: key, hash: h, val: v})
	return true
}

func (d *Dict[V]) insert(e *entry[V]) {
	if d.buckets == nil {
		d.buckets = make([]*entry[V], minBuckets)
	}
	b := &d.buckets[e.hash&d.mask()]
	e.next = *b
	*b = e
	d.count++
	if d.count > len(d.buckets) {
		d.resize(nextPow2(d.count))
	}
}

// Delete removes key and returns its value.
func (d *Dict[V]) Delete(key []byte) (V, bool) {
	var zero V
	if d.count == 0 {
		return zero, false
	}
	h := maphash.Bytes(seed, key)
	for p := &d.buckets[h&d.mask()]; *p != nil; p = &(*p).next {
		if e := *p; e.hash == h && e.key == string(key) {
			*p = e.next
			d.count--
			d.shrink()
			return e.val, true
		}
	}
	return zero, false
}

// DeleteString is Delete for a string key.
func (d *Dict[V]) DeleteString(key string) (V, bool) {
	var zero V
	if d.count == 0 {
		return zero, false
	}
	h := maphash.String(seed, key)
	for p := &d.buckets[h&d.mask()]; *p != nil; p = &(*p).next {
		if e := *p; e.hash == h && e.key == key {
			*p = e.next
			d.count--
			d.shrink()
			return e.val, true
		}
	}
	return zero, false
}

// shrink resizes once the table is less than 1/8 full, landing at a load of
// at most 1/2 so the next inserts do not grow it straight back.
func (d *Dict[V]) shrink() {
	n := len(d.buckets)
	if d.count == 0 {
		d.buckets = nil
		return
	}
	if n > minBuckets && d.count*8 < n {
		d.resize(max(minBuckets, nextPow2(2*d.count)))
	}
}

func (d *Dict[V]) resize(n int) {
	if n == len(d.buckets) {
		return
	}
	nb := make([]*entry[V], n)
	mask := uint64(n - 1)
	for _, e := range d.buckets {
		for e != nil {
			next := e.next
			b := &nb[e.hash&mask]
			e.next = *b
			*b = e
			e = next
		}
	}
	d.buckets = nb
}

// Scan visits the members of one bucket and returns the cursor of the next
// call, 0 when the scan is complete (start with 0). The guarantee is Redis's:
// a member present from the first call to the last is reported at least
// once whatever resizes happen in between. fn may not modify the dict.
func (d *Dict[V]) Scan(cursor uint64, fn func(key string, v V)) uint64 {
	if len(d.buckets) == 0 {
		return 0
	}
	mask := d.mask()
	for e := d.buckets[cursor&mask]; e != nil; e = e.next {
		fn(e.key, e.val)
	}
	// Increment the cursor from its most significant masked bit: set the
	// bits above the mask, add one to the reversed value, reverse back.
	cursor |= ^mask
	return bits.Reverse64(bits.Reverse64(cursor) + 1)
}

// Random returns a member chosen uniformly in O(1) expected time, by
// rejection sampling: probe a random bucket and a random slot among
// max(4, chain length) of it, and retry when the slot is empty. Members of
// chains of up to 4 (nearly all of them, at a load factor of at most 1) are
// exactly equally likely; the table is kept at least 1/8 full, so a draw
// takes at most 32 probes on average. The dict must not be empty. A nil r
// uses the global source.
func (d *Dict[V]) Random(r *rand.Rand) (string, V) {
	if d.count == 0 {
		panic("dict: Random on an empty dict")
	}
	mask := d.mask()
	for {
		head := d.buckets[randUint64(r)&mask]
		n := 0
		for e := head; e != nil; e = e.next {
			n++
		}
		i := randIntN(r, max(4, n))
		if i >= n {
			continue
		}
		e := head
		for ; i > 0; i-- {
			e = e.next
		}
		return e.key, e.val
	}
}

// ForEach calls fn for every member until it returns false. fn may not
// modify the dict.
func (d *Dict[V]) ForEach(fn func(key string, v V) bool) {
	for _, e := range d.buckets {
		for ; e != nil; e = e.next {
			if !fn(e.key, e.val) {
				return
			}
		}
	}
}

// Clone returns a copy; cp maps each value (nil keeps values as they are).
func (d *Dict[V]) Clone(cp func(V) V) *Dict[V] {
	n := &Dict[V]{count: d.count}
	if d.buckets == nil {
		return n
	}
	n.buckets = make([]*entry[V], len(d.buckets))
	for i, e := range d.buckets {
		p := &n.buckets[i]
		for ; e != nil; e = e.next {
			v := e.val
			if cp != nil {
				v = cp(v)
			}
			ne := &entry[V]{key: e.key, hash: e.hash, val: v}
			*p = ne
			p = &ne.next
		}
	}
	return n
}

func nextPow2(n int) int {
	if n <= 1 {
		return 1
	}
	return 1 << bits.Len(uint(n-1))
}

func randUint64(r *rand.Rand) uint64 {
	if r == nil {
		return rand.Uint64()
	}
	return r.Uint64()
}

func randIntN(r *rand.Rand, n int) int {
	if r == nil {
		return rand.IntN(n)
	}
	return r.IntN(n)
}
