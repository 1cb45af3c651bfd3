package keyspace

// Kind is the data type of an entry's value.
type Kind uint8

// Value kinds. Only KindString is stored in [Entry.Str]; the others live in
// [Entry.Obj] and are implemented by other packages.
const (
	KindString Kind = iota
	KindList
	KindHash
	KindSet
	KindZSet
	KindStream
)

var kindNames = [...]string{
	KindString: "string",
	KindList:   "list",
	KindHash:   "hash",
	KindSet:    "set",
	KindZSet:   "zset",
	KindStream: "stream",
}

// String returns the name the TYPE command reports for k ("string", "list",
// "hash", "set", "zset", "stream"), or "unknown".
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Entry flag bits.
const (
	flagLive    = 1 << iota // in its Keyspace (and in the Index)
	flagExpires             // in that Keyspace's expiry list
)

// Entry is one key with its value and expiry. Entries are created by
// [Keyspace.Add] / [Keyspace.GetOrAdd] and stay valid (as Go values) after
// they are deleted, so a caller may keep using a deleted entry's value.
//
// The value fields belong to the caller. Expire must only be changed through
// [Keyspace.SetExpire], which keeps the expiry list in sync.
//
// Field order matters: a GET reads key, ks, Expire, Kind and Str, which sit
// in the first 64 bytes so that a lookup hit touches one or two cache lines.
type Entry struct {
	key string
	ks  *Keyspace // owner, compared by the Index lookup

	// Expire is the absolute expiry time in unix milliseconds; 0 means the
	// key has no TTL. Read freely; write only via Keyspace.SetExpire.
	Expire int64
	// Kind is the type of the value.
	Kind Kind

	flags uint8 // flagLive | flagExpires
	pos   int32 // index in ks.all while live

	// Str holds a string value. The entry owns it: callers must copy bytes in
	// rather than alias request buffers.
	Str []byte
	// Obj holds the value of every non-string kind.
	Obj any

	epos int32 // index in ks.exp while it has a TTL
	// mem is the bytes the entry is charged for (SetCharge), counted in its
	// Index's Used while the entry is live.
	mem uint32
	// Access is the eviction metadata Redis keeps in its object's 24 lru
	// bits: the LRU clock of the last access (seconds, 24 bits), or under an
	// LFU policy the minutes of the last decrement (16 bits) above the
	// logarithmic access counter (8 bits). The keyspace never reads it.
	Access uint32
}

// Charge is the bytes e is charged for (SetCharge).
func (e *Entry) Charge() int64 { return int64(e.mem) }

// SetCharge sets the bytes e is charged for (capped at 4 GiB); while e is
// live its Index's Used follows the change. The caller computes n from the
// value, after changing it.
func (e *Entry) SetCharge(n int64) {
	m := uint32(min(max(n, 0), 1<<32-1))
	if e.flags&flagLive != 0 {
		e.ks.idx.used += int64(m) - int64(e.mem)
	}
	e.mem = m
}

// Key returns the entry's key.
func (e *Entry) Key() string { return e.key }

// Live reports whether e is still in a keyspace.
func (e *Entry) Live() bool { return e.flags&flagLive != 0 }

// Owner is the keyspace e was added to.
func (e *Entry) Owner() *Keyspace { return e.ks }
