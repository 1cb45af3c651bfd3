package slots

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPatternSlot(t *testing.T) {
	slot := func(s string) int { return int(CRC16([]byte(s)) & 16383) }
	cases := []struct {
		pattern string
		slot    int
		ok      bool
	}{
		// A non-empty tag with nothing special before or inside it.
		{"{abc}*", slot("abc"), true},
		{"{abc}", slot("abc"), true},
		{"foo{abc}bar?[xy]\\*", slot("abc"), true}, // anything after '}' is irrelevant
		{"{user1000}.*", slot("user1000"), true},
		{"x{a{b}*", slot("a{b"), true}, // only the first '{' opens the tag
		{"{{bar}}*", slot("{bar"), true},
		{"a}{b}*", slot("b"), true}, // a '}' before the first '{' is plain text

		// Glob special characters before the tag, or inside it.
		{"*{abc}", -1, false},
		{"?{abc}", -1, false},
		{"[a]{abc}", -1, false},
		{"\\{abc}", -1, false},
		{"{a*c}", -1, false},
		{"{a?c}", -1, false},
		{"{a[b]c}", -1, false},
		{"{a\\*bc}", -1, false}, // escapes are not interpreted
		{"{a\\bc}", -1, false},

		// No usable tag: ok only if the whole pattern is a literal.
		{"foo*", -1, false},
		{"{}x*", -1, false},
		{"{}{abc}*", -1, false}, // braces after an empty tag never form a tag
		{"{abc*", -1, false},
		{"*", -1, false},
		{"", 0, true},
		{"foo", slot("foo"), true},
		{"{}x", slot("{}x"), true},
		{"{abc", slot("{abc"), true},
		{"}abc{", slot("}abc{"), true},
	}
	for _, c := range cases {
		s, ok := PatternSlot([]byte(c.pattern))
		assert.Equal(t, c.ok, ok, "PatternSlot(%q) ok", c.pattern)
		assert.Equal(t, c.slot, s, "PatternSlot(%q) slot", c.pattern)
		if ok {
			// Where the pattern is a literal or the tag is fixed, the slot is
			// the one a matching key would hash to.
			assert.Equal(t, HashSlotString(literalPrefixKey(c.pattern)), s, "PatternSlot(%q) vs HashSlot", c.pattern)
		}
	}
}

// literalPrefixKey turns a pattern accepted by PatternSlot into one key it
// matches: everything up to the first glob character, then "x" if the pattern
// continued (the tail can only come after the tag, so it does not matter).
func literalPrefixKey(p string) string {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '*', '?', '[', '\\':
			return p[:i] + "x"
		}
	}
	return p
}

func TestParseSlot(t *testing.T) {
	good := map[string]int{"0": 0, "1": 1, "5460": 5460, "16383": 16383, "9": 9}
	for in, want := range good {
		got, ok := ParseSlot([]byte(in))
		assert.True(t, ok, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{
		"", "16384", "99999", "100000", "-1", "-0", "+1", "01", "00", " 1", "1 ",
		"1x", "x", "1.0", "0x10", "18446744073709551617", "\x001",
	} {
		_, ok := ParseSlot([]byte(in))
		assert.False(t, ok, "%q", in)
	}
}

// TestPatternSlotSound instantiates random glob patterns into keys they match
// and checks that whenever PatternSlot claims a single slot, every such key
// hashes to it. Patterns use '*', '?' and '\' (whose matches are easy to
// construct) plus braces and plain letters.
func TestPatternSlotSound(t *testing.T) {
	const patAlpha = "ab{}{}*?\\"
	const keyAlpha = "ab{}*?\\\x00"
	x := uint64(0x9e3779b97f4a7c15)
	next := func(n int) int { // xorshift64
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		return int(x % uint64(n))
	}
	instantiate := func(p []byte) []byte {
		var k []byte
		for i := 0; i < len(p); i++ {
			switch p[i] {
			case '*':
				for range next(4) {
					k = append(k, keyAlpha[next(len(keyAlpha))])
				}
			case '?':
				k = append(k, keyAlpha[next(len(keyAlpha))])
			case '\\':
				if i+1 < len(p) {
					i++
				}
				k = append(k, p[i])
			default:
				k = append(k, p[i])
			}
		}
		return k
	}
	single := 0
	for range 20000 {
		p := make([]byte, next(10))
		for i := range p {
			p[i] = patAlpha[next(len(patAlpha))]
		}
		slot, ok := PatternSlot(p)
		if !ok {
			continue
		}
		single++
		for range 8 {
			k := instantiate(p)
			if HashSlot(k) != slot {
				t.Fatalf("PatternSlot(%q) = %d, but matching key %q hashes to %d", p, slot, k, HashSlot(k))
			}
		}
	}
	assert.Greater(t, single, 1000, "too few single-slot patterns generated")
}
