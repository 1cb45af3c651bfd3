package slots

import (
	"bytes"
	"strings"
)

// HashSlot returns the cluster hash slot (0..NumSlots-1) of key.
//
// Hash-tag rule (as in the Redis Cluster specification): if key contains a '{'
// and, after the first '{', a '}' with at least one byte between that first
// '{' and the first following '}', only the bytes between them are hashed.
// Otherwise (no '{', no '}' after it, or an empty tag "{}") the whole key is
// hashed. Only the first '{' is considered, so "foo{}{bar}" hashes the whole
// key, "foo{{bar}}zap" hashes "{bar" and "foo{bar}{zap}" hashes "bar".
func HashSlot(key []byte) int {
	open := bytes.IndexByte(key, '{')
	if open < 0 {
		return int(crc16Of(key, 0, len(key)) & slotMask)
	}
	lo, hi := tagRange(len(key), open, bytes.IndexByte(key[open+1:], '}'))
	return int(crc16Of(key, lo, hi) & slotMask)
}

// HashSlotString is HashSlot for a string key; it does not allocate.
func HashSlotString(key string) int {
	open := strings.IndexByte(key, '{')
	if open < 0 {
		return int(crc16Of(key, 0, len(key)) & slotMask)
	}
	lo, hi := tagRange(len(key), open, strings.IndexByte(key[open+1:], '}'))
	return int(crc16Of(key, lo, hi) & slotMask)
}

// tagRange returns the bounds [lo, hi) of the part of a key of n bytes that
// is hashed, given the offset of its first '{' and that of the first '}'
// after it (relative to the byte after the '{', -1 if none).
func tagRange(n, open, end int) (lo, hi int) {
	if end <= 0 { // no closing '}', or an empty tag "{}": the whole key
		return 0, n
	}
	return open + 1, open + 1 + end
}
