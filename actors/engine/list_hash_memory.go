package engine

// Hooks for other commands over list and hash values: OBJECT ENCODING
// (listEncoding, hashEncoding; the values also implement Encoder) and
// MEMORY USAGE (listMemory, hashMemory).

import "github.com/slotd/slotd/actors/engine/keyspace"

// listEncoding is OBJECT ENCODING for a list.
func listEncoding(e *keyspace.Entry) string { return e.Obj.(*ListValue).Encoding() }

// hashEncoding is OBJECT ENCODING for a hash.
func hashEncoding(e *keyspace.Entry) string { return e.Obj.(*HashValue).Encoding() }

// Sizes of Redis's structures on 64-bit builds, used so MEMORY USAGE gives
// numbers of the same order as Redis's for the same data.
const (
	robjSize          = 16 // redisObject
	quicklistSize     = 40
	quicklistNodeSize = 32
	listpackOverhead  = 7    // header and end byte
	listpackNodeBytes = 8192 // list-max-listpack-size -2
	dictSize          = 56   // dict with its two tables' headers
	dictEntrySize     = 24
	sdsOverhead       = 4 // sdshdr8 header and terminator, small strings
)

// listpackEntrySize approximates the bytes a listpack spends on an element
// of length n: its encoding byte(s), the data and the back-length.
func listpackEntrySize(n int) int {
	switch {
	case n < 64:
		return n + 2
	case n < 4096:
		return n + 4
	default:
		return n + 10
	}
}

// listMemory estimates the bytes Redis would use for a list value: a
// quicklist of 8kb listpack nodes.
func ListMemory(e *keyspace.Entry) int {
	l := ListOf(e)
	data := l.Bytes() + 2*l.Len() // small elements: 2 bytes of framing each
	nodes := data/listpackNodeBytes + 1
	return robjSize + quicklistSize + nodes*(quicklistNodeSize+listpackOverhead) + data
}

// hashMemory estimates the bytes Redis would use for a hash value: one
// listpack while compact, else a dict of sds pairs.
func HashMemory(e *keyspace.Entry) int {
	h := HashOf(e)
	if h.Compact() {
		size := robjSize + listpackOverhead
		h.Each(func(f, v string) bool {
			size += listpackEntrySize(len(f)) + listpackEntrySize(len(v))
			return true
		})
		return size
	}
	return robjSize + dictSize + 8*h.Buckets() + h.Len()*(dictEntrySize+2*sdsOverhead) + h.Bytes()
}
