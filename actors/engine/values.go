package engine

import (
	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/actors/engine/types/hash"
	"github.com/slotd/slotd/actors/engine/types/list"
	"github.com/slotd/slotd/actors/engine/types/set"
	"github.com/slotd/slotd/actors/engine/types/zset"
)

// hashValue is the Obj of a KindHash entry.
type HashValue struct{ hash.Hash }

// Encoding implements Encoder: "listpack" while compact, else "hashtable".
func (h *HashValue) Encoding() string {
	if h.Compact() {
		return "listpack"
	}
	return "hashtable"
}

// Clone implements Cloner (COPY).
func (h *HashValue) Clone() any { return &HashValue{Hash: *h.Hash.Clone()} }

// hashOf is the hash stored in a KindHash entry.
func HashOf(e *keyspace.Entry) *hash.Hash { return &e.Obj.(*HashValue).Hash }

// hashLimits are the node's current conversion thresholds.
func (c *Call) HashLimits() hash.Limits {
	g := c.S.group
	return hash.Limits{MaxEntries: g.HashMaxListpackEntries.Load(), MaxValue: g.HashMaxListpackValue.Load()}
}

// listValue is the Obj of a KindList entry.
type ListValue struct{ list.List }

// Encoding implements Encoder. Redis 7.0 keeps every list in a quicklist
// (the listpack form for small lists arrived in 7.2).
func (l *ListValue) Encoding() string { return "quicklist" }

// Clone implements Cloner (COPY).
func (l *ListValue) Clone() any { return &ListValue{List: *l.List.Clone()} }

// listOf is the list stored in a KindList entry.
func ListOf(e *keyspace.Entry) *list.List { return &e.Obj.(*ListValue).List }

// setEncoding is OBJECT ENCODING for a set entry.
func setEncoding(e *keyspace.Entry) string {
	if s, ok := e.Obj.(*set.Set); ok {
		return s.Encoding()
	}
	return "hashtable"
}

// setMemory estimates the bytes a set value takes in Redis (for MEMORY
// USAGE): the intset blob, or the dict with its entries and member strings.
func SetMemory(e *keyspace.Entry) int64 {
	s, ok := e.Obj.(*set.Set)
	if !ok {
		return 0
	}
	const robj = 16
	if s.IsIntset() {
		return robj + 8 + int64(s.IntWidth()*s.Len())
	}
	// dict header, bucket array, one 24-byte entry and one sds (header +
	// bytes + NUL, rounded to the allocator's 8-byte classes) per member.
	n := int64(s.Len())
	return robj + 56 + 8*int64(s.Buckets()) + n*24 + int64(s.MemberBytes()) + n*(3+1+4)
}

func (c *Call) MaxIntset() int {
	return int(min(c.S.group.SetMaxIntsetEntries.Load(), 1<<30))
}

// zsetMemory estimates the bytes a sorted-set value takes in Redis (for
// MEMORY USAGE): a listpack of member/score pairs, or the dict plus the
// skiplist nodes (about 1.33 levels per node) and member strings.
func ZsetMemory(e *keyspace.Entry) int64 {
	z, ok := e.Obj.(*zset.ZSet)
	if !ok {
		return 0
	}
	const robj = 16
	n := int64(z.Len())
	if z.Encoding() == "listpack" {
		// header and end byte; per pair about 2 bytes of entry overhead for
		// the member and a score of up to 10 bytes.
		return robj + 7 + int64(z.MemberBytes()) + n*(2+10)
	}
	return robj + 16 + 56 + 8*int64(z.Buckets()) + n*24 + // dict
		48 + n*(32+22) + // skiplist header and nodes
		int64(z.MemberBytes()) + n*4 // member sds
}

func (c *Call) ZsetMaxEntries() int64 { return c.S.group.ZSetMaxListpackEntries.Load() }

func (c *Call) ZsetMaxValue() int64 { return c.S.group.ZSetMaxListpackValue.Load() }

// encodingOf names the encoding Redis would use: for strings "int" when the
// value is a canonical 64-bit integer, "embstr" up to 44 bytes, else "raw".
func EncodingOf(e *keyspace.Entry) string {
	if e.Kind == keyspace.KindString {
		if IsIntEncoded(e.Str) {
			return "int"
		}
		if len(e.Str) <= 44 {
			return "embstr"
		}
		return "raw"
	}
	if enc, ok := e.Obj.(Encoder); ok {
		return enc.Encoding()
	}
	switch e.Kind {
	case keyspace.KindList:
		return "quicklist"
	case keyspace.KindZSet:
		return "skiplist"
	case keyspace.KindStream:
		return "stream"
	}
	return "hashtable"
}

func IsIntEncoded(v []byte) bool {
	if len(v) > 20 {
		return false
	}
	_, ok := ParseInt(v)
	return ok
}

// zsetEncoding is OBJECT ENCODING for a sorted-set entry.
func zsetEncoding(e *keyspace.Entry) string {
	if z, ok := e.Obj.(*zset.ZSet); ok {
		return z.Encoding()
	}
	return "skiplist"
}

// Encoder is implemented by values of non-string kinds (Entry.Obj) to
// report their OBJECT ENCODING ("listpack", "hashtable", ...).
type Encoder interface {
	Encoding() string
}
