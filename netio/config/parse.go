package config

import (
	"math"
	"math/bits"
	"strings"
)

// SplitArgs splits one configuration line into words with redis.conf
// quoting rules (those of Redis's sdssplitargs):
//
//   - words are separated by spaces, tabs, CR and LF;
//   - "double quoted" words understand \n \r \t \b \a, \xHH (two hex digits)
//     and \<any char> (that char);
//   - 'single quoted' words understand only \' ;
//   - a closing quote must be followed by white space or the end of the line;
//   - an empty pair of quotes (double or single) gives an empty word.
//
// ok is false when quotes are unbalanced (or a closing quote is followed by
// something other than white space).
func SplitArgs(line string) (words []string, ok bool) {
	words = []string{}
	i, n := 0, len(line)
	for {
		for i < n && isCSpace(line[i]) {
			i++
		}
		if i >= n {
			return words, true
		}
		var cur []byte
		inDouble, inSingle := false, false
	word:
		for {
			switch {
			case inDouble:
				if i >= n {
					return nil, false
				}
				ch := line[i]
				switch {
				case ch == '\\' && i+3 < n && line[i+1] == 'x' && isHex(line[i+2]) && isHex(line[i+3]):
					cur = append(cur, hexVal(line[i+2])<<4|hexVal(line[i+3]))
					i += 4
				case ch == '\\' && i+1 < n:
					i++
					switch c := line[i]; c {
					case 'n':
						cur = append(cur, '\n')
					case 'r':
						cur = append(cur, '\r')
					case 't':
						cur = append(cur, '\t')
					case 'b':
						cur = append(cur, '\b')
					case 'a':
						cur = append(cur, '\a')
					default:
						cur = append(cur, c)
					}
					i++
				case ch == '"':
					if i+1 < n && !isCSpace(line[i+1]) {
						return nil, false
					}
					i++
					break word
				default:
					cur = append(cur, ch)
					i++
				}
			case inSingle:
				if i >= n {
					return nil, false
				}
				ch := line[i]
				switch {
				case ch == '\\' && i+1 < n && line[i+1] == '\'':
					cur = append(cur, '\'')
					i += 2
				case ch == '\'':
					if i+1 < n && !isCSpace(line[i+1]) {
						return nil, false
					}
					i++
					break word
				default:
					cur = append(cur, ch)
					i++
				}
			default:
				if i >= n {
					break word
				}
				switch ch := line[i]; ch {
				case ' ', '\n', '\r', '\t', 0:
					i++
					break word
				case '"':
					inDouble = true
					i++
				case '\'':
					inSingle = true
					i++
				default:
					cur = append(cur, ch)
					i++
				}
			}
		}
		words = append(words, string(cur))
	}
}

func isCSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func hexVal(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// quoteArg renders s the way Redis's sdscatrepr does: always double quoted,
// with escapes for quotes, backslashes and non-printable bytes.
func quoteArg(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		default:
			if c < 0x20 || c > 0x7e {
				const hexdigits = "0123456789abcdef"
				b.WriteString(`\x`)
				b.WriteByte(hexdigits[c>>4])
				b.WriteByte(hexdigits[c&15])
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// parseStrictInt parses a decimal integer the way Redis's string2ll does:
// an optional '-', no '+', no spaces, no leading zeros ("0" alone is fine,
// "-0" is not), no overflow.
func parseStrictInt(s string) (int64, bool) {
	if s == "0" {
		return 0, true
	}
	neg := false
	p := s
	if len(p) > 0 && p[0] == '-' {
		neg = true
		p = p[1:]
	}
	if len(p) == 0 || p[0] < '1' || p[0] > '9' {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		hi, lo := bits.Mul64(v, 10)
		if hi != 0 {
			return 0, false
		}
		v, hi = bits.Add64(lo, uint64(c-'0'), 0)
		if hi != 0 {
			return 0, false
		}
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}

// ParseMemory parses a memory amount as redis.conf does (Redis's memtoull):
// digits followed by an optional unit, case-insensitive: b (1), k (1000),
// kb (1024), m (1000²), mb (1024²), g (1000³), gb (1024³). Negative values
// and values that overflow int64 are refused.
func ParseMemory(s string) (int64, bool) {
	u := 0
	for u < len(s) && s[u] >= '0' && s[u] <= '9' {
		u++
	}
	if u == 0 {
		return 0, false
	}
	var mul uint64
	switch strings.ToLower(s[u:]) {
	case "", "b":
		mul = 1
	case "k":
		mul = 1000
	case "kb":
		mul = 1024
	case "m":
		mul = 1000 * 1000
	case "mb":
		mul = 1024 * 1024
	case "g":
		mul = 1000 * 1000 * 1000
	case "gb":
		mul = 1024 * 1024 * 1024
	default:
		return 0, false
	}
	var v uint64
	for i := 0; i < u; i++ {
		hi, lo := bits.Mul64(v, 10)
		if hi != 0 {
			return 0, false
		}
		var carry uint64
		v, carry = bits.Add64(lo, uint64(s[i]-'0'), 0)
		if carry != 0 {
			return 0, false
		}
	}
	hi, lo := bits.Mul64(v, mul)
	if hi != 0 || lo > math.MaxInt64 {
		return 0, false
	}
	return int64(lo), true
}

// Match reports whether name matches the Redis glob pattern (as in CONFIG
// GET and KEYS: '*', '?', '[abc]', '[^a-z]', '\x' escapes), ignoring ASCII
// case.
func Match(pattern, name string) bool {
	return globMatch(pattern, name)
}

func lowerByte(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func globMatch(p, s string) bool {
	for len(p) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 1 && p[1] == '*' {
				p = p[1:]
			}
			if len(p) == 1 {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if globMatch(p[1:], s[i:]) {
					return true
				}
			}
			return false
		case '?':
			if len(s) == 0 {
				return false
			}
			s = s[1:]
			p = p[1:]
		case '[':
			if len(s) == 0 {
				return false
			}
			rest, matched := matchClass(p[1:], lowerByte(s[0]))
			if !matched {
				return false
			}
			p = rest
			s = s[1:]
		case '\\':
			if len(p) >= 2 {
				p = p[1:]
			}
			fallthrough
		default:
			if len(s) == 0 || lowerByte(p[0]) != lowerByte(s[0]) {
				return false
			}
			s = s[1:]
			p = p[1:]
		}
	}
	return len(s) == 0
}

// matchClass matches c against the bracket expression starting right after
// '['; it returns the pattern after the closing ']' (or the end of the
// pattern when the class is unterminated, as Redis does).
func matchClass(p string, c byte) (string, bool) {
	not := false
	if len(p) > 0 && p[0] == '^' {
		not = true
		p = p[1:]
	}
	match := false
	for {
		if len(p) == 0 {
			break
		}
		if p[0] == ']' {
			p = p[1:]
			break
		}
		switch {
		case p[0] == '\\' && len(p) >= 2:
			if lowerByte(p[1]) == c {
				match = true
			}
			p = p[2:]
		case len(p) >= 3 && p[1] == '-':
			lo, hi := lowerByte(p[0]), lowerByte(p[2])
			if lo > hi {
				lo, hi = hi, lo
			}
			if c >= lo && c <= hi {
				match = true
			}
			p = p[3:]
		default:
			if lowerByte(p[0]) == c {
				match = true
			}
			p = p[1:]
		}
	}
	if not {
		match = !match
	}
	return p, match
}

func hasGlob(s string) bool {
	return strings.ContainsAny(s, "*?[")
}
