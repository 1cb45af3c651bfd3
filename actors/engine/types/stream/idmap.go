package stream

import "sort"

// idMap is an ordered map from IDs to V: a sorted list of sorted chunks
// of at most chunkMax keys each. Lookups and ordered seeks are two binary
// searches; inserts and deletes move at most one chunk's worth of keys,
// so a pending entries list of millions stays cheap to update.
type idMap[V any] struct {
	chunks []*chunk[V]
	n      int
}

const chunkMax = 128

type chunk[V any] struct {
	keys []ID
	vals []V
}

// Len is the number of keys.
func (m *idMap[V]) Len() int { return m.n }

// locate returns the chunk that would hold id.
func (m *idMap[V]) locate(id ID) int {
	i := sort.Search(len(m.chunks), func(i int) bool { return id.Less(m.chunks[i].keys[0]) })
	return max(i-1, 0)
}

// Get returns the value for id.
func (m *idMap[V]) Get(id ID) (V, bool) {
	var zero V
	if m.n == 0 {
		return zero, false
	}
	c := m.chunks[m.locate(id)]
	j := sort.Search(len(c.keys), func(j int) bool { return !c.keys[j].Less(id) })
	if j < len(c.keys) && c.keys[j] == id {
		return c.vals[j], true
	}
	return zero, false
}

// Set inserts or replaces id's value; it reports whether id was new.
func (m *idMap[V]) Set(id ID, v V) bool {
	if m.n == 0 {
		m.chunks = append(m.chunks[:0], &chunk[V]{keys: []ID{id}, vals: []V{v}})
		m.n = 1
		return true
	}
	ci := m.locate(id)
	c := m.chunks[ci]
	j := sort.Search(len(c.keys), func(j int) bool { return !c.keys[j].Less(id) })
	if j < len(c.keys) && c.keys[j] == id {
		c.vals[j] = v
		return false
	}
	c.keys = append(c.keys, ID{})
	copy(c.keys[j+1:], c.keys[j:])
	c.keys[j] = id
	var zero V
	c.vals = append(c.vals, zero)
	copy(c.vals[j+1:], c.vals[j:])
	c.vals[j] = v
	m.n++
	if len(c.keys) > 2*chunkMax {
		h := len(c.keys) / 2
		nc := &chunk[V]{keys: append([]ID(nil), c.keys[h:]...), vals: append([]V(nil), c.vals[h:]...)}
		clear(c.vals[h:])
		c.keys, c.vals = c.keys[:h:h], c.vals[:h:h]
		m.chunks = append(m.chunks, nil)
		copy(m.chunks[ci+2:], m.chunks[ci+1:])
		m.chunks[ci+1] = nc
	}
	return true
}

// Delete removes id; it reports whether it was there.
func (m *idMap[V]) Delete(id ID) bool {
	if m.n == 0 {
		return false
	}
	ci := m.locate(id)
	c := m.chunks[ci]
	j := sort.Search(len(c.keys), func(j int) bool { return !c.keys[j].Less(id) })
	if j >= len(c.keys) || c.keys[j] != id {
		return false
	}
	c.keys = append(c.keys[:j], c.keys[j+1:]...)
	var zero V
	copy(c.vals[j:], c.vals[j+1:])
	c.vals[len(c.vals)-1] = zero
	c.vals = c.vals[:len(c.vals)-1]
	m.n--
	if len(c.keys) == 0 {
		copy(m.chunks[ci:], m.chunks[ci+1:])
		m.chunks[len(m.chunks)-1] = nil
		m.chunks = m.chunks[:len(m.chunks)-1]
	}
	return true
}

// Ascend calls fn for each key ≥ from in order until fn returns false.
// fn must not change the map.
func (m *idMap[V]) Ascend(from ID, fn func(id ID, v V) bool) {
	if m.n == 0 {
		return
	}
	ci := m.locate(from)
	c := m.chunks[ci]
	j := sort.Search(len(c.keys), func(j int) bool { return !c.keys[j].Less(from) })
	for ; ci < len(m.chunks); ci, j = ci+1, 0 {
		c = m.chunks[ci]
		for ; j < len(c.keys); j++ {
			if !fn(c.keys[j], c.vals[j]) {
				return
			}
		}
	}
}

// First and Last return the smallest and largest keys.
func (m *idMap[V]) First() (ID, bool) {
	if m.n == 0 {
		return ID{}, false
	}
	return m.chunks[0].keys[0], true
}

func (m *idMap[V]) Last() (ID, bool) {
	if m.n == 0 {
		return ID{}, false
	}
	c := m.chunks[len(m.chunks)-1]
	return c.keys[len(c.keys)-1], true
}

// Seek returns the first key ≥ from and its value.
func (m *idMap[V]) Seek(from ID) (id ID, v V, ok bool) {
	m.Ascend(from, func(k ID, val V) bool {
		id, v, ok = k, val, true
		return false
	})
	return id, v, ok
}
