package slots

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// matchCases were checked against Redis's own stringmatchlen (compiled from
// the Redis 7 sources, x86-64 Linux).
var matchCases = []struct {
	pattern, str string
	nocase       bool
	want         bool
}{
	// Basics.
	{"", "", false, true},
	{"", "a", false, false},
	{"a", "", false, false},
	{"*", "", false, false}, // Redis quirk: an empty string only matches ""
	{"**", "", false, false},
	{"*", "anything", false, true},
	{"*", "a", false, true},
	{"**", "abc", false, true},
	{"hello", "hello", false, true},
	{"hello", "hellO", false, false},
	{"hello", "hello!", false, false},
	{"hello!", "hello", false, false},
	{"h*o", "hello", false, true},
	{"h*o", "ho", false, true},
	{"h*o", "hell", false, false},
	{"*llo", "hello", false, true},
	{"hel*", "hel", false, true},
	{"hel**", "hel", false, true},
	{"hel*x", "hel", false, false},
	{"*a*b*c*", "xaxbxcx", false, true},
	{"*a*b*c*", "xaxcxbx", false, false},
	{"a*b", "aXbXb", false, true},
	{"a*b", "aXbXc", false, false},
	{"user:*:name", "user:1000:name", false, true},
	{"{a}*", "{a}x", false, true},
	{"*{b}*", "c{b}a", false, true},

	// '?'.
	{"h?llo", "hello", false, true},
	{"h?llo", "hallo", false, true},
	{"h?llo", "hllo", false, false},
	{"h?llo", "heello", false, false},
	{"???", "abc", false, true},
	{"???", "ab", false, false},
	{"?*", "a", false, true},
	{"*?", "a", false, true},
	{"*?", "", false, false},
	{"?", "\xff", false, true},

	// Sets.
	{"h[ae]llo", "hello", false, true},
	{"h[ae]llo", "hallo", false, true},
	{"h[ae]llo", "hillo", false, false},
	{"h[^e]llo", "hallo", false, true},
	{"h[^e]llo", "hbllo", false, true},
	{"h[^e]llo", "hello", false, false},
	{"h[a-b]llo", "hallo", false, true},
	{"h[a-b]llo", "hbllo", false, true},
	{"h[a-b]llo", "hcllo", false, false},
	{"[a-z]", "m", false, true},
	{"[a-z]", "M", false, false},
	{"[z-a]", "m", false, true}, // reversed range is swapped
	{"[z-a]", "a", false, true},
	{"[z-a]", "z", false, true},
	{"[z-a]", "-", false, false},
	{"[^a-z]", "m", false, false},
	{"[^a-z]", "1", false, true},
	{"[a-c-e]", "d", false, false}, // "a-c" then literals '-' and 'e'
	{"[a-c-e]", "-", false, true},
	{"[a-c-e]", "e", false, true},
	{"[-a]", "-", false, true},
	{"[a-]", "_", false, true}, // range 'a'..']' (swapped to ']'..'a'); the set runs on unterminated
	{"[a-]", "]", false, true},
	{"[a-]", "b", false, false},
	{"[a-]", "-", false, false},
	{"[a-]b", "ab", false, false}, // ...and swallows the 'b'
	{"[]", "]", false, false},     // empty set
	{"[]]", "]", false, false},
	{"[]]", "]]", false, false},
	{"[]a]", "]", false, false},
	{"[\\]]", "]", false, true},
	{"[\\^]", "^", false, true},
	{"[\\-]", "-", false, true},
	{"[a\\-z]", "m", false, false},
	{"[a\\-z]", "-", false, true},
	{"[^]", "a", false, true},
	{"[^]a", "ba", false, true},
	{"[*]", "*", false, true},
	{"[*]", "a", false, false},
	{"[?]", "?", false, true},
	{"[?]", "a", false, false},
	{"a[]b", "ab", false, false},

	// Unterminated sets run to the end of the pattern.
	{"[", "a", false, false},
	{"[", "[", false, false},
	{"[", "", false, false},
	{"a[", "a", false, false},
	{"[abc", "a", false, true},
	{"[abc", "c", false, true},
	{"[abc", "d", false, false},
	{"[abc", "ab", false, false},
	{"[^", "a", false, true},
	{"[^", "", false, false},
	{"[^abc", "d", false, true},
	{"[^abc", "a", false, false},
	{"x[a-", "xa", false, true},
	{"x[a-", "x-", false, true},
	{"[\\", "\\", false, true},
	{"[\\", "a", false, false},

	// Escapes.
	{"\\*", "*", false, true},
	{"\\*", "a", false, false},
	{"\\?", "?", false, true},
	{"\\?", "a", false, false},
	{"\\[a]", "[a]", false, true},
	{"\\[a]", "a", false, false},
	{"\\a", "a", false, true},
	{"\\\\", "\\", false, true},
	{"a\\", "a\\", false, true}, // trailing backslash is literal
	{"a\\", "a", false, false},
	{"\\", "\\", false, true},
	{"*\\*", "abc*", false, true},
	{"*\\*", "abc", false, false},

	// nocase.
	{"HELLO", "hello", true, true},
	{"hello", "HeLLo", true, true},
	{"hello", "HeLLo", false, false},
	{"h?LLO", "Hello", true, true},
	{"h[AE]llo", "hello", true, true},
	{"h[ae]llo", "HELLO", true, true},
	{"h[^E]llo", "hello", true, false},
	{"[A-Z]", "m", true, true},
	{"[a-z]", "M", true, true},
	{"[Z-a]", "m", true, false}, // folded after the swap: 'z'..'a' is empty
	{"[Z-a]", "_", true, false},
	{"[Z-a]", "_", false, true},
	{"[\\A]", "a", true, false}, // escapes inside a set ignore nocase
	{"[\\A]", "A", true, true},
	{"\\A", "a", true, true}, // but not outside one
	{"*B*", "abc", true, true},
	{"\xc4", "\xe4", true, false}, // ASCII folding only
	{"[@-Z]", "a", true, true},    // '@'..'Z' folds to '@'..'z'
	{"[@-Z]", "a", false, false},

	// Bytes >= 0x80 in ranges compare as signed chars (x86-64 Redis).
	{"[a-\xff]", "b", false, false}, // 0xff is -1: range -1..'a'
	{"[a-\xff]", "\x00", false, true},
	{"[a-\xff]", "\xff", false, true},
	{"[a-\xff]", "\x80", false, false},
	{"[\x80-\xff]", "\x90", false, true},
	{"[\x80-\xff]", "a", false, false},
	{"[\x00-\x7f]", "\x80", false, false},
	{"[\x00-\x7f]", "\x7f", false, true},
	{"[\x80-a]", "\x00", false, true},
	{"[\x80-a]", "\x00", true, false}, // glibc tolower maps -128 to 128: empty range
	{"[\x81-\xfe]", "\x90", true, true},
	{"\x00", "\x00", false, true},
	{"a\x00*", "a\x00bc", false, true},
	{"[\x00]", "\x00", false, true},

	// Abusive patterns: the "skip longer matches" cut and the nesting limit.
	{"a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", strings.Repeat("a", 40), false, false},
	{"a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a", strings.Repeat("a", 40), false, true},
	{"*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b*", strings.Repeat("a", 60) + "b", false, true},
	{strings.Repeat("*?", 1000), strings.Repeat("a", 1000), false, true},
	{strings.Repeat("*?", 1001), strings.Repeat("a", 1001), false, false}, // nested > 1000 deep
	{strings.Repeat("*?", 50000), strings.Repeat("a", 50000), false, false},
	{strings.Repeat("*", 50000) + "a", strings.Repeat("a", 50000), false, true}, // runs of '*' collapse
}

func TestMatch(t *testing.T) {
	for _, c := range matchCases {
		name := c.pattern
		if len(name) > 40 {
			name = name[:40] + "..."
		}
		assert.Equal(t, c.want, Match([]byte(c.pattern), []byte(c.str), c.nocase),
			"Match(%q, %q, nocase=%v)", name, c.str, c.nocase)
		assert.Equal(t, c.want, MatchString(c.pattern, c.str, c.nocase), "MatchString(%q)", name)
		assert.Equal(t, c.want, MatchKey([]byte(c.pattern), c.str, c.nocase), "MatchKey(%q)", name)
		if len(c.pattern) < 100 && len(c.str) > 0 {
			assert.Equal(t, c.want, refMatch(c.pattern, c.str, c.nocase), "reference disagrees on %q %q", name, c.str)
		}
	}
}

func TestMatchPathologicalIsFast(t *testing.T) {
	start := time.Now()
	long := []byte(strings.Repeat("a", 100000))
	require.False(t, Match([]byte("a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b"), long, false))
	require.False(t, Match([]byte(strings.Repeat("*a", 900)+"b"), long, false))
	require.False(t, Match([]byte(strings.Repeat("*?", 50000)), long[:50000], false))
	require.False(t, Match([]byte(strings.Repeat("*[a-z]", 500)+"*b"), long, true))
	require.Less(t, time.Since(start), 2*time.Second)
}

// refMatch is an independent reference for Match: it tokenises the pattern
// (with Redis's bracket-parsing rules) and runs a textbook dynamic program,
// without the backtracking cut and without the nesting limit, so it is only
// comparable for patterns with fewer than 1000 stars.
func refMatch(pattern, str string, nocase bool) bool {
	if str == "" {
		return pattern == ""
	}
	type token struct {
		star bool
		test func(c byte) bool
	}
	fold := func(c byte) byte {
		if 'A' <= c && c <= 'Z' {
			return c + 32
		}
		return c
	}
	eq := func(a, b byte) bool { return a == b || nocase && fold(a) == fold(b) }
	var toks []token
	p := pattern
	for len(p) > 0 {
		switch c := p[0]; {
		case c == '*':
			toks = append(toks, token{star: true})
			p = p[1:]
		case c == '?':
			toks = append(toks, token{test: func(byte) bool { return true }})
			p = p[1:]
		case c == '\\' && len(p) > 1:
			lit := p[1]
			toks = append(toks, token{test: func(b byte) bool { return eq(lit, b) }})
			p = p[2:]
		case c == '[':
			p = p[1:]
			neg := strings.HasPrefix(p, "^")
			if neg {
				p = p[1:]
			}
			var members []func(byte) bool
			for len(p) > 0 && p[0] != ']' {
				switch {
				case p[0] == '\\' && len(p) > 1:
					lit := p[1]
					members = append(members, func(b byte) bool { return b == lit })
					p = p[2:]
				case len(p) > 2 && p[1] == '-':
					lo, hi := int(int8(p[0])), int(int8(p[2]))
					members = append(members, func(b byte) bool {
						lo, hi, x := min(lo, hi), max(lo, hi), int(int8(b))
						if nocase {
							lo, hi, x = lowerC(lo), lowerC(hi), lowerC(x)
						}
						return lo <= x && x <= hi
					})
					p = p[3:]
				default:
					lit := p[0]
					members = append(members, func(b byte) bool { return eq(lit, b) })
					p = p[1:]
				}
			}
			if len(p) > 0 {
				p = p[1:] // ']'
			}
			toks = append(toks, token{test: func(b byte) bool {
				hit := false
				for _, m := range members {
					hit = hit || m(b)
				}
				return hit != neg
			}})
		default:
			toks = append(toks, token{test: func(b byte) bool { return eq(c, b) }})
			p = p[1:]
		}
	}
	// ok[j]: the tokens so far match str[:j].
	ok := make([]bool, len(str)+1)
	ok[0] = true
	for _, tk := range toks {
		next := make([]bool, len(str)+1)
		for j := range ok {
			if tk.star {
				next[j] = ok[j] || (j > 0 && next[j-1])
			} else if j > 0 {
				next[j] = ok[j-1] && tk.test(str[j-1])
			}
		}
		ok = next
	}
	return ok[len(str)]
}

func FuzzMatch(f *testing.F) {
	for _, c := range matchCases {
		if len(c.pattern) < 64 && len(c.str) < 64 {
			f.Add(c.pattern, c.str, c.nocase)
		}
	}
	f.Fuzz(func(t *testing.T, pattern, str string, nocase bool) {
		if len(pattern) > 200 || len(str) > 200 {
			return // keep the DP cheap and the star count far below the nesting limit
		}
		got := MatchString(pattern, str, nocase)
		if want := refMatch(pattern, str, nocase); got != want {
			t.Fatalf("MatchString(%q, %q, %v) = %v, reference says %v", pattern, str, nocase, got, want)
		}
	})
}

func BenchmarkMatch(b *testing.B) {
	for _, bc := range []struct{ name, pattern, str string }{
		{"literal", "user:1000:profile", "user:1000:profile"},
		{"prefix*", "user:*", "user:1000:profile"},
		{"class", "user:[0-9][0-9][0-9][0-9]:*", "user:1000:profile"},
		{"pathological", "a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", strings.Repeat("a", 1000)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p, s := []byte(bc.pattern), []byte(bc.str)
			b.ReportAllocs()
			for b.Loop() {
				Match(p, s, false)
			}
		})
	}
}
