package keyspace

import (
	"hash/maphash"
	"math/rand/v2"
)

// seed keys the hash function for the whole process. It is random per
// process, so bucket placement cannot be predicted (or attacked) from
// outside, and nothing derived from it may be persisted.
var seed = maphash.MakeSeed()

// Keyspace is the key dictionary of one hash slot: the main table holding
// every entry, and an expiry index holding the entries with a TTL. The zero
// value is an empty, usable Keyspace.
//
// A Keyspace is not safe for concurrent use.
type Keyspace struct {
	main table // all entries, via Entry.next[linkMain]
	exp  table // entries with Expire != 0, via Entry.next[linkExpire]

	// gen is stamped into entries on insert. Clear bumps it, which turns every
	// entry inserted before into a dead one in O(1).
	gen uint32
	// iterating counts active ForEach calls; while non-zero no table is
	// resized, so ForEach can walk the bucket array by index.
	iterating int32
}

// New returns an empty Keyspace. It allocates nothing beyond the Keyspace
// itself; New() and &Keyspace{} are equivalent.
func New() *Keyspace { return new(Keyspace) }

// Len returns the number of keys.
func (ks *Keyspace) Len() int { return ks.main.count }

// ExpiresLen returns the number of keys that have a TTL.
func (ks *Keyspace) ExpiresLen() int { return ks.exp.count }

// owns reports whether e is currently an entry of ks.
func (ks *Keyspace) owns(e *Entry) bool {
	return e.flags&flagLive != 0 && e.gen == ks.gen
}

// Get returns the entry for key, or nil. It does not look at Expire: lazy
// expiry is the caller's business. Get does not allocate.
func (ks *Keyspace) Get(key []byte) *Entry {
	t := &ks.main
	if t.count == 0 {
		return nil
	}
	h := maphash.Bytes(seed, key)
	for e := t.buckets[h&t.mask()]; e != nil; e = e.next[linkMain] {
		if e.hash == h && e.key == string(key) {
			return e
		}
	}
	return nil
}

// GetString is Get for a string key.
func (ks *Keyspace) GetString(key string) *Entry {
	t := &ks.main
	if t.count == 0 {
		return nil
	}
	h := maphash.String(seed, key)
	for e := t.buckets[h&t.mask()]; e != nil; e = e.next[linkMain] {
		if e.hash == h && e.key == key {
			return e
		}
	}
	return nil
}

// Add inserts a new entry for key and returns it: KindString, no value, no
// TTL. The key bytes are copied. The caller must have checked that key is
// absent (use GetOrAdd when it hasn't); adding a key twice leaves two entries
// and Get returns the newer one.
func (ks *Keyspace) Add(key []byte) *Entry {
	return ks.add(key, maphash.Bytes(seed, key))
}

// GetOrAdd returns the entry for key, inserting a new empty one (as Add
// does) if there is none; added reports whether it did. It hashes key once.
func (ks *Keyspace) GetOrAdd(key []byte) (e *Entry, added bool) {
	h := maphash.Bytes(seed, key)
	if t := &ks.main; t.count > 0 {
		for e := t.buckets[h&t.mask()]; e != nil; e = e.next[linkMain] {
			if e.hash == h && e.key == string(key) {
				return e, false
			}
		}
	}
	return ks.add(key, h), true
}

func (ks *Keyspace) add(key []byte, h uint64) *Entry {
	e := &Entry{key: string(key), hash: h, gen: ks.gen, flags: flagLive}
	ks.main.insert(e, linkMain)
	ks.fit(&ks.main, linkMain)
	return e
}

// fit resizes t if due, unless a ForEach is walking the tables.
func (ks *Keyspace) fit(t *table, link int) {
	if ks.iterating == 0 {
		t.fit(link)
	}
}

// Delete removes key from the keyspace and from the expiry index and returns
// its entry (value and Expire intact), or nil if key is absent.
func (ks *Keyspace) Delete(key []byte) *Entry {
	t := &ks.main
	if t.count == 0 {
		return nil
	}
	h := maphash.Bytes(seed, key)
	for p := &t.buckets[h&t.mask()]; *p != nil; p = &(*p).next[linkMain] {
		if e := *p; e.hash == h && e.key == string(key) {
			*p = e.next[linkMain]
			e.next[linkMain] = nil
			t.count--
			ks.retire(e)
			return e
		}
	}
	return nil
}

// DeleteEntry removes e, which must have come from this Keyspace, without
// looking its key up again; it is what active expiry uses on the entries
// ScanExpires hands it. It reports whether e was still present.
func (ks *Keyspace) DeleteEntry(e *Entry) bool {
	if !ks.owns(e) || !ks.main.unlink(e, linkMain) {
		return false
	}
	ks.retire(e)
	return true
}

// retire finishes removing e after it was unlinked from the main table.
func (ks *Keyspace) retire(e *Entry) {
	if e.flags&flagExpires != 0 {
		ks.exp.unlink(e, linkExpire)
		ks.fit(&ks.exp, linkExpire)
	}
	e.flags = 0
	ks.fit(&ks.main, linkMain)
}

// SetExpire sets e's absolute expiry time in unix milliseconds, 0 meaning no
// TTL, and adds e to or removes it from the expiry index accordingly. e must
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
		ks.exp.insert(e, linkExpire)
		ks.fit(&ks.exp, linkExpire)
	case ms == 0 && indexed:
		e.flags &^= flagExpires
		ks.exp.unlink(e, linkExpire)
		ks.fit(&ks.exp, linkExpire)
	}
}

// Scan visits one bucket of the keyspace and returns the cursor to pass to
// the next call; it returns 0 when the scan is complete. Start with cursor
// 0. Each call visits one bucket (about one entry on average, possibly none)
// so a SCAN command calls it in a loop until it has COUNT keys or has
// visited enough buckets.
//
// Guarantee (Redis's SCAN contract): every key present from the first call to
// the last is passed to fn at least once, however the table is resized in
// between; keys added or deleted meanwhile may or may not be reported; keys
// may be reported more than once if the table shrinks during the scan. The
// returned cursor is always below the current bucket count, so it fits in
// about log2(Len()) bits and callers may pack a slot number beside it.
//
// fn may mutate the keyspace freely, including deleting the entry it is
// given or any other entry, adding keys and changing TTLs: Scan first
// collects the bucket's chain and only then calls fn for each collected
// entry that is still present. An entry deleted by fn before its turn is
// skipped.
func (ks *Keyspace) Scan(cursor uint64, fn func(e *Entry)) (next uint64) {
	return ks.scan(&ks.main, linkMain, cursor, fn)
}

// ScanExpires is Scan over the keys that have a TTL, with the same cursor
// rules and the same freedom for fn (active expiry deletes expired entries
// from within fn, typically with DeleteEntry). Entries whose TTL fn removes
// before their turn are skipped.
func (ks *Keyspace) ScanExpires(cursor uint64, fn func(e *Entry)) (next uint64) {
	return ks.scan(&ks.exp, linkExpire, cursor, fn)
}

func (ks *Keyspace) scan(t *table, link int, cursor uint64, fn func(*Entry)) uint64 {
	var buf [scanBatch]*Entry
	batch, next := t.collect(cursor, link, buf[:0])
	want := uint8(flagLive)
	if link == linkExpire {
		want |= flagExpires
	}
	for _, e := range batch {
		if e.flags&want == want && e.gen == ks.gen {
			fn(e)
		}
	}
	return next
}

// Random returns a random entry, or nil if the keyspace is empty, in O(1)
// expected time: it probes random buckets until it hits a non-empty one
// (the table is kept at least 1/8 full) and picks uniformly within that
// chain. That makes the choice uniform-ish, with a slight bias towards keys
// that share their bucket with few others, which is fine for RANDOMKEY and
// eviction sampling. A nil r uses the math/rand/v2 global source.
func (ks *Keyspace) Random(r *rand.Rand) *Entry {
	t := &ks.main
	if t.count == 0 {
		return nil
	}
	mask := t.mask()
	for {
		head := t.buckets[randUint64(r)&mask]
		if head == nil {
			continue
		}
		if head.next[linkMain] == nil {
			return head
		}
		n := 0
		for e := head; e != nil; e = e.next[linkMain] {
			n++
		}
		e := head
		for i := randIntN(r, n); i > 0; i-- {
			e = e.next[linkMain]
		}
		return e
	}
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

// Clear removes every key in O(1): it drops both tables and invalidates all
// existing entries at once (they report as absent to DeleteEntry, SetExpire
// and any Scan/ForEach in progress).
func (ks *Keyspace) Clear() {
	ks.main = table{}
	ks.exp = table{}
	ks.gen++
}

// ForEach calls fn for every entry, each exactly once, until fn returns
// false. fn may delete entries (any of them; deleted ones are not visited
// afterwards), add entries (they may or may not be visited) and change TTLs:
// resizing is deferred until the outermost ForEach returns.
func (ks *Keyspace) ForEach(fn func(e *Entry) bool) {
	if ks.main.count == 0 {
		return
	}
	ks.iterating++
	defer ks.endIteration()
	gen := ks.gen
	var buf [scanBatch]*Entry
	for _, head := range ks.main.buckets {
		batch := buf[:0]
		for e := head; e != nil; e = e.next[linkMain] {
			batch = append(batch, e)
		}
		for _, e := range batch {
			if e.flags&flagLive != 0 && e.gen == gen && ks.gen == gen {
				if !fn(e) {
					return
				}
			}
		}
	}
}

func (ks *Keyspace) endIteration() {
	ks.iterating--
	if ks.iterating == 0 {
		ks.main.fit(linkMain)
		ks.exp.fit(linkExpire)
	}
}
