package slots

// text is the set of byte-string types the matcher accepts.
type text interface{ ~string | ~[]byte }

// maxMatchNesting is how deeply '*'s may nest before a match is refused.
const maxMatchNesting = 1000

// Match reports whether str matches the glob pattern, giving the same result
// as Redis's stringmatchlen (KEYS, SCAN MATCH, PSUBSCRIBE, ...) for every
// input, quirks included. It does not allocate.
//
//   - '*' matches any run of bytes, '?' any single byte.
//   - '\x' matches x literally; a '\' that ends the pattern matches '\'.
//   - '[...]' matches one byte against a set: "[abc]", ranges "[a-z]" (a
//     reversed range "[z-a]" means "[a-z]"), a leading '^' negates, and "\x"
//     inside a set is a literal x. A '-' makes a range only when two more
//     bytes follow it: in "[a-]" the range is ']'..'a' and the set then runs
//     on. An unterminated set runs to the end of the pattern: "[abc" matches
//     "a", "[" matches nothing and "[^" matches any byte. "[]" is empty.
//   - nocase folds ASCII letters only. It applies to literals, set members
//     and both range ends (after a reversed range is swapped), but not to
//     "\x" escapes inside a set.
//   - Ranges compare bytes as Redis built for x86-64 Linux does (signed C
//     char, glibc tolower): bytes >= 0x80 sort below 0x00 inside ranges, and
//     under nocase glibc's tolower maps them back to 128..254 after the swap.
//   - An empty string matches only the empty pattern; in particular "*" does
//     not match "" (Redis's callers special-case a lone "*").
//   - Abusive patterns are cut short, which can change results exactly as in
//     Redis 7: once a '*' has tried every remaining position for the rest of
//     the pattern and failed, all enclosing '*'s give up too (a longer match
//     there could only push the rest further right), which makes
//     "a*a*a*...*b" against "aaaa..." polynomial instead of exponential; and
//     a match nested more than 1000 '*'s deep fails, so e.g. 50000
//     repetitions of "*?" do not match 50000 'a's.
func Match(pattern, str []byte, nocase bool) bool {
	return match(pattern, str, nocase)
}

// MatchString is Match for strings.
func MatchString(pattern, str string, nocase bool) bool {
	return match(pattern, str, nocase)
}

// MatchKey is Match for a []byte pattern against a string key, as SCAN MATCH
// uses it with Entry.Key.
func MatchKey(pattern []byte, key string, nocase bool) bool {
	return match(pattern, key, nocase)
}

func match[P, S text](pattern P, str S, nocase bool) bool {
	m := globState{nocase: nocase}
	return globMatch(&m, pattern, str, 0)
}

type globState struct {
	nocase bool
	// giveUp is set once some '*' found no position at which the rest of the
	// pattern matches; all enclosing '*'s then stop trying longer runs.
	giveUp bool
}

func globMatch[P, S text](m *globState, p P, s S, depth int) bool {
	if depth > maxMatchNesting {
		return false
	}
	i, j := 0, 0 // positions in p and s
	for i < len(p) && j < len(s) {
		switch p[i] {
		case '*':
			for i+1 < len(p) && p[i+1] == '*' {
				i++
			}
			if i+1 == len(p) {
				return true // a trailing star eats the rest
			}
			rest := p[i+1:]
			for ; j < len(s); j++ {
				if globMatch(m, rest, s[j:], depth+1) {
					return true
				}
				if m.giveUp {
					return false
				}
			}
			m.giveUp = true
			return false
		case '?':
			i++
		case '[':
			ok, n := matchSet(p[i+1:], s[j], m.nocase)
			if !ok {
				return false
			}
			i += 1 + n
		case '\\':
			if i+1 < len(p) {
				i++
			}
			fallthrough
		default:
			if p[i] != s[j] && !(m.nocase && lowerC(int(p[i])) == lowerC(int(s[j]))) {
				return false
			}
			i++
			// Fast path: run through identical plain bytes without going
			// round the switch. It stops short of the string's last byte so
			// that the end-of-string handling below still runs.
			for i < len(p) && j+1 < len(s) && p[i] == s[j+1] && !isGlobMeta(p[i]) {
				i++
				j++
			}
		}
		j++
		if j == len(s) {
			// Stars left over can only match the empty tail.
			for i < len(p) && p[i] == '*' {
				i++
			}
		}
	}
	return i == len(p) && j == len(s)
}

// matchSet tests c against the bracket expression whose body starts at p
// (just past the '['). It returns the verdict and how many bytes of p the
// expression occupies, closing ']' included; parsing never depends on c.
func matchSet[P text](p P, c byte, nocase bool) (bool, int) {
	i := 0
	negate := len(p) > 0 && p[0] == '^'
	if negate {
		i++
	}
	hit := false
	for i < len(p) {
		switch {
		case p[i] == '\\' && i+1 < len(p):
			// Escaped member: compared exactly, even under nocase.
			hit = hit || p[i+1] == c
			i += 2
		case p[i] == ']':
			return hit != negate, i + 1
		case i+2 < len(p) && p[i+1] == '-':
			lo, hi, x := cChar(p[i]), cChar(p[i+2]), cChar(c)
			if lo > hi {
				lo, hi = hi, lo
			}
			if nocase {
				lo, hi, x = lowerC(lo), lowerC(hi), lowerC(x)
			}
			hit = hit || (lo <= x && x <= hi)
			i += 3
		default:
			hit = hit || sameByte(p[i], c, nocase)
			i++
		}
	}
	// Unterminated: the set runs to the end of the pattern.
	return hit != negate, i
}

func isGlobMeta(c byte) bool { return c == '*' || c == '?' || c == '[' || c == '\\' }

// cChar widens b the way a signed C char is promoted to int.
func cChar(b byte) int { return int(int8(b)) }

// lowerC is glibc's tolower in the "C" locale (Redis never sets LC_CTYPE).
// Besides folding ASCII letters it maps the negative values a signed char
// can take, other than -1 (EOF), to their unsigned byte value. That only
// shows through in nocase ranges: e.g. "[z-\x80]" swaps to -128..'z' and then
// folds to the empty range 128..'z'.
func lowerC(c int) int {
	switch {
	case 'A' <= c && c <= 'Z':
		return c + ('a' - 'A')
	case -128 <= c && c <= -2:
		return c + 256
	}
	return c
}

func sameByte(a, b byte, nocase bool) bool {
	return a == b || nocase && lowerC(int(a)) == lowerC(int(b))
}
