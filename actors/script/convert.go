package script

import (
	"math"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/slotd/slotd/netio/resp"
)

// Lua → RESP: the script's return value becomes the client's reply, with
// Redis 7.0's rules (luaReplyToRedisReply):
//   - string → bulk; number → integer, truncated toward zero;
//   - boolean → with RESP2 script semantics (the default) true is :1 and
//     false a null; after redis.setresp(3) a RESP3 boolean (:1/:0 for RESP2
//     clients);
//   - table → {err=...} error, {ok=...} status, {double=n}, {big_number=s},
//     {verbatim_string={format=,string=}}, {map={...}}, {set={...}}, else an
//     array of t[1], t[2], ... up to the first nil;
//   - anything else (nil, functions, ...) → null.

// maxReplyDepth bounds nesting (a table containing itself) the way Lua's
// C stack bounds it in Redis.
const maxReplyDepth = 1000

// writeReply converts v for a client speaking w.Proto. scriptResp is the
// script's redis.setresp version.
func writeReply(w *resp.Writer, v lua.LValue, scriptResp, depth int) {
	if depth > maxReplyDepth {
		w.Error("ERR reached lua stack limit")
		return
	}
	switch v := v.(type) {
	case lua.LString:
		w.BulkString(string(v))
	case lua.LNumber:
		w.Int(luaToInt(float64(v)))
	case lua.LBool:
		switch {
		case scriptResp == 2 && bool(v):
			w.Int(1)
		case scriptResp == 2:
			w.Null()
		default:
			w.Bool(bool(v))
		}
	case *lua.LTable:
		writeTable(w, v, scriptResp, depth)
	default:
		w.Null()
	}
}

func writeTable(w *resp.Writer, t *lua.LTable, scriptResp, depth int) {
	if s, ok := t.RawGetString("err").(lua.LString); ok {
		w.Error(string(s))
		return
	}
	if s, ok := t.RawGetString("ok").(lua.LString); ok {
		w.Simple(noCRLF(string(s)))
		return
	}
	if n, ok := t.RawGetString("double").(lua.LNumber); ok {
		writeDouble(w, float64(n))
		return
	}
	if s, ok := t.RawGetString("big_number").(lua.LString); ok {
		num := noCRLF(string(s))
		if w.Proto >= 3 {
			w.B = append(w.B, '(')
			w.B = append(w.B, num...)
			w.B = append(w.B, '\r', '\n')
		} else {
			w.BulkString(num)
		}
		return
	}
	if vt, ok := t.RawGetString("verbatim_string").(*lua.LTable); ok {
		format, ok1 := vt.RawGetString("format").(lua.LString)
		str, ok2 := vt.RawGetString("string").(lua.LString)
		if ok1 && ok2 {
			writeVerbatim(w, string(format), string(str))
			return
		}
	}
	if m, ok := t.RawGetString("map").(*lua.LTable); ok {
		n := 0
		forEach(m, func(_, _ lua.LValue) { n++ })
		w.Map(n)
		forEach(m, func(k, v lua.LValue) {
			writeReply(w, k, scriptResp, depth+1)
			writeReply(w, v, scriptResp, depth+1)
		})
		return
	}
	if s, ok := t.RawGetString("set").(*lua.LTable); ok {
		n := 0
		forEach(s, func(_, _ lua.LValue) { n++ })
		w.Set(n)
		forEach(s, func(k, _ lua.LValue) { writeReply(w, k, scriptResp, depth+1) })
		return
	}
	n := 0
	for t.RawGetInt(n+1) != lua.LNil {
		n++
	}
	w.Array(n)
	for i := 1; i <= n; i++ {
		writeReply(w, t.RawGetInt(i), scriptResp, depth+1)
	}
}

// forEach visits t's pairs in lua_next order (gopher-lua's ForEach walks
// Go maps, whose order changes from call to call).
func forEach(t *lua.LTable, fn func(k, v lua.LValue)) {
	for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
		fn(k, v)
	}
}

// luaToInt is C's (long long) cast of a double as x86-64 does it: values
// out of range (and NaN) become the minimum integer.
func luaToInt(f float64) int64 {
	if math.IsNaN(f) || f >= 9223372036854775808.0 || f < -9223372036854775808.0 {
		return math.MinInt64
	}
	return int64(f)
}

// formatDouble is Redis's "%.17g" for doubles.
func formatDouble(f float64) string { return formatG(f, 17) }

// formatG is C's printf("%.<prec>g") with glibc's spellings of infinities
// and NaN (0/0 has its sign bit set on x86, printed "-nan").
func formatG(f float64, prec int) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		if math.Signbit(f) {
			return "-nan"
		}
		return "nan"
	}
	return strconv.FormatFloat(f, 'g', prec, 64)
}

func writeDouble(w *resp.Writer, f float64) {
	s := formatDouble(f)
	if w.Proto >= 3 {
		w.B = append(w.B, ',')
		w.B = append(w.B, s...)
		w.B = append(w.B, '\r', '\n')
		return
	}
	w.BulkString(s)
}

// writeVerbatim writes a verbatim string; Redis takes exactly three
// format characters.
func writeVerbatim(w *resp.Writer, format, s string) {
	if w.Proto < 3 {
		w.BulkString(s)
		return
	}
	f := []byte("   ")
	copy(f, format)
	w.B = append(w.B, '=')
	w.B = strconv.AppendInt(w.B, int64(len(s)+4), 10)
	w.B = append(w.B, '\r', '\n')
	w.B = append(w.B, f...)
	w.B = append(w.B, ':')
	w.B = append(w.B, s...)
	w.B = append(w.B, '\r', '\n')
}

// noCRLF maps CR and LF to spaces, as Redis does for status replies.
func noCRLF(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\r' || s[i] == '\n' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] == '\r' || b[j] == '\n' {
					b[j] = ' '
				}
			}
			return string(b)
		}
	}
	return s
}

// RESP → Lua: a command's reply as redis.call returns it
// (redisProtocolToLuaType): integer → number, bulk → string, null bulk or
// null array → false, array → table, status → {ok=}, error → {err=}; and
// with redis.setresp(3): map → {map={}}, set → {set={k=true}}, null → nil,
// boolean, double → {double=n}, big number → {big_number=s}, verbatim →
// {verbatim_string={format=,string=}}; attributes are dropped.

// parseReply converts one encoded reply starting at b[0] and returns the
// rest. The input is produced by our own writer, so it is well formed.
func parseReply(L *lua.LState, b []byte) (lua.LValue, []byte) {
	if len(b) < 3 {
		return lua.LNil, nil
	}
	typ := b[0]
	end := indexCRLF(b)
	line := b[1:end]
	rest := b[end+2:]
	switch typ {
	case ':':
		n, _ := strconv.ParseInt(string(line), 10, 64)
		return lua.LNumber(n), rest
	case '$', '!', '=':
		n, _ := strconv.Atoi(string(line))
		if n < 0 {
			return lua.LFalse, rest
		}
		data := rest[:n]
		rest = rest[n+2:]
		switch typ {
		case '!':
			return errorTable(L, "-"+string(data), true), rest
		case '=':
			vt := L.CreateTable(0, 2)
			vt.RawSetString("string", lua.LString(data[min(4, len(data)):]))
			vt.RawSetString("format", lua.LString(data[:min(3, len(data))]))
			t := L.CreateTable(0, 1)
			t.RawSetString("verbatim_string", vt)
			return t, rest
		}
		return lua.LString(data), rest
	case '+':
		t := L.CreateTable(0, 1)
		t.RawSetString("ok", lua.LString(line))
		return t, rest
	case '-':
		return errorTable(L, string(b[:end]), true), rest
	case '*', '>':
		n, _ := strconv.Atoi(string(line))
		if n < 0 {
			return lua.LFalse, rest
		}
		t := L.CreateTable(n, 0)
		for i := 1; i <= n; i++ {
			var v lua.LValue
			v, rest = parseReply(L, rest)
			if v != lua.LNil {
				t.RawSetInt(i, v)
			}
		}
		return t, rest
	case '%', '~':
		n, _ := strconv.Atoi(string(line))
		inner := L.CreateTable(0, n)
		for i := 0; i < n; i++ {
			var k, v lua.LValue
			k, rest = parseReply(L, rest)
			if typ == '%' {
				v, rest = parseReply(L, rest)
			} else {
				v = lua.LTrue
			}
			if k != lua.LNil {
				inner.RawSet(k, v)
			}
		}
		t := L.CreateTable(0, 1)
		if typ == '%' {
			t.RawSetString("map", inner)
		} else {
			t.RawSetString("set", inner)
		}
		return t, rest
	case '|':
		n, _ := strconv.Atoi(string(line))
		for i := 0; i < 2*n; i++ {
			_, rest = parseReply(L, rest)
		}
		return parseReply(L, rest)
	case '_':
		return lua.LNil, rest
	case '#':
		return lua.LBool(len(line) > 0 && line[0] == 't'), rest
	case ',':
		t := L.CreateTable(0, 1)
		t.RawSetString("double", lua.LNumber(parseDouble(string(line))))
		return t, rest
	case '(':
		t := L.CreateTable(0, 1)
		t.RawSetString("big_number", lua.LString(line))
		return t, rest
	}
	return lua.LNil, rest
}

func indexCRLF(b []byte) int {
	for i := 0; i+1 < len(b); i++ {
		if b[i] == '\r' && b[i+1] == '\n' {
			return i
		}
	}
	return len(b) - 2
}

func parseDouble(s string) float64 {
	switch s {
	case "inf", "+inf":
		return math.Inf(1)
	case "-inf":
		return math.Inf(-1)
	case "nan", "-nan":
		return math.NaN()
	}
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// errorTable builds the {err=...} table for an error reply or message the
// way Redis's luaPushErrorBuff does: "-CODE msg" keeps its code, a message
// without one gets "ERR". Errors that come out of redis.call/pcall also
// carry the ignore_error_stats_update field Redis adds (the command already
// counted the error).
func errorTable(L *lua.LState, msg string, fromCall bool) *lua.LTable {
	t := L.CreateTable(0, 2)
	t.RawSetString("err", lua.LString(errorText(msg)))
	if fromCall {
		t.RawSetString("ignore_error_stats_update", lua.LTrue)
	}
	return t
}

// errorText is the "CODE message" form of an error.
func errorText(msg string) string {
	code := "ERR"
	if len(msg) > 0 && msg[0] == '-' {
		if c, rest, ok := strings.Cut(msg[1:], " "); ok {
			code, msg = c, rest
		} else {
			msg = msg[1:]
		}
	}
	return code + " " + strings.Trim(msg, "\r\n")
}
