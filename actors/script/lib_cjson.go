package script

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	lua "github.com/yuin/gopher-lua"
)

// The cjson library (lua-cjson 2.1 as bundled with Redis): encode and
// decode with its defaults (14 significant digits, sparse arrays refused,
// nesting limited to 1000) and its error texts. The configuration
// functions report those defaults; changing them is not supported.

const cjsonMaxDepth = 1000

func (vm *VM) newCJSON() *lua.LTable {
	L := vm.L
	null := L.NewUserData()
	t := vm.newLib(map[string]lua.LGFunction{
		"encode": func(L *lua.LState) int {
			if L.GetTop() != 1 {
				L.RaiseError("bad argument #1 to 'encode' (expected 1 argument)")
			}
			var b strings.Builder
			cjsonEncode(L, &b, L.Get(1), null, 0)
			L.Push(lua.LString(b.String()))
			return 1
		},
		"decode": func(L *lua.LState) int {
			if L.GetTop() != 1 {
				L.RaiseError("bad argument #1 to 'decode' (expected 1 argument)")
			}
			d := &cjsonDecoder{L: L, s: checkString(L, 1), null: null}
			L.Push(d.decode())
			return 1
		},
		"encode_sparse_array": func(L *lua.LState) int {
			L.Push(lua.LFalse)
			L.Push(lua.LNumber(2))
			L.Push(lua.LNumber(10))
			return 3
		},
		"encode_max_depth":        cjsonConst(lua.LNumber(cjsonMaxDepth)),
		"decode_max_depth":        cjsonConst(lua.LNumber(cjsonMaxDepth)),
		"encode_number_precision": cjsonConst(lua.LNumber(14)),
		"encode_keep_buffer":      cjsonConst(lua.LTrue),
		"encode_invalid_numbers":  cjsonConst(lua.LFalse),
		"decode_invalid_numbers":  cjsonConst(lua.LTrue),
	})
	t.RawSetString("null", null)
	t.RawSetString("_NAME", lua.LString("cjson"))
	t.RawSetString("_VERSION", lua.LString("2.1.0"))
	return t
}

func cjsonConst(v lua.LValue) lua.LGFunction {
	return func(L *lua.LState) int { L.Push(v); return 1 }
}

func cjsonEncode(L *lua.LState, b *strings.Builder, v lua.LValue, null lua.LValue, depth int) {
	switch v := v.(type) {
	case lua.LString:
		cjsonString(b, string(v))
	case lua.LNumber:
		cjsonNumber(L, b, float64(v))
	case lua.LBool:
		if v {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case *lua.LNilType:
		b.WriteString("null")
	case *lua.LTable:
		depth++
		if depth > cjsonMaxDepth {
			L.RaiseError("Cannot serialise, excessive nesting (%d)", depth)
		}
		if n := cjsonArrayLen(L, v); n > 0 {
			b.WriteByte('[')
			for i := 1; i <= n; i++ {
				if i > 1 {
					b.WriteByte(',')
				}
				cjsonEncode(L, b, v.RawGetInt(i), null, depth)
			}
			b.WriteByte(']')
			return
		}
		b.WriteByte('{')
		first := true
		forEach(v, func(k, val lua.LValue) {
			if !first {
				b.WriteByte(',')
			}
			first = false
			switch k := k.(type) {
			case lua.LString:
				cjsonString(b, string(k))
			case lua.LNumber:
				b.WriteByte('"')
				cjsonNumber(L, b, float64(k))
				b.WriteByte('"')
			default:
				L.RaiseError("Cannot serialise %s: table key must be a number or string", k.Type().String())
			}
			b.WriteByte(':')
			cjsonEncode(L, b, val, null, depth)
		})
		b.WriteByte('}')
	default:
		if v == null {
			b.WriteString("null")
			return
		}
		L.RaiseError("Cannot serialise %s: type not supported", v.Type().String())
	}
}

// cjsonArrayLen is the array length when every key is a positive integer
// (0 otherwise); excessively sparse arrays are an error.
func cjsonArrayLen(L *lua.LState, t *lua.LTable) int {
	max, items := 0, 0
	array := true
	forEach(t, func(k, _ lua.LValue) {
		n, ok := k.(lua.LNumber)
		if !ok || n < 1 || math.Floor(float64(n)) != float64(n) {
			array = false
			return
		}
		if int(n) > max {
			max = int(n)
		}
		items++
	})
	if !array {
		return 0
	}
	if max > items*2 && max > 10 {
		L.RaiseError("Cannot serialise table: excessively sparse array")
	}
	return max
}

func cjsonNumber(L *lua.LState, b *strings.Builder, f float64) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		L.RaiseError("Cannot serialise number: must not be NaN or Inf")
	}
	b.WriteString(strconv.FormatFloat(f, 'g', 14, 64))
}

func cjsonString(b *strings.Builder, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '/':
			b.WriteString(`\/`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 || c == 0x7f {
				b.WriteString(`\u00`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&15])
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
}

// cjsonDecoder is a JSON parser with lua-cjson's error messages
// ("Expected value but found T_END at character 4").
type cjsonDecoder struct {
	L     *lua.LState
	s     string
	pos   int // next byte
	depth int
	null  lua.LValue
}

type cjsonToken struct {
	kind  string // T_STRING, T_NUMBER, ... or T_ERROR
	index int    // 1-based position
	val   lua.LValue
	err   string
}

func (d *cjsonDecoder) fail(expected string, t cjsonToken) {
	found := t.kind
	if t.kind == "T_ERROR" {
		found = t.err
	}
	d.L.RaiseError("Expected %s but found %s at character %d", expected, found, t.index)
}

func (d *cjsonDecoder) decode() lua.LValue {
	v := d.value(d.next())
	if t := d.next(); t.kind != "T_END" {
		d.fail("the end", t)
	}
	return v
}

func (d *cjsonDecoder) value(t cjsonToken) lua.LValue {
	switch t.kind {
	case "T_STRING", "T_NUMBER", "T_BOOLEAN":
		return t.val
	case "T_NULL":
		return d.null
	case "T_OBJ_BEGIN", "T_ARR_BEGIN":
		d.depth++
		if d.depth > cjsonMaxDepth {
			d.L.RaiseError("Found too many nested data structures (%d) at character %d", d.depth, t.index)
		}
		defer func() { d.depth-- }()
		if t.kind == "T_OBJ_BEGIN" {
			return d.object()
		}
		return d.array()
	}
	d.fail("value", t)
	return lua.LNil
}

func (d *cjsonDecoder) object() lua.LValue {
	tbl := d.L.NewTable()
	t := d.next()
	if t.kind == "T_OBJ_END" {
		return tbl
	}
	for {
		if t.kind != "T_STRING" {
			d.fail("object key string", t)
		}
		key := t.val
		if t = d.next(); t.kind != "T_COLON" {
			d.fail("colon", t)
		}
		tbl.RawSet(key, d.value(d.next()))
		t = d.next()
		if t.kind == "T_OBJ_END" {
			return tbl
		}
		if t.kind != "T_COMMA" {
			d.fail("comma or object end", t)
		}
		t = d.next()
	}
}

func (d *cjsonDecoder) array() lua.LValue {
	tbl := d.L.NewTable()
	t := d.next()
	if t.kind == "T_ARR_END" {
		return tbl
	}
	for i := 1; ; i++ {
		tbl.RawSetInt(i, d.value(t))
		t = d.next()
		if t.kind == "T_ARR_END" {
			return tbl
		}
		if t.kind != "T_COMMA" {
			d.fail("comma or array end", t)
		}
		t = d.next()
	}
}

func (d *cjsonDecoder) next() cjsonToken {
	for d.pos < len(d.s) && strings.IndexByte(" \t\n\r", d.s[d.pos]) >= 0 {
		d.pos++
	}
	t := cjsonToken{index: d.pos + 1}
	if d.pos >= len(d.s) {
		t.kind = "T_END"
		return t
	}
	c := d.s[d.pos]
	if k, ok := map[byte]string{'{': "T_OBJ_BEGIN", '}': "T_OBJ_END", '[': "T_ARR_BEGIN", ']': "T_ARR_END",
		':': "T_COLON", ',': "T_COMMA"}[c]; ok {
		d.pos++
		t.kind = k
		return t
	}
	switch {
	case c == '"':
		return d.str(t)
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number(t)
	}
	for word, v := range map[string]lua.LValue{"true": lua.LTrue, "false": lua.LFalse, "null": lua.LNil} {
		if strings.HasPrefix(d.s[d.pos:], word) {
			d.pos += len(word)
			t.kind, t.val = "T_BOOLEAN", v
			if word == "null" {
				t.kind = "T_NULL"
			}
			return t
		}
	}
	t.kind, t.err = "T_ERROR", "invalid token"
	return t
}

func (d *cjsonDecoder) number(t cjsonToken) cjsonToken {
	start := d.pos
	i := d.pos
	if d.s[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(d.s) && d.s[i] >= '0' && d.s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	ok := digits() > 0
	if ok && i < len(d.s) && d.s[i] == '.' {
		i++
		ok = digits() > 0
	}
	if ok && i < len(d.s) && (d.s[i] == 'e' || d.s[i] == 'E') {
		i++
		if i < len(d.s) && (d.s[i] == '+' || d.s[i] == '-') {
			i++
		}
		ok = digits() > 0
	}
	text := d.s[start:i]
	f, err := strconv.ParseFloat(text, 64)
	if !ok || (err != nil && f == 0) {
		t.kind, t.err = "T_ERROR", "invalid number"
		return t
	}
	d.pos = i
	t.kind, t.val = "T_NUMBER", lua.LNumber(f)
	return t
}

func (d *cjsonDecoder) str(t cjsonToken) cjsonToken {
	var b strings.Builder
	i := d.pos + 1
	for {
		if i >= len(d.s) {
			t.kind, t.err, t.index = "T_ERROR", "unexpected end of string", i+1
			return t
		}
		c := d.s[i]
		if c == '"' {
			break
		}
		if c != '\\' {
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 >= len(d.s) {
			t.kind, t.err, t.index = "T_ERROR", "unexpected end of string", i+2
			return t
		}
		esc := d.s[i+1]
		switch esc {
		case '"', '\\', '/':
			b.WriteByte(esc)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, n := d.unicode(i)
			if n == 0 {
				t.kind, t.err, t.index = "T_ERROR", "invalid unicode escape code", i+1
				return t
			}
			b.WriteRune(r)
			i += n
			continue
		default:
			t.kind, t.err, t.index = "T_ERROR", "invalid escape code", i+1
			return t
		}
		i += 2
	}
	d.pos = i + 1
	t.kind, t.val = "T_STRING", lua.LString(b.String())
	return t
}

// unicode decodes \uXXXX (and a following low surrogate) at s[i]; n is the
// number of bytes consumed, 0 when invalid.
func (d *cjsonDecoder) unicode(i int) (rune, int) {
	hex4 := func(j int) (rune, bool) {
		if j+6 > len(d.s) || d.s[j] != '\\' || d.s[j+1] != 'u' {
			return 0, false
		}
		v, err := strconv.ParseUint(d.s[j+2:j+6], 16, 32)
		return rune(v), err == nil
	}
	r, ok := hex4(i)
	if !ok {
		return 0, 0
	}
	if r >= 0xD800 && r <= 0xDBFF {
		lo, ok := hex4(i + 6)
		if !ok || lo < 0xDC00 || lo > 0xDFFF {
			return 0, 0
		}
		return 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00), 12
	}
	if r >= 0xDC00 && r <= 0xDFFF {
		return 0, 0
	}
	if !utf8.ValidRune(r) {
		return 0, 0
	}
	return r, 6
}
