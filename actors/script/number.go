package script

import (
	"math"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// Lua 5.1 turns strings into numbers with C's strtod (luaO_str2d), which
// gopher-lua does not follow: its tonumber refuses "1e3" and "inf", for
// one. Redis's scripts see the C behaviour, reproduced here.

func isCSpace(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }

// hasPrefixFold reports whether s starts with the lower-case word w, in any
// case.
func hasPrefixFold(s, w string) bool { return len(s) >= len(w) && strings.EqualFold(s[:len(w)], w) }

// cStrtod is glibc's strtod: it returns the value of the longest number at
// the start of s (after white space) and where it ends; end is 0 when
// there is none. Out-of-range values come out as ±Inf or 0, as strtod
// returns them (Lua ignores errno).
func cStrtod(s string) (float64, int) {
	i := 0
	for i < len(s) && isCSpace(s[i]) {
		i++
	}
	start := i
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	sign := func(f float64) float64 {
		if neg {
			return -f
		}
		return f
	}
	rest := s[i:]
	switch {
	case hasPrefixFold(rest, "infinity"):
		return sign(math.Inf(1)), i + len("infinity")
	case hasPrefixFold(rest, "inf"):
		return sign(math.Inf(1)), i + len("inf")
	case hasPrefixFold(rest, "nan"):
		end := i + len("nan")
		if end < len(s) && s[end] == '(' {
			j := end + 1
			for j < len(s) && (isAlnum(s[j]) || s[j] == '_') {
				j++
			}
			if j < len(s) && s[j] == ')' {
				end = j + 1
			}
		}
		return math.Copysign(math.NaN(), sign(1)), end
	}
	if len(rest) > 2 && rest[0] == '0' && (rest[1]|0x20) == 'x' {
		if f, n := hexFloat(rest[2:]); n > 0 {
			return sign(f), i + 2 + n
		}
	}
	j := i
	digits := 0
	for j < len(s) && isDigit(s[j]) {
		j++
		digits++
	}
	if j < len(s) && s[j] == '.' {
		j++
		for j < len(s) && isDigit(s[j]) {
			j++
			digits++
		}
	}
	if digits == 0 {
		return 0, 0
	}
	if j < len(s) && (s[j]|0x20) == 'e' {
		k := j + 1
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		if k < len(s) && isDigit(s[k]) {
			for k < len(s) && isDigit(s[k]) {
				k++
			}
			j = k
		}
	}
	f, _ := strconv.ParseFloat(s[start:j], 64) // ±Inf or 0 when out of range
	return f, j
}

// hexFloat reads the digits of a hexadecimal float after "0x": hex digits
// with an optional point, then an optional binary exponent. n is 0 when
// there is no digit.
func hexFloat(s string) (float64, int) {
	j, digits := 0, 0
	for j < len(s) && isHex(s[j]) {
		j++
		digits++
	}
	if j < len(s) && s[j] == '.' {
		j++
		for j < len(s) && isHex(s[j]) {
			j++
			digits++
		}
	}
	if digits == 0 {
		return 0, 0
	}
	mant, exp := s[:j], "0"
	if j < len(s) && (s[j]|0x20) == 'p' {
		k := j + 1
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		if k < len(s) && isDigit(s[k]) {
			for k < len(s) && isDigit(s[k]) {
				k++
			}
			exp, j = s[j+1:k], k
		}
	}
	f, _ := strconv.ParseFloat("0x"+mant+"p"+exp, 64)
	return f, j
}

// cStrtoul is strtoul(s, base) for base 2..36: white space, a sign (a
// minus negates in unsigned arithmetic), "0x" for base 16, digits; the
// value saturates on overflow. end is 0 when no digit was read.
func cStrtoul(s string, base int) (uint64, int) {
	i := 0
	for i < len(s) && isCSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	if base == 16 && i+2 < len(s) && s[i] == '0' && (s[i+1]|0x20) == 'x' && digitVal(s[i+2]) < 16 {
		i += 2
	}
	var v uint64
	over := false
	j := i
	for ; j < len(s); j++ {
		d := digitVal(s[j])
		if d >= base {
			break
		}
		if v > (math.MaxUint64-uint64(d))/uint64(base) {
			over = true
		}
		v = v*uint64(base) + uint64(d)
	}
	if j == i {
		return 0, 0
	}
	if over {
		return math.MaxUint64, j
	}
	if neg {
		v = -v
	}
	return v, j
}

func digitVal(c byte) int {
	switch {
	case isDigit(c):
		return int(c - '0')
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'Z':
		return int(c-'A') + 10
	}
	return 99
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isHex(c byte) bool   { return digitVal(c) < 16 }
func isAlnum(c byte) bool { return digitVal(c) < 36 }

// onlySpaceLeft reports whether s[end:] is white space only.
func onlySpaceLeft(s string, end int) bool {
	for ; end < len(s); end++ {
		if !isCSpace(s[end]) {
			return false
		}
	}
	return true
}

// cString is what C code sees of a Lua string: it ends at a NUL byte.
func cString(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}

// str2d is Lua 5.1's luaO_str2d: strtod, then strtoul for a hexadecimal
// constant strtod stopped at, and nothing but white space after.
func str2d(s string) (float64, bool) {
	s = cString(s)
	f, end := cStrtod(s)
	if end == 0 {
		return 0, false
	}
	if end < len(s) && (s[end]|0x20) == 'x' {
		var u uint64
		u, end = cStrtoul(s, 16)
		f = float64(u)
	}
	return f, onlySpaceLeft(s, end)
}

// luaToNumber is Lua 5.1's tonumber(e [, base]).
func luaToNumber(L *lua.LState) int {
	base := 10
	if v := L.Get(2); v != lua.LNil {
		base = int(checkNumber(L, 2))
	}
	if base == 10 {
		if L.GetTop() < 1 {
			argError(L, 1, "value expected")
		}
		if f, ok := toNumber(L.Get(1)); ok {
			L.Push(lua.LNumber(f))
			return 1
		}
	} else {
		s := cString(checkString(L, 1))
		if base < 2 || base > 36 {
			argError(L, 2, "base out of range")
		}
		if n, end := cStrtoul(s, base); end > 0 && onlySpaceLeft(s, end) {
			L.Push(lua.LNumber(float64(n)))
			return 1
		}
	}
	L.Push(lua.LNil)
	return 1
}

// luaRuntimeMessages maps gopher-lua's wording of runtime errors to Lua
// 5.1's, which scripts' error replies carry. Two differences of its
// numeric for stay, inherent to gopher-lua's VM: it does not convert
// string bounds to numbers ("for i = 1, '3'" fails where Lua 5.1 loops),
// and it checks the limit after the step, so with both bad it names the
// step where Lua names the limit.
var luaRuntimeMessages = strings.NewReplacer(
	"for statement init must be a number", "'for' initial value must be a number",
	"for statement limit must be a number", "'for' limit must be a number",
	"for statement step must be a number", "'for' step must be a number",
)
