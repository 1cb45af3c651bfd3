package slots

// PatternSlot reports whether every key that can match the glob pattern
// (Redis glob syntax as in KEYS/SCAN MATCH: '*', '?', '[...]' and '\' escapes)
// must hash to one slot, and if so which one. It implements the same rule as
// patternHashSlot() in Redis's src/cluster.c (Redis 7.4+, used to restrict
// KEYS and SCAN MATCH to a single slot in cluster mode):
//
// The pattern is scanned from the left until the hash tag that a matching key
// would use is complete:
//
//   - a '*', '?', '[' or '\' seen before that point gives ok=false: a glob
//     special character before the '{' or inside the tag could match or
//     produce any bytes, and escapes are not interpreted ("{a\*bc}" is false);
//   - the first '{' followed, later, by a '}' with at least one byte between
//     them completes a non-empty tag: the slot is that of the tag text, and
//     whatever follows the '}' (globs included) is irrelevant, so "{abc}*"
//     gives the slot of "abc";
//   - if the scan reaches the end without meeting a glob special character,
//     the pattern is a literal that matches only the key equal to it, so the
//     result is HashSlot(pattern) with ok=true. This covers patterns with no
//     tag ("foo" → slot of "foo"), an empty first tag ("{}x" → slot of "{}x";
//     braces after an empty tag are never a tag, as in HashSlot) and an
//     unclosed '{' ("{abc" → slot of "{abc").
//
// So "*{abc}", "{a*c}", "{a\*bc}", "foo*" and "{}x*" give ok=false. When ok is
// false, slot is -1.
func PatternSlot(pattern []byte) (slot int, ok bool) {
	open := -1 // index of the first '{'; -2 once an empty tag "{}" was seen
	for i, c := range pattern {
		switch {
		case c == '*' || c == '?' || c == '[' || c == '\\':
			return -1, false
		case c == '{' && open == -1:
			open = i
		case c == '}' && open >= 0:
			if i == open+1 {
				open = -2 // "{}": keys hash whole, later braces don't count
				continue
			}
			return int(crc16Of(pattern, open+1, i) & slotMask), true
		}
	}
	// No glob special character at all: the pattern matches only the key
	// equal to it. Every way of getting here (no '{', an unclosed '{', an
	// empty first tag) is a case where HashSlot hashes the whole key.
	return int(crc16Of(pattern, 0, len(pattern)) & slotMask), true
}
