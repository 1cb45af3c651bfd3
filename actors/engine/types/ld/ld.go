// Package ld owns the C long double arithmetic that INCRBYFLOAT,
// HINCRBYFLOAT and blocking timeouts are defined by: parsing as Redis's
// string2ld, addition within the x87 80-bit extended range, and
// ld2string's human format.
package ld

import (
	"math/big"

	"github.com/slotd/slotd/actors/engine/types/cnum"
)

// INCRBYFLOAT in Redis works on the C long double, which on x86-64 Linux is
// the x87 80-bit extended format: a 64-bit significand and a 15-bit exponent
// (normal range [2^-16382, 2^16384), subnormals down to 2^-16445). Replies
// depend on that precision (10 plus 0.1 three times prints "10.3", 1e400 is
// accepted), so the arithmetic here is emulated exactly with big.Float at 64
// bits, round-to-nearest-even, with the format's exponent limits applied by
// hand.

const (
	ldPrec      = 64
	ldMaxExp    = 16384  // |x| < 2^ldMaxExp
	ldMinNormal = -16382 // smallest normal is 2^ldMinNormal
	ldMinSub    = -16445 // subnormal spacing is 2^ldMinSub
	// ldMaxChars is Redis's MAX_LONG_DOUBLE_CHARS: longer strings are never
	// numbers, and it bounds the work of parsing.
	ldMaxChars = 5 * 1024
)

// Status says why a parse produced no finite number.
type Status uint8

const (
	OK       Status = iota
	Invalid         // not a float (syntax, NaN, overflow or total underflow)
	Infinite        // "inf"/"infinity": valid input, but the sum will be infinite
)

// New is a zero long double (64-bit precision, round to nearest even).
func New() *big.Float { return new(big.Float).SetPrec(ldPrec).SetMode(big.ToNearestEven) }

// Parse converts b as Redis's string2ld does (strtold on the whole string,
// no leading space, NaN and out-of-range values refused).
func Parse(b []byte) (*big.Float, Status) {
	if len(b) == 0 || len(b) >= ldMaxChars || cnum.IsSpace(b[0]) {
		return nil, Invalid
	}
	neg := false
	s := b
	if s[0] == '+' || s[0] == '-' {
		neg = s[0] == '-'
		s = s[1:]
	}
	if eqFold(s, "inf") || eqFold(s, "infinity") {
		return nil, Infinite
	}
	var (
		mant big.Int
		exp  int64 // value = mant * base^exp
		nsig int   // significant digits of mant
		hex  bool
		ok   bool
	)
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		hex = true
		exp, nsig, ok = scanMantissa(&mant, s[2:], 16)
	} else {
		exp, nsig, ok = scanMantissa(&mant, s, 10)
	}
	if !ok {
		return nil, Invalid
	}
	f := New()
	if mant.Sign() == 0 {
		if neg {
			f.Neg(f)
		}
		return f, OK
	}
	var st Status
	if hex {
		st = roundPow(f, &mant, 2, int64(mant.BitLen()), exp)
	} else {
		st = roundPow(f, &mant, 10, int64(nsig), exp)
	}
	if st != OK {
		return nil, st
	}
	if neg {
		f.Neg(f)
	}
	return f, OK
}

// scanMantissa reads digits [. digits] [exponent] (all of s must be used)
// into mant and returns the exponent of base (for hex: of 2) that scales it
// and the number of significant digits.
func scanMantissa(mant *big.Int, s []byte, base int) (int64, int, bool) {
	i := 0
	for i < len(s) && isDigitBase(s[i], base) {
		i++
	}
	intPart := s[:i]
	var fracPart []byte
	if i < len(s) && s[i] == '.' {
		i++
		fs := i
		for i < len(s) && isDigitBase(s[i], base) {
			i++
		}
		fracPart = s[fs:i]
	}
	if len(intPart)+len(fracPart) == 0 {
		return 0, 0, false
	}
	var e int64
	if i < len(s) {
		c := s[i] | 0x20
		if (base == 10 && c != 'e') || (base == 16 && c != 'p') {
			return 0, 0, false
		}
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		if i == len(s) {
			return 0, 0, false
		}
		for ; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return 0, 0, false
			}
			if e < 1<<40 { // saturate: far beyond any representable value
				e = e*10 + int64(s[i]-'0')
			}
		}
		if eneg {
			e = -e
		}
	}
	// Significant digits: all of them but the leading zeros.
	nsig := len(intPart) + len(fracPart)
	for _, part := range [2][]byte{intPart, fracPart} {
		z := 0
		for z < len(part) && part[z] == '0' {
			z++
		}
		nsig -= z
		if z < len(part) {
			break
		}
	}
	if (base == 10 && nsig <= 19) || (base == 16 && nsig <= 16) {
		// Fits in a uint64: the common case, without allocating.
		var u uint64
		for _, part := range [2][]byte{intPart, fracPart} {
			for _, c := range part {
				u = u*uint64(base) + uint64(digitVal(c))
			}
		}
		mant.SetUint64(u)
	} else {
		buf := make([]byte, 0, len(intPart)+len(fracPart))
		buf = append(append(buf, intPart...), fracPart...)
		mant.SetString(string(buf), base)
	}
	if base == 16 {
		return e - 4*int64(len(fracPart)), nsig, true
	}
	return e - int64(len(fracPart)), nsig, true
}

func digitVal(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return (c | 0x20) - 'a' + 10
}

// pow10s holds 10^0 … 10^(len-1), shared read-only by every shard.
var pow10s = func() []*big.Int {
	t := make([]*big.Int, 350)
	t[0] = big.NewInt(1)
	ten := big.NewInt(10)
	for i := 1; i < len(t); i++ {
		t[i] = new(big.Int).Mul(t[i-1], ten)
	}
	return t
}()

// pow10 returns 10^k; the result must not be modified.
func pow10(k int64) *big.Int {
	if k < int64(len(pow10s)) {
		return pow10s[k]
	}
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(k), nil)
}

var bigOne = big.NewInt(1)

// roundPow sets f to mant*base^exp rounded to the long double format; mant
// has n digits in base. It may modify mant.
func roundPow(f *big.Float, mant *big.Int, base int, n, exp int64) Status {
	// Bound the magnitude before doing exact arithmetic, so absurd exponents
	// cost nothing: v lies in [base^(n-1+exp), base^(n+exp)).
	hiLimit, loLimit := int64(ldMaxExp), int64(ldMinSub-1)
	if base == 10 {
		hiLimit, loLimit = 4933, -4952 // 10^4933 > max, 10^-4952 < half the smallest subnormal
	}
	if n-1+exp >= hiLimit {
		return Invalid // overflow
	}
	if n+exp <= loLimit {
		return Invalid // rounds to zero
	}
	num, den := mant, bigOne
	switch {
	case base == 2 && exp > 0:
		num.Lsh(num, uint(exp))
	case base == 2 && exp < 0:
		den = new(big.Int).Lsh(bigOne, uint(-exp))
	case exp > 0:
		num.Mul(num, pow10(exp))
	case exp < 0:
		den = pow10(-exp)
	}
	return roundRat(f, num, den)
}

// roundRat sets f to num/den (both positive) rounded to the long double
// format, reporting overflow or underflow to zero as Invalid (strtold's
// ERANGE cases that Redis refuses). It does not modify num or den.
func roundRat(f *big.Float, num, den *big.Int) Status {
	// num/den ≥ 2^(bitlen difference - 1): only values near the bottom of
	// the range need the exact subnormal test num*2^-ldMinNormal < den.
	if num.BitLen()-den.BitLen()-1 < ldMinNormal &&
		new(big.Int).Lsh(num, -ldMinNormal).Cmp(den) < 0 {
		q, r := new(big.Int).QuoRem(new(big.Int).Lsh(num, -ldMinSub), den, new(big.Int))
		r.Lsh(r, 1)
		if c := r.Cmp(den); c > 0 || (c == 0 && q.Bit(0) == 1) {
			q.Add(q, bigOne)
		}
		if q.Sign() == 0 {
			return Invalid
		}
		f.SetInt(q)
		f.SetMantExp(f, ldMinSub)
		return OK
	}
	var a, b big.Float
	a.SetInt(num)
	b.SetInt(den)
	f.Quo(&a, &b)
	if f.MantExp(nil) > ldMaxExp {
		return Invalid
	}
	return OK
}

// Add returns a+b in long double arithmetic and whether it stayed finite.
// Both operands are long double values, so a sum in the subnormal range is
// exact and only the overflow bound needs checking.
func Add(a, b *big.Float) (*big.Float, bool) {
	s := New().Add(a, b)
	if s.Sign() != 0 && s.MantExp(nil) > ldMaxExp {
		return nil, false
	}
	return s, true
}

// AppendHuman formats f as Redis's ld2string in human mode: "%.17Lf" with
// trailing zeros (and a bare '.') removed, and "-0" printed as "0".
func AppendHuman(dst []byte, f *big.Float) []byte {
	start := len(dst)
	dst = f.Append(dst, 'f', 17)
	return TrimHuman(dst, start)
}

// TrimHuman ends the human form of the fixed-point number in dst[start:]:
// trailing zeros and a bare '.' removed, "-0" printed as "0".
func TrimHuman(dst []byte, start int) []byte {
	end := len(dst)
	for end > start && dst[end-1] == '0' {
		end--
	}
	if end > start && dst[end-1] == '.' {
		end--
	}
	dst = dst[:end]
	if string(dst[start:]) == "-0" {
		dst = append(dst[:start], '0')
	}
	return dst
}

// FromInt64 is the exact long double of n (the 64-bit significand holds
// every int64).
func FromInt64(n int64) *big.Float { return New().SetInt64(n) }

func isDigitBase(c byte, base int) bool {
	if c >= '0' && c <= '9' {
		return true
	}
	if base == 16 {
		c |= 0x20
		return c >= 'a' && c <= 'f'
	}
	return false
}

// eqFold compares b with a lower-case ASCII word.
func eqFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}
