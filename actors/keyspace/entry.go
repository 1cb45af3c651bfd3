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
	flagLive    = 1 << iota // linked into a Keyspace's main table
	flagExpires             // linked into that Keyspace's expiry index
)

// Link slots in Entry.next: which table's chain a link belongs to.
const (
	linkMain   = 0
	linkExpire = 1
)

// Entry is one key with its value and expiry. Entries are created by
// [Keyspace.Add] / [Keyspace.GetOrAdd] and stay valid (as Go values) after
// they are deleted, so a caller may keep using a deleted entry's value.
//
// The value fields belong to the caller. Expire must only be changed through
// [Keyspace.SetExpire], which keeps the expiry index in sync.
type Entry struct {
	// Expire is the absolute expiry time in unix milliseconds; 0 means the
	// key has no TTL. Read freely; write only via Keyspace.SetExpire.
	Expire int64
	// Kind is the type of the value.
	Kind Kind

	flags uint8  // flagLive | flagExpires
	gen   uint32 // Keyspace.gen at insertion; Clear invalidates by bumping it

	// Str holds a string value. The entry owns it: callers must copy bytes in
	// rather than alias request buffers.
	Str []byte
	// Obj holds the value of every non-string kind.
	Obj any

	key  string
	hash uint64
	// next[linkMain] chains the entry in the main table's bucket,
	// next[linkExpire] in the expiry index's bucket, so one allocation serves
	// both tables.
	next [2]*Entry
}

// Key returns the entry's key.
func (e *Entry) Key() string { return e.key }
