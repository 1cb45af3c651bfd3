package script

import (
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/slotd/slotd/actors/engine/types/cnum"
)

// Lua 5.1 turns strings into numbers with C's strtod (luaO_str2d), which
// gopher-lua does not follow: its tonumber refuses "1e3" and "inf", for
// one. Redis's scripts see the C behaviour, reproduced here.

// cStrtoul is strtoul(s, base) for base 2..36: white space, a sign (a
// minus negates in unsigned arithmetic), "0x" for base 16, digits; the
// value saturates on overflow. end is 0 when no digit was read.
func cStrtoul(s string, base int) (uint64, int) {
	i := 0
	for i < len(s) && cnum.IsSpace(s[i]) {
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

// onlySpaceLeft reports whether s[end:] is white space only.
func onlySpaceLeft(s string, end int) bool {
	for ; end < len(s); end++ {
		if !cnum.IsSpace(s[end]) {
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
	f, end, _ := cnum.Strtod([]byte(s))
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
