// Package cnum parses numbers the way C library functions do on glibc
// (strtod), which Redis and its Lua interpreter rely on: leading white
// space, "inf"/"nan" spellings, hexadecimal floats, the longest valid
// prefix; and formats scores as Redis's d2string does (AppendD2S).
package cnum

import (
	"bytes"
	"math"
	"strconv"
)

// IsSpace is C's isspace in the "C" locale.
func IsSpace(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || (c|0x20) >= 'a' && (c|0x20) <= 'f'
}

// Strtod is glibc's strtod on s: it skips leading white space and converts
// the longest prefix that forms a number ("inf", "infinity", "nan[(...)]",
// hexadecimal with an optional binary exponent, or decimal). It returns the
// value, the bytes consumed (0 when nothing converts) and whether the
// result overflowed or underflowed to zero (strtod's ERANGE cases that
// Redis refuses).
func Strtod(s []byte) (v float64, n int, erange bool) {
	i := 0
	for i < len(s) && IsSpace(s[i]) {
		i++
	}
	start := i
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	sign := 1.0
	if neg {
		sign = -1
	}
	rest := s[i:]
	switch {
	case hasPrefixFold(rest, "infinity"):
		return math.Inf(int(sign)), i + 8, false
	case hasPrefixFold(rest, "inf"):
		return math.Inf(int(sign)), i + 3, false
	case hasPrefixFold(rest, "nan"):
		j := i + 3
		if j < len(s) && s[j] == '(' {
			k := j + 1
			for k < len(s) && (isAlnum(s[k]) || s[k] == '_') {
				k++
			}
			if k < len(s) && s[k] == ')' {
				j = k + 1
			}
		}
		return math.Copysign(math.NaN(), sign), j, false
	}
	if len(rest) >= 2 && rest[0] == '0' && (rest[1]|0x20) == 'x' {
		if end, nonzero, ok := scanHexFloat(rest[2:]); ok {
			text := append([]byte(nil), s[start:i+2+end]...)
			if !hasBinaryExp(text) {
				text = append(text, 'p', '0')
			}
			f, err := strconv.ParseFloat(string(text), 64)
			return f, i + 2 + end, isRangeErr(err) || (f == 0 && nonzero)
		}
		return 0 * sign, i + 1, false // just the "0"
	}
	end, nonzero := scanDecFloat(rest)
	if end == 0 {
		return 0, 0, false
	}
	f, err := strconv.ParseFloat(string(s[start:i+end]), 64)
	return f, i + end, isRangeErr(err) || (f == 0 && nonzero)
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// scanDecFloat measures digits[.digits][e[±]digits] (at least one mantissa
// digit) and reports whether a mantissa digit is non-zero.
func scanDecFloat(s []byte) (int, bool) {
	i, digits := 0, 0
	nonzero := false
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		nonzero = nonzero || s[i] != '0'
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			nonzero = nonzero || s[i] != '0'
			i++
			digits++
		}
	}
	if digits == 0 {
		return 0, false
	}
	return expEnd(s, i, 'e'), nonzero
}

// scanHexFloat measures hexdigits[.hexdigits][p[±]digits] after "0x".
func scanHexFloat(s []byte) (int, bool, bool) {
	i, digits := 0, 0
	nonzero := false
	for i < len(s) && isHex(s[i]) {
		nonzero = nonzero || s[i] != '0'
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isHex(s[i]) {
			nonzero = nonzero || s[i] != '0'
			i++
			digits++
		}
	}
	if digits == 0 {
		return 0, false, false
	}
	return expEnd(s, i, 'p'), nonzero, true
}

// expEnd extends i over an exponent introduced by mark when digits follow.
func expEnd(s []byte, i int, mark byte) int {
	if i < len(s) && (s[i]|0x20) == mark {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && s[j] >= '0' && s[j] <= '9' {
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			return j
		}
	}
	return i
}

func hasBinaryExp(b []byte) bool {
	for _, c := range b {
		if c == 'p' || c == 'P' {
			return true
		}
	}
	return false
}

func hasPrefixFold(s []byte, lower string) bool {
	return len(s) >= len(lower) && bytes.EqualFold(s[:len(lower)], []byte(lower))
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || (c|0x20) >= 'a' && (c|0x20) <= 'z'
}

// AppendD2S formats f as Redis's d2string, the text a listpack stores for
// a score: integral values within ±2^62 as integers, others as "%.17g".
func AppendD2S(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "nan"...)
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0"...)
		}
		return append(dst, '0')
	case f >= -(1<<62) && f <= 1<<62 && f == math.Trunc(f):
		return strconv.AppendInt(dst, int64(f), 10)
	}
	return strconv.AppendFloat(dst, f, 'g', 17, 64)
}
