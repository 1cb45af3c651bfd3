package engine

// The dataset's byte charge (INFO used_memory, maxmemory): every entry is
// charged what it holds on the Go heap — the entry itself, its share of the
// index and of the slot's arrays, the key, the value's structures and
// bytes — as an estimate computed from the value's own counters in O(1)
// (streams: per node). The charge is kept up to date incrementally: a write
// command's lookups and creations note their entries (Call.touch), and once
// the handler has run each noted entry is charged again (settle). Deleted
// entries leave the sum as they leave the index (keyspace.Index.Used).

import (
	"unsafe"

	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/actors/engine/types/set"
	"github.com/slotd/slotd/actors/engine/types/stream"
	"github.com/slotd/slotd/actors/engine/types/zset"
)

// Per-entry overheads on the Go heap.
const (
	// entryBytes is a keyspace.Entry's allocation (96 bytes, a size class).
	entryBytes = int64(unsafe.Sizeof(keyspace.Entry{}))
	// indexBytes is one index cell (16 bytes) over the index's mean load
	// (between 3/8 and 3/4 full), plus the slot's dense array slot
	// (8 bytes, grown by doubling).
	indexBytes = 16*8/5 + 12
	// expireBytes is the expiry array's slot of a key with a TTL.
	expireBytes = 12
	// strBytes is the mean size-class rounding of a separately allocated
	// small string (a field, member or element).
	strBytes = 8
	// keyspaceBytes is a slot's keyspace.Keyspace; dbSpacesBytes is a
	// database's array of them in a shard.
	keyspaceBytes = 64
	dbSpacesBytes = int64(unsafe.Sizeof(DBSpaces{}))
)

// Footprint is the bytes entry e is charged for, from its current value.
func Footprint(e *keyspace.Entry) int64 {
	n := entryBytes + indexBytes
	if e.Expire != 0 {
		n += expireBytes
	}
	key := e.Key()
	switch e.Kind {
	case keyspace.KindString:
		if c := cap(e.Str); c > 0 && len(key) > 0 &&
			unsafe.Add(unsafe.Pointer(unsafe.StringData(key)), len(key)) == unsafe.Pointer(unsafe.SliceData(e.Str)) {
			return n + goClass(int64(len(key)+c)) // one allocation (AddString)
		}
		return n + goClass(int64(len(key))) + goClass(int64(cap(e.Str)))
	case keyspace.KindStream:
		if st, ok := e.Obj.(*stream.Stream); ok {
			n += st.MemoryBytes(goClass)
		}
	default:
		n += objFootprint(e)
	}
	return n + goClass(int64(len(key)))
}

// objFootprint estimates the heap a collection value holds.
func objFootprint(e *keyspace.Entry) int64 {
	switch v := e.Obj.(type) {
	case *HashValue:
		h := &v.Hash
		n := int64(h.Len())
		strs := int64(h.Bytes()) + 2*n*strBytes
		if h.Compact() {
			// the struct, the pairs slice (16 bytes a string, grown by
			// doubling) and the strings.
			return 48 + goClass(2*n*16*5/4) + strs
		}
		// dict header, buckets, a 48-byte entry per field, the strings.
		return 48 + 32 + 8*int64(h.Buckets()) + n*48 + strs
	case *ListValue:
		l := &v.List
		n := int64(l.Len())
		// the struct, the chunk headers and their string slots (128 per
		// full chunk, the ends partly filled), the strings.
		return 80 + int64(l.Chunks())*(48+8) + n*16*9/8 + int64(l.Bytes()) + n*strBytes
	case *set.Set:
		n := int64(v.Len())
		if v.IsIntset() {
			return 48 + goClass(n*8*5/4)
		}
		return 48 + 32 + 8*int64(v.Buckets()) + n*32 + int64(v.MemberBytes()) + n*strBytes
	case *zset.ZSet:
		n := int64(v.Len())
		// the struct with the skiplist head; per member a node with about
		// 1.33 links (in its allocation), a 48-byte dict entry, the member
		// string (shared by both).
		return 160 + 8*int64(v.Buckets()) + n*(80+48) + int64(v.MemberBytes()) + n*strBytes
	}
	return 0
}

// goClassSizes are the Go allocator's small size classes.
var goClassSizes = [...]int64{8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256,
	288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280, 1408, 1536, 1792,
	2048, 2304, 2688, 3072, 3200, 3456, 4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192, 9472, 9728, 10240,
	10880, 12288, 13568, 14336, 16384, 18432, 19072, 20480, 21760, 24576, 27264, 28672, 32768}

// goClass is the bytes the Go allocator spends on an n-byte object: its
// size class, or whole 8 KiB pages past 32 KiB. Every class up to 1024 bytes
// is a multiple of 8 and every larger one a multiple of 128, so two tables
// indexed by the size rounded up to those steps answer at once (writes
// charge a key and a value per command).
func goClass(n int64) int64 {
	switch {
	case n <= 0:
		return 0
	case n <= 1024:
		return int64(goClassBy8[(n+7)>>3])
	case n <= 32768:
		return int64(goClassBy128[(n-1024+127)>>7])
	}
	return (n + 8191) &^ 8191
}

var goClassBy8, goClassBy128 = goClassTables()

// goClassTables fills goClass's tables from goClassSizes.
func goClassTables() (by8 [1024/8 + 1]uint16, by128 [(32768-1024)/128 + 1]uint16) {
	class := func(n int64) uint16 {
		for _, c := range goClassSizes {
			if c >= n {
				return uint16(c)
			}
		}
		panic("goClassTables: no class")
	}
	for i := 1; i < len(by8); i++ {
		by8[i] = class(int64(i) * 8)
	}
	for i := range by128 {
		by128[i] = class(1024 + int64(i)*128)
	}
	return
}

// touch notes that a write command reached e, to charge it again once the
// handler is done (settle).
func (c *Call) touch(e *keyspace.Entry) { c.touchAt(c.S, e) }

// touchAt is touch for an entry of shard o.
func (c *Call) touchAt(o *Shard, e *keyspace.Entry) {
	if c.Cmd == nil || c.Cmd.Spec == nil || c.Cmd.Spec.Write() {
		o.dirty = append(o.dirty, e)
	}
}

// Used is the shard's charge: its entries, its slots' keyspaces and its
// databases' slot arrays.
func (s *Shard) Used() int64 {
	if len(s.dirty) > 0 {
		s.settle()
	}
	return s.index.Used() + s.spaceBytes
}

// settle charges the entries writes have reached since the last settle
// with their values as they are now; an entry deleted meanwhile already
// left the sum.
func (s *Shard) settle() {
	for i, e := range s.dirty {
		e.SetCharge(Footprint(e))
		s.dirty[i] = nil
	}
	s.dirty = s.dirty[:0]
}

// publishUsed makes the shard's charge readable by other goroutines (INFO,
// the other shards' maxmemory checks).
func (s *Shard) publishUsed() {
	if u := s.Used(); u != s.Stats.Used.Load() {
		s.Stats.Used.Store(u)
	}
}

// UsedMemory is the dataset's charge over every shard (read lock-free; it
// may lag commands still queued in an actor).
func (g *Group) UsedMemory() int64 {
	var n int64
	for _, s := range g.shards {
		n += s.Stats.Used.Load()
	}
	return n
}
