package keyspace

import (
	"hash/maphash"
	"math/bits"
	"math/rand/v2"
)

// seed keys the hash function for the whole process. It is random per
// process, so bucket placement cannot be predicted (or attacked) from
// outside, and nothing derived from it may be persisted.
var seed = maphash.MakeSeed()

// Keyspace is the key set of one hash slot: every entry in a dense array
// (for SCAN, random sampling and iteration), the entries with a TTL in a
// second one (for active expiry), and lookups through an [Index] that may be
// shared with other keyspaces. The zero value is an empty, usable Keyspace
// with an index of its own.
//
// A Keyspace is not safe for concurrent use.
type Keyspace struct {
	idx *Index
	all []*Entry // every entry; Entry.pos is its position
	exp []*Entry // entries with Expire != 0; Entry.epos is the position
}

// New returns an empty Keyspace with its own index. It allocates nothing
// beyond the Keyspace itself; New() and &Keyspace{} are equivalent.
func New() *Keyspace { return new(Keyspace) }

// Len returns the number of keys.
func (ks *Keyspace) Len() int { return len(ks.all) }

// ExpiresLen returns the number of keys that have a TTL.
func (ks *Keyspace) ExpiresLen() int { return len(ks.exp) }

// owns reports whether e is currently an entry of ks.
func (ks *Keyspace) owns(e *Entry) bool {
	return e.flags&flagLive != 0 && e.ks == ks
}

// Get returns the entry for key, or nil. It does not look at Expire: lazy
// expiry is the caller's business. Get does not allocate.
func (ks *Keyspace) Get(key []byte) *Entry {
	if ks.idx == nil || len(ks.all) == 0 {
		return nil
	}
	return ks.idx.find(ks, maphash.Bytes(seed, key), bytesView(key))
}

// GetString is Get for a string key.
func (ks *Keyspace) GetString(key string) *Entry {
	if ks.idx == nil || len(ks.all) == 0 {
		return nil
	}
	return ks.idx.find(ks, maphash.String(seed, key), key)
}

// Add inserts a new entry for key and returns it: KindString, no value, no
// TTL. The key bytes are copied. The caller must have checked that key is
// absent (use GetOrAdd when it hasn't).
func (ks *Keyspace) Add(key []byte) *Entry {
	return ks.add(string(key), maphash.Bytes(seed, key))
}

// AddString is Add with the value set: key and value are copied into one
// allocation, so reading the value after finding the key costs no further
// cache miss. The value may later be replaced or appended to as usual.
func (ks *Keyspace) AddString(key, val []byte) *Entry {
	buf := make([]byte, len(key)+len(val))
	copy(buf, key)
	copy(buf[len(key):], val)
	e := ks.add(bytesView(buf[:len(key)]), maphash.Bytes(seed, key))
	e.Str = buf[len(key):]
	return e
}

// GetOrAdd returns the entry for key, inserting a new empty one (as Add
// does) if there is none; added reports whether it did. It hashes key once.
func (ks *Keyspace) GetOrAdd(key []byte) (e *Entry, added bool) {
	h := maphash.Bytes(seed, key)
	if ks.idx != nil && len(ks.all) > 0 {
		if e := ks.idx.find(ks, h, bytesView(key)); e != nil {
			return e, false
		}
	}
	return ks.add(string(key), h), true
}

func (ks *Keyspace) add(key string, h uint64) *Entry {
	if ks.idx == nil {
		ks.idx = new(Index)
	}
	e := &Entry{key: key, ks: ks, flags: flagLive, pos: int32(len(ks.all))}
	ks.all = append(ks.all, e)
	ks.idx.insert(e, h)
	return e
}

// Delete removes key from the keyspace and from the expiry list and returns
// its entry (value and Expire intact), or nil if key is absent.
func (ks *Keyspace) Delete(key []byte) *Entry {
	e := ks.Get(key)
	if e != nil {
		ks.remove(e)
	}
	return e
}

// DeleteEntry removes e, which must have come from this Keyspace, without
// looking its key up again. It reports whether e was still present.
func (ks *Keyspace) DeleteEntry(e *Entry) bool {
	if !ks.owns(e) {
		return false
	}
	ks.remove(e)
	return true
}

func (ks *Keyspace) remove(e *Entry) {
	ks.idx.remove(e)
	ks.all = cut(ks.all, int(e.pos), func(m *Entry, p int) { m.pos = int32(p) })
	if e.flags&flagExpires != 0 {
		ks.exp = cut(ks.exp, int(e.epos), func(m *Entry, p int) { m.epos = int32(p) })
		ks.idx.expires--
	}
	e.flags = 0
}

// cut removes arr[p] by moving the last element into its place (setPos
// records the move) and gives memory back once the array is mostly empty.
func cut(arr []*Entry, p int, setPos func(*Entry, int)) []*Entry {
	last := len(arr) - 1
	if p != last {
		arr[p] = arr[last]
		setPos(arr[p], p)
	}
	arr[last] = nil
	arr = arr[:last]
	if cap(arr) > 64 && len(arr)*4 < cap(arr) {
		arr = append(make([]*Entry, 0, 2*len(arr)), arr...)
	}
	return arr
}

// SetExpire sets e's absolute expiry time in unix milliseconds, 0 meaning no
// TTL, and adds e to or removes it from the expiry list accordingly. e must
// have come from ks; on an entry that has since been deleted (or cleared) it
// only sets the field.
func (ks *Keyspace) SetExpire(e *Entry, ms int64) {
	e.Expire = ms
	if !ks.owns(e) {
		return
	}
	indexed := e.flags&flagExpires != 0
	switch {
	case ms != 0 && !indexed:
		e.flags |= flagExpires
		e.epos = int32(len(ks.exp))
		ks.exp = append(ks.exp, e)
		ks.idx.expires++
	case ms == 0 && indexed:
		e.flags &^= flagExpires
		ks.exp = cut(ks.exp, int(e.epos), func(m *Entry, p int) { m.epos = int32(p) })
		ks.idx.expires--
	}
}

// Scan visits one entry of the keyspace and returns the cursor to pass to
// the next call; it returns 0 when the scan is complete. Start with cursor
// 0. A SCAN command calls it in a loop until it has COUNT keys or has made
// enough steps.
//
// Guarantee (Redis's SCAN contract): every key present from the first call to
// the last is passed to fn at least once, whatever is added or deleted in
// between; keys added or deleted meanwhile may or may not be reported. The
// returned cursor is always below Len(), so it fits in about log2(Len())
// bits and callers may pack a slot number beside it.
//
// Why: the walk goes down the dense array, from the end to position 0, and
// a cursor c means "position c-1 is next" (clamped to the current end).
// Inserts append at the end, behind the walk. A delete moves the last entry
// into the hole; the last entry is either already visited (it may then be
// visited again) or, when everything above the cursor is gone, still ahead
// of the walk at a lower position. So an entry not yet visited never moves
// behind the cursor.
//
// fn may mutate the keyspace freely, including deleting the entry it is
// given or any other entry, adding keys and changing TTLs.
func (ks *Keyspace) Scan(cursor uint64, fn func(e *Entry)) (next uint64) {
	return scan(ks.all, cursor, fn)
}

// ScanExpires is Scan over the keys that have a TTL, with the same cursor
// rules and the same freedom for fn (active expiry deletes expired entries
// from within fn, typically with DeleteEntry).
func (ks *Keyspace) ScanExpires(cursor uint64, fn func(e *Entry)) (next uint64) {
	return scan(ks.exp, cursor, fn)
}

func scan(arr []*Entry, cursor uint64, fn func(*Entry)) uint64 {
	n := uint64(len(arr))
	if n == 0 {
		return 0
	}
	pos := n - 1
	if cursor != 0 && cursor-1 < pos {
		pos = cursor - 1
	}
	fn(arr[pos])
	return pos
}

// Random returns a uniformly chosen entry, or nil if the keyspace is empty.
// A nil r uses the math/rand/v2 global source.
func (ks *Keyspace) Random(r *rand.Rand) *Entry {
	if len(ks.all) == 0 {
		return nil
	}
	return ks.all[randIntN(r, len(ks.all))]
}

// RandomExpire returns a uniformly chosen entry among those with a TTL, or
// nil if there is none.
func (ks *Keyspace) RandomExpire(r *rand.Rand) *Entry {
	if len(ks.exp) == 0 {
		return nil
	}
	return ks.exp[randIntN(r, len(ks.exp))]
}

func randIntN(r *rand.Rand, n int) int {
	if r == nil {
		return rand.IntN(n)
	}
	return r.IntN(n)
}

// Clear removes every key and invalidates all existing entries (they report
// as absent to DeleteEntry, SetExpire and any ForEach in progress). It is
// O(1) when the keyspace has its index to itself, else O(Len()).
func (ks *Keyspace) Clear() {
	switch {
	case ks.idx == nil:
	case ks.idx.count == len(ks.all):
		ks.idx.reset() // every indexed key is one of ours
		for _, e := range ks.all {
			e.flags = 0
		}
	default:
		for _, e := range ks.all {
			ks.idx.remove(e)
			e.flags = 0
		}
		ks.idx.expires -= len(ks.exp)
	}
	ks.all = nil
	ks.exp = nil
}

// ForEach calls fn for every entry, each exactly once, until fn returns
// false. fn may delete entries (any of them; deleted ones are not visited
// afterwards), add entries (they are not visited) and change TTLs.
func (ks *Keyspace) ForEach(fn func(e *Entry) bool) {
	if len(ks.all) == 0 {
		return
	}
	var buf [64]*Entry
	snap := append(buf[:0], ks.all...)
	for _, e := range snap {
		if ks.owns(e) && !fn(e) {
			return
		}
	}
}

// nextPow2 returns the smallest power of two >= n (1 for n <= 1).
func nextPow2(n int) int {
	if n <= 1 {
		return 1
	}
	return 1 << bits.Len(uint(n-1))
}
