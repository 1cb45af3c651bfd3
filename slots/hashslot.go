package slots

// HashSlot returns the cluster hash slot (0..NumSlots-1) of key.
//
// Hash-tag rule (as in the Redis Cluster specification): if key contains a '{'
// and, after the first '{', a '}' with at least one byte between that first
// '{' and the first following '}', only the bytes between them are hashed.
// Otherwise (no '{', no '}' after it, or an empty tag "{}") the whole key is
// hashed. Only the first '{' is considered, so "foo{}{bar}" hashes the whole
// key, "foo{{bar}}zap" hashes "{bar" and "foo{bar}{zap}" hashes "bar".
func HashSlot(key []byte) int {
	return hashSlot(key)
}

// HashSlotString is HashSlot for a string key; it does not allocate.
func HashSlotString(key string) int {
	return hashSlot(key)
}

func hashSlot[T ~string | ~[]byte](key T) int {
	lo, hi := hashRange(key)
	return int(crc16Of(key, lo, hi) & slotMask)
}

// hashRange returns the bounds [lo, hi) of the part of key that is hashed.
func hashRange[T ~string | ~[]byte](key T) (lo, hi int) {
	n := len(key)
	open := -1
	for i := range n {
		if key[i] == '{' {
			open = i
			break
		}
	}
	if open < 0 {
		return 0, n
	}
	for i := open + 1; i < n; i++ {
		if key[i] == '}' {
			if i == open+1 { // empty tag "{}": hash the whole key
				return 0, n
			}
			return open + 1, i
		}
	}
	return 0, n // '{' without a closing '}'
}
