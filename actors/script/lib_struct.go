package script

import (
	"encoding/binary"
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// The struct library (Roberto Ierusalimschy's struct 0.2 as bundled with
// Redis 7.0): pack, unpack and size over format strings such as
// ">I2 i4 c0 s". Native order is little-endian, longs and size_t are 8
// bytes, ints 4, integers may be up to 32 bytes wide.

const (
	structMaxAlign   = 8
	structMaxIntSize = 32
)

var structFuncs = map[string]lua.LGFunction{
	"pack":   structPack,
	"unpack": structUnpack,
	"size":   structSize,
}

type structFmt struct {
	L      *lua.LState
	fmt    string
	i      int
	little bool
	align  int
}

func newStructFmt(L *lua.LState) *structFmt {
	return &structFmt{L: L, fmt: checkString(L, 1), little: true, align: 1}
}

// num reads an optional size after an option.
func (f *structFmt) num(def int) int {
	if f.i >= len(f.fmt) || f.fmt[f.i] < '0' || f.fmt[f.i] > '9' {
		return def
	}
	a := 0
	for f.i < len(f.fmt) && f.fmt[f.i] >= '0' && f.fmt[f.i] <= '9' {
		if a > (math.MaxInt32-int(f.fmt[f.i]-'0'))/10 {
			f.L.RaiseError("integral size overflow")
		}
		a = a*10 + int(f.fmt[f.i]-'0')
		f.i++
	}
	return a
}

// size is the byte size of an option (0 for control options).
func (f *structFmt) size(opt byte) int {
	switch opt {
	case 'b', 'B':
		return 1
	case 'h', 'H':
		return 2
	case 'l', 'L', 'T', 'd':
		return 8
	case 'f':
		return 4
	case 'x':
		return 1
	case 'c':
		return f.num(1)
	case 'i', 'I':
		sz := f.num(4)
		if sz > structMaxIntSize {
			f.L.RaiseError("integral size %d is larger than limit of %d", sz, structMaxIntSize)
		}
		return sz
	}
	return 0
}

func (f *structFmt) toAlign(pos int, opt byte, size int) int {
	if size == 0 || opt == 'c' {
		return 0
	}
	if size > f.align {
		size = f.align
	}
	return (size - (pos & (size - 1))) & (size - 1)
}

func (f *structFmt) control(opt byte) {
	switch opt {
	case ' ':
	case '>':
		f.little = false
	case '<':
		f.little = true
	case '!':
		a := f.num(structMaxAlign)
		if a <= 0 || a&(a-1) != 0 {
			f.L.RaiseError("alignment %d is not a power of 2", a)
		}
		f.align = a
	default:
		argError(f.L, 1, "invalid format option '"+string(opt)+"'")
	}
}

// byteOrder is encoding/binary's reading and appending order.
type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

// order is the byte order the format has set for floats.
func (f *structFmt) order() byteOrder {
	if f.little {
		return binary.LittleEndian
	}
	return binary.BigEndian
}

func isIntOpt(opt byte) bool { return strings.IndexByte("bBhHlLTiI", opt) >= 0 }

// structUint converts a number the way the C library does: negative
// values through a signed 64-bit integer, others unsigned (x86 results for
// values out of range).
func structUint(n float64) uint64 {
	if n < 0 {
		return uint64(luaToInt(n))
	}
	if n < 9223372036854775808.0 {
		return uint64(int64(n))
	}
	x := n - 9223372036854775808.0
	if x >= 9223372036854775808.0 || math.IsNaN(x) {
		return 0
	}
	return uint64(int64(x)) ^ 1<<63
}

func structPack(L *lua.LState) int {
	f := newStructFmt(L)
	L.Push(lua.LNil) // the C version's marker: a missing argument reads as nil
	var b []byte
	arg := 2
	for f.i < len(f.fmt) {
		opt := f.fmt[f.i]
		f.i++
		size := f.size(opt)
		for n := f.toAlign(len(b), opt, size); n > 0; n-- {
			b = append(b, 0)
		}
		switch {
		case isIntOpt(opt):
			v := structUint(checkNumber(L, arg))
			arg++
			buf := make([]byte, size)
			for i := 0; i < size; i++ {
				j := i
				if !f.little {
					j = size - 1 - i
				}
				buf[j] = byte(v)
				v >>= 8
			}
			b = append(b, buf...)
		case opt == 'x':
			b = append(b, 0)
		case opt == 'f':
			b = f.order().AppendUint32(b, math.Float32bits(float32(checkNumber(L, arg))))
			arg++
		case opt == 'd':
			b = f.order().AppendUint64(b, math.Float64bits(checkNumber(L, arg)))
			arg++
		case opt == 'c' || opt == 's':
			s := checkString(L, arg)
			arg++
			if size == 0 {
				size = len(s)
			}
			if len(s) < size {
				argError(L, arg, "string too short")
			}
			b = append(b, s[:size]...)
			if opt == 's' {
				b = append(b, 0)
			}
		default:
			f.control(opt)
		}
	}
	L.Push(lua.LString(b))
	return 1
}

func structUnpack(L *lua.LState) int {
	f := newStructFmt(L)
	data := checkString(L, 2)
	pos := L.OptInt(3, 1) - 1
	if pos < 0 || pos > len(data) {
		argError(L, 3, "offset must be 1 or greater")
	}
	L.SetTop(2)
	n := 0
	for f.i < len(f.fmt) {
		opt := f.fmt[f.i]
		f.i++
		size := f.size(opt)
		pos += f.toAlign(pos, opt, size)
		if size > len(data) || pos > len(data)-size {
			argError(L, 2, "data string too short")
		}
		switch {
		case isIntOpt(opt):
			var v uint64
			for i := 0; i < size; i++ {
				j := size - 1 - i // little-endian: most significant byte last
				if !f.little {
					j = i
				}
				v = v<<8 | uint64(data[pos+j])
			}
			if opt >= 'a' && opt <= 'z' {
				if mask := uint64(1) << ((size*8 - 1) & 63); v&mask != 0 {
					v |= ^(mask - 1)
				}
				L.Push(lua.LNumber(float64(int64(v))))
			} else {
				L.Push(lua.LNumber(float64(v)))
			}
			n++
		case opt == 'f':
			v := f.order().Uint32([]byte(data[pos : pos+4]))
			L.Push(lua.LNumber(math.Float32frombits(v)))
			n++
		case opt == 'd':
			v := f.order().Uint64([]byte(data[pos : pos+8]))
			L.Push(lua.LNumber(math.Float64frombits(v)))
			n++
		case opt == 'c':
			if size == 0 {
				prev, ok := L.Get(-1).(lua.LNumber)
				if n == 0 || !ok {
					L.RaiseError("format 'c0' needs a previous size")
				}
				size = int(prev)
				L.Pop(1)
				n--
				if size > len(data) || pos > len(data)-size {
					argError(L, 2, "data string too short")
				}
			}
			L.Push(lua.LString(data[pos : pos+size]))
			n++
		case opt == 's':
			e := strings.IndexByte(data[pos:], 0)
			if e < 0 {
				L.RaiseError("unfinished string in data")
			}
			size = e + 1
			L.Push(lua.LString(data[pos : pos+e]))
			n++
		case opt == 'x':
		default:
			f.control(opt)
		}
		pos += size
	}
	L.Push(lua.LNumber(pos + 1))
	return n + 1
}

func structSize(L *lua.LState) int {
	f := newStructFmt(L)
	pos := 0
	for f.i < len(f.fmt) {
		opt := f.fmt[f.i]
		f.i++
		size := f.size(opt)
		pos += f.toAlign(pos, opt, size)
		if opt == 's' {
			argError(L, 1, "option 's' has no fixed size")
		} else if opt == 'c' && size == 0 {
			argError(L, 1, "option 'c0' has no fixed size")
		}
		if !(opt >= 'a' && opt <= 'z' || opt >= 'A' && opt <= 'Z' || opt >= '0' && opt <= '9') {
			f.control(opt)
		}
		pos += size
	}
	L.Push(lua.LNumber(pos))
	return 1
}
