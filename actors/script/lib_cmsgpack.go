package script

import (
	"encoding/binary"
	"math"

	lua "github.com/yuin/gopher-lua"
)

// The cmsgpack library (lua-cmsgpack 0.4.0 as bundled with Redis): pack
// any number of values into one MessagePack string, unpack them back, and
// unpack_one / unpack_limit for streams. Tables nested deeper than 16
// levels are packed as nil, and bin/ext types are not decoded, as in the
// original.

const msgpackMaxNesting = 16

func (vm *VM) newCMsgpack() *lua.LTable {
	t := vm.newLib(map[string]lua.LGFunction{
		"pack":   msgpackPack,
		"unpack": func(L *lua.LState) int { return msgpackUnpack(L, 0, 0) },
		"unpack_one": func(L *lua.LState) int {
			off := L.OptInt(2, 0)
			L.SetTop(1)
			return msgpackUnpack(L, 1, off)
		},
		"unpack_limit": func(L *lua.LState) int {
			limit := L.CheckInt(2)
			off := L.OptInt(3, 0)
			L.SetTop(1)
			return msgpackUnpack(L, limit, off)
		},
	})
	t.RawSetString("_NAME", lua.LString("cmsgpack"))
	t.RawSetString("_VERSION", lua.LString("lua-cmsgpack 0.4.0"))
	t.RawSetString("_COPYRIGHT", lua.LString("Copyright (C) 2012, Salvatore Sanfilippo"))
	t.RawSetString("_DESCRIPTION", lua.LString("MessagePack C implementation for Lua"))
	return t
}

func msgpackPack(L *lua.LState) int {
	n := L.GetTop()
	if n == 0 {
		argError(L, 0, "MessagePack pack needs input.")
	}
	var buf []byte
	for i := 1; i <= n; i++ {
		buf = msgpackEncode(buf, L.Get(i), 0)
	}
	L.Push(lua.LString(buf))
	return 1
}

func msgpackEncode(b []byte, v lua.LValue, level int) []byte {
	switch v := v.(type) {
	case lua.LBool:
		if v {
			return append(b, 0xc3)
		}
		return append(b, 0xc2)
	case lua.LNumber:
		f := float64(v)
		if !math.IsInf(f, 0) && !math.IsNaN(f) && f >= -9223372036854775808.0 && f < 9223372036854775808.0 &&
			float64(int64(f)) == f {
			return msgpackInt(b, int64(f))
		}
		if f32 := float32(f); float64(f32) == f {
			b = append(b, 0xca)
			return binary.BigEndian.AppendUint32(b, math.Float32bits(f32))
		}
		b = append(b, 0xcb)
		return binary.BigEndian.AppendUint64(b, math.Float64bits(f))
	case lua.LString:
		n := len(v)
		switch {
		case n < 32:
			b = append(b, 0xa0|byte(n))
		case n <= 0xff:
			b = append(b, 0xd9, byte(n))
		case n <= 0xffff:
			b = append(b, 0xda)
			b = binary.BigEndian.AppendUint16(b, uint16(n))
		default:
			b = append(b, 0xdb)
			b = binary.BigEndian.AppendUint32(b, uint32(n))
		}
		return append(b, v...)
	case *lua.LTable:
		if level >= msgpackMaxNesting {
			return append(b, 0xc0)
		}
		if msgpackIsArray(v) {
			n := v.Len()
			b = msgpackHeader(b, n, 0x90, 0xdc, 0xdd)
			for i := 1; i <= n; i++ {
				b = msgpackEncode(b, v.RawGetInt(i), level+1)
			}
			return b
		}
		n := 0
		forEach(v, func(_, _ lua.LValue) { n++ })
		b = msgpackHeader(b, n, 0x80, 0xde, 0xdf)
		forEach(v, func(k, val lua.LValue) {
			b = msgpackEncode(b, k, level+1)
			b = msgpackEncode(b, val, level+1)
		})
		return b
	}
	return append(b, 0xc0) // nil and anything unsupported
}

func msgpackHeader(b []byte, n int, fix, c16, c32 byte) []byte {
	switch {
	case n <= 15:
		return append(b, fix|byte(n))
	case n <= 0xffff:
		b = append(b, c16)
		return binary.BigEndian.AppendUint16(b, uint16(n))
	}
	b = append(b, c32)
	return binary.BigEndian.AppendUint32(b, uint32(n))
}

func msgpackInt(b []byte, n int64) []byte {
	if n >= 0 {
		switch {
		case n <= 127:
			return append(b, byte(n))
		case n <= 0xff:
			return append(b, 0xcc, byte(n))
		case n <= 0xffff:
			return binary.BigEndian.AppendUint16(append(b, 0xcd), uint16(n))
		case n <= 0xffffffff:
			return binary.BigEndian.AppendUint32(append(b, 0xce), uint32(n))
		}
		return binary.BigEndian.AppendUint64(append(b, 0xcf), uint64(n))
	}
	switch {
	case n >= -32:
		return append(b, byte(int8(n)))
	case n >= -128:
		return append(b, 0xd0, byte(int8(n)))
	case n >= -32768:
		return binary.BigEndian.AppendUint16(append(b, 0xd1), uint16(int16(n)))
	case n >= -2147483648:
		return binary.BigEndian.AppendUint32(append(b, 0xd2), uint32(int32(n)))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xd3), uint64(n))
}

// msgpackIsArray: every key a positive integer and no holes.
func msgpackIsArray(t *lua.LTable) bool {
	count, max := 0, 0
	ok := true
	forEach(t, func(k, _ lua.LValue) {
		n, isNum := k.(lua.LNumber)
		if !isNum || n <= 0 || float64(int(n)) != float64(n) {
			ok = false
			return
		}
		if int(n) > max {
			max = int(n)
		}
		count++
	})
	return ok && max == count
}

type msgpackErr string

// msgpackUnpack decodes up to limit values (all when limit and offset are
// 0) starting at offset; partial decodes also return the next offset (-1
// at the end).
func msgpackUnpack(L *lua.LState, limit, offset int) int {
	s := checkString(L, 1)
	all := limit == 0 && offset == 0
	if offset < 0 || limit < 0 {
		L.RaiseError("Invalid request to unpack with offset of %d and limit of %d.", offset, len(s))
	} else if offset > len(s) {
		L.RaiseError("Start offset %d greater than input length %d.", offset, len(s))
	}
	if all {
		limit = math.MaxInt
	}
	d := msgpackDecoder{L: L, b: []byte(s[offset:])}
	cnt := 0
	func() {
		defer func() {
			if r := recover(); r != nil {
				if e, ok := r.(msgpackErr); ok {
					L.RaiseError("%s", string(e))
				}
				panic(r)
			}
		}()
		for ; len(d.b) > 0 && cnt < limit; cnt++ {
			L.Push(d.value())
		}
	}()
	if all {
		return cnt
	}
	next := lua.LNumber(len(s) - len(d.b))
	if len(d.b) == 0 {
		next = -1
	}
	L.Insert(next, L.GetTop()-cnt+1)
	return cnt + 1
}

type msgpackDecoder struct {
	L *lua.LState
	b []byte
}

func (d *msgpackDecoder) take(n int) []byte {
	if len(d.b) < n {
		panic(msgpackErr("Missing bytes in input."))
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

func (d *msgpackDecoder) uint(n int) uint64 {
	var v uint64
	for _, c := range d.take(n) {
		v = v<<8 | uint64(c)
	}
	return v
}

func (d *msgpackDecoder) value() lua.LValue {
	c := d.take(1)[0]
	switch {
	case c <= 0x7f:
		return lua.LNumber(c)
	case c >= 0xe0:
		return lua.LNumber(int8(c))
	case c >= 0xa0 && c <= 0xbf:
		return lua.LString(d.take(int(c & 0x1f)))
	case c >= 0x90 && c <= 0x9f:
		return d.array(int(c & 0x0f))
	case c >= 0x80 && c <= 0x8f:
		return d.dict(int(c & 0x0f))
	}
	switch c {
	case 0xc0:
		return lua.LNil
	case 0xc2:
		return lua.LFalse
	case 0xc3:
		return lua.LTrue
	case 0xcc, 0xcd, 0xce, 0xcf:
		return lua.LNumber(float64(d.uint(1 << (c - 0xcc))))
	case 0xd0:
		return lua.LNumber(int8(d.uint(1)))
	case 0xd1:
		return lua.LNumber(int16(d.uint(2)))
	case 0xd2:
		return lua.LNumber(int32(d.uint(4)))
	case 0xd3:
		return lua.LNumber(float64(int64(d.uint(8))))
	case 0xca:
		return lua.LNumber(math.Float32frombits(uint32(d.uint(4))))
	case 0xcb:
		return lua.LNumber(math.Float64frombits(d.uint(8)))
	case 0xd9:
		return lua.LString(d.take(int(d.uint(1))))
	case 0xda:
		return lua.LString(d.take(int(d.uint(2))))
	case 0xdb:
		return lua.LString(d.take(int(d.uint(4))))
	case 0xdc:
		return d.array(int(d.uint(2)))
	case 0xdd:
		return d.array(int(d.uint(4)))
	case 0xde:
		return d.dict(int(d.uint(2)))
	case 0xdf:
		return d.dict(int(d.uint(4)))
	}
	panic(msgpackErr("Bad data format in input."))
}

func (d *msgpackDecoder) array(n int) lua.LValue {
	t := d.L.CreateTable(min(n, 1024), 0)
	for i := 1; i <= n; i++ {
		if v := d.value(); v != lua.LNil {
			t.RawSetInt(i, v)
		}
	}
	return t
}

func (d *msgpackDecoder) dict(n int) lua.LValue {
	t := d.L.CreateTable(0, min(n, 1024))
	for i := 0; i < n; i++ {
		k := d.value()
		v := d.value()
		if k == lua.LNil {
			d.L.RaiseError("table index is nil")
		}
		t.RawSet(k, v)
	}
	return t
}
