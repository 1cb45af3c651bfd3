package script

import (
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// The bit library (LuaBitOp 1.0, as bundled with Redis): 32-bit operations
// on numbers; results are signed 32-bit integers.

var bitFuncs = map[string]lua.LGFunction{
	"tobit":   func(L *lua.LState) int { return bitRet(L, bitArg(L, 1)) },
	"bnot":    func(L *lua.LState) int { return bitRet(L, ^bitArg(L, 1)) },
	"band":    bitFold(func(a, b uint32) uint32 { return a & b }),
	"bor":     bitFold(func(a, b uint32) uint32 { return a | b }),
	"bxor":    bitFold(func(a, b uint32) uint32 { return a ^ b }),
	"lshift":  bitShift(func(a uint32, n uint) uint32 { return a << n }),
	"rshift":  bitShift(func(a uint32, n uint) uint32 { return a >> n }),
	"arshift": bitShift(func(a uint32, n uint) uint32 { return uint32(int32(a) >> n) }),
	"rol":     bitShift(func(a uint32, n uint) uint32 { return a<<n | a>>(32-n) }),
	"ror":     bitShift(func(a uint32, n uint) uint32 { return a>>n | a<<(32-n) }),
	"bswap": func(L *lua.LState) int {
		b := bitArg(L, 1)
		return bitRet(L, b>>24|(b>>8)&0xff00|(b&0xff00)<<8|b<<24)
	},
	"tohex": bitToHex,
}

// bitArg normalizes a number to 32 bits exactly as LuaBitOp does: add
// 2^52+2^51 and keep the low word of the double (round to nearest even,
// modulo 2^32).
func bitArg(L *lua.LState, i int) uint32 {
	n := checkNumber(L, i)
	return uint32(math.Float64bits(n + 6755399441055744.0))
}

func bitRet(L *lua.LState, b uint32) int {
	L.Push(lua.LNumber(int32(b)))
	return 1
}

func bitFold(op func(a, b uint32) uint32) lua.LGFunction {
	return func(L *lua.LState) int {
		b := bitArg(L, 1)
		for i := 2; i <= L.GetTop(); i++ {
			b = op(b, bitArg(L, i))
		}
		return bitRet(L, b)
	}
}

func bitShift(op func(a uint32, n uint) uint32) lua.LGFunction {
	return func(L *lua.LState) int {
		b := bitArg(L, 1)
		n := uint(bitArg(L, 2) & 31)
		return bitRet(L, op(b, n))
	}
}

func bitToHex(L *lua.LState) int {
	b := bitArg(L, 1)
	n := int32(8)
	if L.Get(2) != lua.LNil {
		n = int32(bitArg(L, 2))
	}
	digits := "0123456789abcdef"
	if n < 0 {
		n = -n
		digits = "0123456789ABCDEF"
	}
	if n > 8 {
		n = 8
	}
	var buf strings.Builder
	for i := n - 1; i >= 0; i-- {
		buf.WriteByte(digits[(b>>(uint(i)*4))&15])
	}
	L.Push(lua.LString(buf.String()))
	return 1
}
