package script

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/netio/resp"
)

// testHost answers redis.call with canned replies: the first argument
// names the reply (raw RESP is sent as is with "raw").
type testHost struct {
	calls [][]string
	logs  []string
}

func (h *testHost) Call(args [][]byte, w *resp.Writer) string {
	var a []string
	for _, x := range args {
		a = append(a, string(x))
	}
	h.calls = append(h.calls, a)
	switch a[0] {
	case "raw":
		w.B = append(w.B, a[1]...)
	case "get":
		w.Null()
	case "set":
		w.OK()
	case "refuse":
		return "Refused from script"
	default:
		return "Unknown Redis command called from script"
	}
	return ""
}

func (h *testHost) Known(args [][]byte) bool { return string(args[0]) != "nosuch" }
func (h *testHost) Log(level int, msg string) {
	h.logs = append(h.logs, string(rune('0'+level))+" "+msg)
}

func run(t *testing.T, vm *VM, src string, proto int, keys, argv []string) string {
	t.Helper()
	c := NewCache()
	s, err := c.Load([]byte(src))
	require.NoError(t, err, src)
	w := &resp.Writer{Proto: proto}
	vm.Run(context.Background(), s, toBytes(keys), toBytes(argv), &testHost{}, w)
	return string(w.B)
}

func toBytes(ss []string) [][]byte {
	var out [][]byte
	for _, s := range ss {
		out = append(out, []byte(s))
	}
	return out
}

// TestReplyConversion: the script's return value for RESP2 and RESP3
// clients, as Redis 7.0.15 replies (each expectation was read off a real
// redis-server).
func TestReplyConversion(t *testing.T) {
	vm := NewVM()
	cases := []struct{ src, resp2, resp3 string }{
		{"return 1.9", ":1\r\n", ":1\r\n"},
		{"return -3.7", ":-3\r\n", ":-3\r\n"},
		{"return 1e30", ":-9223372036854775808\r\n", ":-9223372036854775808\r\n"},
		{"return 'x'", "$1\r\nx\r\n", "$1\r\nx\r\n"},
		{"return true", ":1\r\n", ":1\r\n"},
		{"return false", "$-1\r\n", "_\r\n"},
		{"return nil", "$-1\r\n", "_\r\n"},
		{"return function() end", "$-1\r\n", "_\r\n"},
		{"return {1,2,nil,3}", "*2\r\n:1\r\n:2\r\n", "*2\r\n:1\r\n:2\r\n"},
		{"return {1,{err='x'},{ok='y'},'z'}", "*4\r\n:1\r\n-x\r\n+y\r\n$1\r\nz\r\n", "*4\r\n:1\r\n-x\r\n+y\r\n$1\r\nz\r\n"},
		{"return {err='a\\r\\nb'}", "-a  b\r\n", "-a  b\r\n"},
		{"return {ok='a\\r\\nb'}", "+a  b\r\n", "+a  b\r\n"},
		{"return {err=3}", "*0\r\n", "*0\r\n"},
		{"return {double=0.1}", "$19\r\n0.10000000000000001\r\n", ",0.10000000000000001\r\n"},
		{"return {double=1/0}", "$3\r\ninf\r\n", ",inf\r\n"},
		{"return {double=0/0}", "$4\r\n-nan\r\n", ",-nan\r\n"},
		{"return {big_number='123'}", "$3\r\n123\r\n", "(123\r\n"},
		{"return {verbatim_string={format='mkd',string='hi'}}", "$2\r\nhi\r\n", "=6\r\nmkd:hi\r\n"},
		{"return {map={a=1}}", "*2\r\n$1\r\na\r\n:1\r\n", "%1\r\n$1\r\na\r\n:1\r\n"},
		{"return {map={b=1, a=2, c=3}}", "*6\r\n$1\r\nb\r\n:1\r\n$1\r\na\r\n:2\r\n$1\r\nc\r\n:3\r\n",
			"%3\r\n$1\r\nb\r\n:1\r\n$1\r\na\r\n:2\r\n$1\r\nc\r\n:3\r\n"},
		{"return {set={a=true}}", "*1\r\n$1\r\na\r\n", "~1\r\n$1\r\na\r\n"},
		{"redis.setresp(3) return {true, false}", "*2\r\n:1\r\n:0\r\n", "*2\r\n#t\r\n#f\r\n"},
	}
	for _, c := range cases {
		assert.Equal(t, c.resp2, run(t, vm, c.src, 2, nil, nil), "RESP2 %s", c.src)
		assert.Equal(t, c.resp3, run(t, vm, c.src, 3, nil, nil), "RESP3 %s", c.src)
	}
	// A table that contains itself ends in Redis's stack-limit error.
	r := run(t, vm, "local t = {} t[1] = t return t", 2, nil, nil)
	assert.True(t, strings.HasSuffix(r, "-ERR reached lua stack limit\r\n"))
}

// TestCallReplyConversion: what redis.call hands the script for each
// reply type, in RESP2 and RESP3 (redis.setresp(3)).
func TestCallReplyConversion(t *testing.T) {
	vm := NewVM()
	probe := func(raw string) string {
		src := "redis.setresp(3) local r = redis.pcall('raw', ARGV[1]) local out = {type(r)} " +
			"if type(r) == 'table' then for _, k in ipairs({'ok', 'err', 'double', 'big_number'}) do " +
			"if r[k] then out[#out+1] = k .. '=' .. tostring(r[k]) end end " +
			"if r.map then for k, v in pairs(r.map) do out[#out+1] = 'map:' .. k .. '=' .. tostring(v) end end " +
			"if r.set then for k, v in pairs(r.set) do out[#out+1] = 'set:' .. k .. '=' .. tostring(v) end end " +
			"if r.verbatim_string then out[#out+1] = r.verbatim_string.format .. '|' .. r.verbatim_string.string end " +
			"if r[1] ~= nil then out[#out+1] = 'first=' .. tostring(r[1]) .. ',' .. tostring(r[2]) end " +
			"elseif r ~= nil then out[#out+1] = tostring(r) end return table.concat(out, ' ')"
		return run(t, vm, src, 2, nil, []string{raw})
	}
	for raw, want := range map[string]string{
		":42\r\n":                             "number 42",
		"$3\r\nabc\r\n":                       "string abc",
		"$-1\r\n":                             "boolean false",
		"*-1\r\n":                             "boolean false",
		"+OK\r\n":                             "table ok=OK",
		"-WRONGTYPE bad\r\n":                  "table err=WRONGTYPE bad",
		"-NOCODE\r\n":                         "table err=ERR NOCODE",
		"*3\r\n:1\r\n$-1\r\n:3\r\n":           "table first=1,false",
		"%1\r\n$1\r\nf\r\n$1\r\nv\r\n":        "table map:f=v",
		"~1\r\n$1\r\nm\r\n":                   "table set:m=true",
		"_\r\n":                               "nil",
		"#t\r\n":                              "boolean true",
		",1.5\r\n":                            "table double=1.5",
		",inf\r\n":                            "table double=inf",
		"(12345678901234567890\r\n":           "table big_number=12345678901234567890",
		"=7\r\ntxt:abc\r\n":                   "table txt|abc",
		"|1\r\n$1\r\na\r\n:1\r\n$2\r\nok\r\n": "string ok",
		"*2\r\n_\r\n~0\r\n":                   "table",
		"!5\r\nBAD x\r\n":                     "table err=BAD x",
	} {
		assert.Equal(t, "$"+itoa(len(want))+"\r\n"+want+"\r\n", probe(raw), "%q", raw)
	}
	// redis.call raises error replies; redis.pcall returns them.
	assert.Equal(t, "-WRONGTYPE bad script: "+sha("return redis.call('raw', ARGV[1])")+", on @user_script:1.\r\n",
		run(t, vm, "return redis.call('raw', ARGV[1])", 2, nil, []string{"-WRONGTYPE bad\r\n"}))
	assert.Equal(t, "-WRONGTYPE bad\r\n", run(t, vm, "return redis.pcall('raw', ARGV[1])", 2, nil, []string{"-WRONGTYPE bad\r\n"}))
	assert.Equal(t, "-ERR Refused from script\r\n", run(t, vm, "return redis.pcall('refuse')", 2, nil, nil))
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func sha(src string) string { return SHA1Hex([]byte(src)) }

// TestCallArguments: numbers are passed in %.17g, only strings and numbers
// are accepted, and KEYS/ARGV are fresh tables each run.
func TestCallArguments(t *testing.T) {
	vm := NewVM()
	h := &testHost{}
	s, err := Compile([]byte("redis.call('set', KEYS[1], 0.1, 3, -2.5, 1e20, ARGV[1])"))
	require.NoError(t, err)
	w := &resp.Writer{}
	vm.Run(context.Background(), s, toBytes([]string{"k"}), toBytes([]string{"v"}), h, w)
	assert.Equal(t, "$-1\r\n", string(w.B))
	assert.Equal(t, [][]string{{"set", "k", "0.10000000000000001", "3", "-2.5", "1e+20", "v"}}, h.calls)
	assert.Equal(t, ":0\r\n", run(t, vm, "return #KEYS + #ARGV", 2, nil, nil))
	assert.Equal(t, "*1\r\n$1\r\nz\r\n", run(t, vm, "KEYS[1] = 'z' return KEYS", 2, []string{"a"}, nil))
	assert.Equal(t, "*1\r\n$1\r\na\r\n", run(t, vm, "return KEYS", 2, []string{"a"}, nil))
}

// TestSandboxDoesNotLeak: whatever a script tries, the next script sees
// the pristine environment.
func TestSandboxDoesNotLeak(t *testing.T) {
	vm := NewVM()
	for _, tamper := range []string{
		"x = 1", "_G.x = 1", "rawset(_G, 'x', 1)", "table.insert(_G, 1)", "setmetatable(_G, {})",
		"string.upper = nil", "rawset(string, 'upper', nil)", "getmetatable('').__index = {}",
		"getmetatable('').__index.upper = nil", "rawset(getmetatable(''), '__index', {})",
		"setmetatable(getmetatable(''), {})", "redis.call = nil", "table.sort = nil", "math.random = nil",
		"getmetatable(_G).__index = {}", "rawset(getmetatable(_G), 'x', 1)", "table.remove(_G)",
		"local f = loadstring('y = 2') f()", "cjson.encode = nil", "bit.band = nil",
	} {
		r := run(t, vm, tamper, 2, nil, nil)
		assert.Contains(t, r, "Attempt to modify a readonly table", tamper)
	}
	assert.Equal(t, "$3\r\nABC\r\n", run(t, vm, "return ('abc'):upper() .. ''", 2, nil, nil))
	assert.Equal(t, "$3\r\nABC\r\n", run(t, vm, "return string.upper('abc')", 2, nil, nil))
	assert.Contains(t, run(t, vm, "return x", 2, nil, nil), "Script attempted to access nonexistent global variable 'x'")
	assert.Contains(t, run(t, vm, "return y", 2, nil, nil), "Script attempted to access nonexistent global variable 'y'")
	assert.Equal(t, ":1\r\n", run(t, vm, "return rawget(_G, 1) == nil and rawget(_G, 'x') == nil", 2, nil, nil))
	assert.Equal(t, "$8\r\nfunction\r\n", run(t, vm, "return type(redis.call)", 2, nil, nil))
}

// TestKill: cancelling the context stops a busy script (even one that
// catches errors with pcall), the reply is Redis's, and the VM keeps
// working.
func TestKill(t *testing.T) {
	vm := NewVM()
	for _, src := range []string{
		"while true do end",
		"while true do pcall(function() while true do end end) end",
		"local co = coroutine.wrap(function() while true do end end) co()",
	} {
		s, err := Compile([]byte(src))
		require.NoError(t, err)
		s.SHA = sha(src)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(20*time.Millisecond, cancel)
		w := &resp.Writer{}
		done := make(chan struct{})
		go func() {
			vm.Run(ctx, s, nil, nil, &testHost{}, w)
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s was not killed", src)
		}
		assert.True(t, strings.HasPrefix(string(w.B), "-ERR Script killed by user with SCRIPT KILL... script: "+s.SHA), "%s: %q", src, w.B)
	}
	assert.Equal(t, ":3\r\n", run(t, vm, "return 1 + 2", 2, nil, nil))
}

// TestLimits: deep recursion, unpack and stack overflow behave like Lua
// 5.1 inside Redis.
func TestLimits(t *testing.T) {
	vm := NewVM()
	rec := "local function f(n) if n == 0 then return 0 end return 1 + f(n - 1) end return f(%s)"
	assert.Equal(t, ":10000\r\n", run(t, vm, strings.Replace(rec, "%s", "10000", 1), 2, nil, nil))
	assert.Contains(t, run(t, vm, strings.Replace(rec, "%s", "200000", 1), 2, nil, nil), "stack overflow")
	assert.Contains(t, run(t, vm, "return #{unpack({}, 1, 1e7)}", 2, nil, nil), "too many results to unpack")
	assert.Equal(t, ":3\r\n", run(t, vm, "return select('#', unpack({1, 2, 3}))", 2, nil, nil))
	assert.False(t, vm.Broken())
}

// TestCompileErrors: Lua 5.1's wording for the common syntax errors, and
// shebang handling.
func TestCompileErrors(t *testing.T) {
	for src, want := range map[string]string{
		"return (":           "user_script:1: unexpected symbol near '<eof>'",
		"return 'abc":        "user_script:1: unfinished string near '<eof>'",
		"return 'a\nb'":      "user_script:1: unfinished string near ''a'",
		"x = = 1":            "user_script:1: unexpected symbol near '='",
		"return 0x":          "user_script:1: malformed number near '0x'",
		"\n\nreturn @":       "user_script:3: unexpected symbol near '@'",
		"#!lua\nreturn (":    "user_script:2: unexpected symbol near '<eof>'",
		"return [[abc":       "user_script:1: unfinished long string near '<eof>'",
		"local a = 1\nlocal": "user_script:2: unexpected symbol near '<eof>'",
	} {
		_, err := Compile([]byte(src))
		require.Error(t, err, src)
		assert.Equal(t, "ERR Error compiling script (new function): "+want, err.Error(), "%q", src)
	}
	s, err := Compile([]byte("#!lua flags=no-writes,allow-cross-slot-keys\nreturn 1"))
	require.NoError(t, err)
	assert.True(t, s.Shebang)
	assert.Equal(t, FlagNoWrites|FlagAllowCrossSlot, s.Flags)
	for src, want := range map[string]string{
		"#!lua":                  "ERR Invalid script shebang",
		"#!py\nreturn 1":         "ERR Unexpected engine in script shebang: #!py",
		"#!lua flags=x\nreturn":  "ERR Unexpected flag in script shebang: x",
		"#!lua name=x\nreturn 1": "ERR Unknown lua shebang option: name=x",
	} {
		_, err := Compile([]byte(src))
		assert.EqualError(t, err, want, src)
		_, ok := ShebangFlags([]byte(src))
		assert.False(t, ok, "no valid shebang: %q", src)
	}
	f, ok := ShebangFlags([]byte("#!lua flags=no-writes,allow-cross-slot-keys\nreturn 1"))
	assert.True(t, ok)
	assert.Equal(t, FlagNoWrites|FlagAllowCrossSlot, f)
	f, ok = ShebangFlags([]byte("#!lua\nreturn 1"))
	assert.True(t, ok)
	assert.Zero(t, f)
	_, ok = ShebangFlags([]byte("return 1"))
	assert.False(t, ok)
}

// TestCache: SHA1 keys, case-insensitive lookups, flush.
func TestCache(t *testing.T) {
	c := NewCache()
	s, err := c.Load([]byte("return 1"))
	require.NoError(t, err)
	assert.Equal(t, "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", s.SHA)
	assert.Same(t, s, c.Get([]byte(s.SHA)))
	assert.Same(t, s, c.Get([]byte(strings.ToUpper(s.SHA))), "SHA1s match in any case, as in Redis")
	assert.Nil(t, c.Get([]byte("e0e1")))
	again, _ := c.Load([]byte("return 1"))
	assert.Same(t, s, again)
	assert.Equal(t, 1, c.Len())
	c.Flush()
	assert.False(t, c.Exists([]byte(s.SHA)))
	_, err = c.Load([]byte("return ("))
	assert.Error(t, err)
	assert.Equal(t, 0, c.Len())
}

// TestRedisLib: redis.log, setresp, sha1hex and friends.
func TestRedisLib(t *testing.T) {
	vm := NewVM()
	h := &testHost{}
	s, _ := Compile([]byte("redis.log(redis.LOG_WARNING, 'a', 1, {}, 'b') redis.log(redis.LOG_DEBUG, 'dbg')"))
	s.SHA = "x"
	vm.Run(context.Background(), s, nil, nil, h, &resp.Writer{})
	assert.Equal(t, []string{"3 a 1 b", "0 dbg"}, h.logs)
	assert.Equal(t, "$40\r\nda39a3ee5e6b4b0d3255bfef95601890afd80709\r\n", run(t, vm, "return redis.sha1hex('')", 2, nil, nil))
	assert.Equal(t, ":1\r\n", run(t, vm, "return redis.acl_check_cmd('get', 'k')", 2, nil, nil))
	assert.Contains(t, run(t, vm, "return redis.acl_check_cmd('nosuch')", 2, nil, nil), "Invalid command passed to redis.acl_check_cmd()")
	assert.Equal(t, "$1\r\nx\r\n", run(t, vm, "return redis.setresp(2) or 'x'", 2, nil, nil))
	// setresp does not outlive its script.
	assert.Equal(t, "_\r\n", run(t, vm, "redis.setresp(3) return redis.call('get', 'k')", 3, nil, nil))
	assert.Equal(t, "$7\r\nboolean\r\n", run(t, vm, "return type(redis.call('get', 'k'))", 3, nil, nil))
	// math.random follows its seed.
	a := run(t, vm, "math.randomseed(7) return {math.random(100), math.random(100), math.random(5, 9)}", 2, nil, nil)
	b := run(t, vm, "math.randomseed(7) return {math.random(100), math.random(100), math.random(5, 9)}", 2, nil, nil)
	assert.Equal(t, a, b)
	assert.Contains(t, run(t, vm, "return math.random(0)", 2, nil, nil), "interval is empty")
}

// TestLibraries: bit and cjson cases beyond the side-by-side test.
func TestLibraries(t *testing.T) {
	vm := NewVM()
	for src, want := range map[string]string{
		"return bit.tohex(0x1f, 2)":                        "$2\r\n1f\r\n",
		"return bit.tohex(-1)":                             "$8\r\nffffffff\r\n",
		"return bit.band(-1, 2^32 + 7)":                    ":7\r\n",
		"return bit.lshift(1, 33)":                         ":2\r\n",
		"return cjson.encode(cjson.decode('[1,[2,[3]]]'))": "$11\r\n[1,[2,[3]]]\r\n",
		"return cjson.encode({a = {b = 'c'}})":             "$15\r\n{\"a\":{\"b\":\"c\"}}\r\n",
		"return cjson.decode('\"\\\\u0041\\\\t\"')":        "$2\r\nA\t\r\n",
		"return cjson.decode('-1.5e2')":                    ":-150\r\n",
		"return #cjson.decode('[]')":                       ":0\r\n",
		"return cjson.encode(cjson.decode('{}'))":          "$2\r\n{}\r\n",
		"return {cjson.encode_max_depth(), cjson._NAME}":   "*2\r\n:1000\r\n$5\r\ncjson\r\n",
		"return select('#', cjson.encode_sparse_array())":  ":3\r\n",
	} {
		assert.Equal(t, want, run(t, vm, src, 2, nil, nil), src)
	}
	assert.Contains(t, run(t, vm, "return cjson.decode('{\"a\":1,}')", 2, nil, nil),
		"Expected object key string but found T_OBJ_END at character 8")
	assert.Contains(t, run(t, vm, "return cjson.decode('[\"\\\\x\"]')", 2, nil, nil), "invalid escape code")
	deep := strings.Repeat("[", 1001) + strings.Repeat("]", 1001)
	assert.Contains(t, run(t, vm, "return cjson.decode(ARGV[1])", 2, nil, []string{deep}), "Found too many nested data structures (1001)")
	assert.Contains(t, run(t, vm, "local t = {} local c = t for i = 1, 1001 do c[1] = {} c = c[1] end return cjson.encode(t)", 2, nil, nil),
		"Cannot serialise, excessive nesting (1001)")
}
