// Package hash is the value of a Redis hash: a map from field to value
// with the two representations Redis uses, so that replies come out in the
// same order and OBJECT ENCODING says the same thing.
//
// A new hash is compact (Redis's "listpack"): its pairs are kept in
// insertion order in one slice and looked up by a linear scan, which for
// the small sizes allowed (hash-max-listpack-entries, 128 by default) is as
// fast as hashing and much smaller. Updating a field keeps its position,
// deleting one closes the gap, exactly as a listpack does, so HGETALL,
// HKEYS, HVALS and HSCAN answer in Redis's order. Once the hash holds more
// pairs than the limit, or a field or value longer than
// hash-max-listpack-value, it converts for good to a chained hash table
// (Redis's "hashtable"); like Redis it never converts back.
//
// The table is a [dict.Dict]: its reverse-binary cursor scan (HSCAN) returns
// every field present for the whole scan at least once however the table is
// resized between calls, and it samples at random in O(1) (HRANDFIELD).
package hash

import (
	"math/rand/v2"

	"github.com/slotd/slotd/actors/engine/types/dict"
)

// Hash is a hash value. The zero value is an empty compact hash. It is not
// safe for concurrent use.
type Hash struct {
	pairs []string           // compact form: field, value, field, value, ...
	table *dict.Dict[string] // non-nil once converted
	bytes int                // total length of fields and values
}

// New returns an empty compact hash.
func New() *Hash { return &Hash{} }

// Len is the number of fields.
func (h *Hash) Len() int {
	if h.table != nil {
		return h.table.Len()
	}
	return len(h.pairs) / 2
}

// Compact reports whether the hash still has its compact (listpack) form.
func (h *Hash) Compact() bool { return h.table == nil }

// Bytes is the total length of the fields and values.
func (h *Hash) Bytes() int { return h.bytes }

// Buckets is the table's bucket count (0 while compact), for memory
// estimates.
func (h *Hash) Buckets() int {
	if h.table == nil {
		return 0
	}
	return h.table.Buckets()
}

func (h *Hash) find(field []byte) int {
	for i := 0; i < len(h.pairs); i += 2 {
		if h.pairs[i] == string(field) {
			return i
		}
	}
	return -1
}

// Get returns field's value.
func (h *Hash) Get(field []byte) (string, bool) {
	if h.table != nil {
		return h.table.Get(field)
	}
	if i := h.find(field); i >= 0 {
		return h.pairs[i+1], true
	}
	return "", false
}

// Has reports whether field is present.
func (h *Hash) Has(field []byte) bool {
	_, ok := h.Get(field)
	return ok
}

// Limits are the conversion thresholds (hash-max-listpack-entries and
// hash-max-listpack-value).
type Limits struct {
	MaxEntries int64
	MaxValue   int64
}

// Set stores value under field and reports whether the field is new. The
// bytes are copied. A compact hash converts to a table first when field or
// value is longer than lim.MaxValue, and after adding when it holds more
// than lim.MaxEntries fields.
func (h *Hash) Set(field, value []byte, lim Limits) (added bool) {
	return h.SetString(field, string(value), lim)
}

// SetString is Set with a value the hash may keep as is.
func (h *Hash) SetString(field []byte, value string, lim Limits) (added bool) {
	if h.table == nil && (int64(len(field)) > lim.MaxValue || int64(len(value)) > lim.MaxValue) {
		h.convert()
	}
	if h.table != nil {
		if old, ok := h.table.Get(field); ok {
			h.bytes -= len(old)
		} else {
			h.bytes += len(field)
		}
		h.bytes += len(value)
		return h.table.Set(field, value)
	}
	if i := h.find(field); i >= 0 {
		h.bytes += len(value) - len(h.pairs[i+1])
		h.pairs[i+1] = value
		return false
	}
	h.pairs = append(h.pairs, string(field), value)
	h.bytes += len(field) + len(value)
	if int64(len(h.pairs)/2) > lim.MaxEntries {
		h.convert()
	}
	return true
}

// Delete removes field and reports whether it was present.
func (h *Hash) Delete(field []byte) bool {
	if h.table != nil {
		v, ok := h.table.Delete(field)
		if ok {
			h.bytes -= len(field) + len(v)
		}
		return ok
	}
	i := h.find(field)
	if i < 0 {
		return false
	}
	h.bytes -= len(h.pairs[i]) + len(h.pairs[i+1])
	copy(h.pairs[i:], h.pairs[i+2:])
	h.pairs[len(h.pairs)-2], h.pairs[len(h.pairs)-1] = "", ""
	h.pairs = h.pairs[:len(h.pairs)-2]
	return true
}

// convert moves the pairs into a table.
func (h *Hash) convert() {
	t := dict.New[string](len(h.pairs) / 2)
	for i := 0; i < len(h.pairs); i += 2 {
		t.SetString(h.pairs[i], h.pairs[i+1])
	}
	h.table = t
	h.pairs = nil
}

// Each calls fn for every pair (in insertion order while compact) until fn
// returns false. fn must not modify the hash.
func (h *Hash) Each(fn func(field, value string) bool) {
	if h.table == nil {
		for i := 0; i < len(h.pairs); i += 2 {
			if !fn(h.pairs[i], h.pairs[i+1]) {
				return
			}
		}
		return
	}
	h.table.ForEach(fn)
}

// Scan is one HSCAN step. A compact hash reports every pair and returns
// cursor 0 whatever the cursor (as Redis does for a listpack). A table
// visits buckets from cursor until at least count pairs were reported or
// 10*count buckets were visited, and returns the cursor to continue from
// (0 when done). fn must not modify the hash.
func (h *Hash) Scan(cursor uint64, count int64, fn func(field, value string)) uint64 {
	if h.table == nil {
		for i := 0; i < len(h.pairs); i += 2 {
			fn(h.pairs[i], h.pairs[i+1])
		}
		return 0
	}
	budget := count * 10
	if budget < count { // overflow
		budget = count
	}
	var seen int64
	visit := func(f, v string) {
		fn(f, v)
		seen++
	}
	for {
		cursor = h.table.Scan(cursor, visit)
		budget--
		if cursor == 0 || seen >= count || budget <= 0 {
			return cursor
		}
	}
}

// Random returns a random pair; the hash must not be empty.
func (h *Hash) Random(r *rand.Rand) (field, value string) {
	if h.table == nil {
		i := r.IntN(len(h.pairs)/2) * 2
		return h.pairs[i], h.pairs[i+1]
	}
	return h.table.Random(r)
}

// RandomDistinct calls fn for count distinct random pairs (0 < count <
// Len). A compact hash yields them in its order, a table in no particular
// order.
func (h *Hash) RandomDistinct(r *rand.Rand, count int, fn func(field, value string)) {
	n := h.Len()
	if h.table == nil || count*3 > n {
		// Selection sampling over one pass: each pair is taken with
		// probability (needed / remaining).
		need := count
		left := n
		h.Each(func(f, v string) bool {
			if r.IntN(left) < need {
				fn(f, v)
				need--
			}
			left--
			return need > 0
		})
		return
	}
	// Few out of many: draw at random and skip repeats.
	picked := make(map[string]struct{}, count)
	for len(picked) < count {
		f, v := h.table.Random(r)
		if _, dup := picked[f]; dup {
			continue
		}
		picked[f] = struct{}{}
		fn(f, v)
	}
}

// Clone returns an independent copy.
func (h *Hash) Clone() *Hash {
	out := &Hash{bytes: h.bytes}
	if h.table == nil {
		out.pairs = append(make([]string, 0, len(h.pairs)), h.pairs...)
		return out
	}
	out.table = h.table.Clone(nil)
	return out
}
