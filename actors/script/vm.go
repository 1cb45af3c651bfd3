package script

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"runtime/metrics"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/slotd/slotd/netio/resp"
)

// Host runs what a script asks of the server. The shard actor executing
// the script implements it.
type Host interface {
	// Call executes one command for redis.call / redis.pcall and appends
	// its reply to w (encoded with w.Proto, the script's redis.setresp
	// version). A non-empty errMsg refuses the call instead (unknown
	// command, wrong arity, a key in another slot, ...); it is a plain
	// message ("Unknown Redis command called from script") or "-CODE msg".
	Call(args [][]byte, w *resp.Writer) (errMsg string)
	// Known reports whether args name an existing command (acl_check_cmd).
	Known(args [][]byte) bool
	// Log writes a redis.log line; level 0..3 is debug..warning.
	Log(level int, msg string)
}

// Log levels of redis.log.
const (
	LogDebug = iota
	LogVerbose
	LogNotice
	LogWarning
)

// Version is what redis.REDIS_VERSION reports.
const (
	Version    = "7.0.15"
	VersionNum = 0x07000f
)

// VM is one Lua interpreter with Redis 7.0's sandbox. It is not safe for
// concurrent use: each shard actor owns one and runs one script at a time.
type VM struct {
	L       *lua.LState
	globals *lua.LTable // the real global table (KEYS, ARGV, libraries)
	// protected maps the read-only proxies scripts see instead of the
	// global table and the libraries to the tables behind them. rawset,
	// setmetatable and the table library refuse to modify a proxy; next,
	// pairs and rawget read through it.
	protected map[*lua.LTable]*lua.LTable
	errFn     *lua.LFunction
	rand      uint64 // rand48 state of math.random

	// Per-run state.
	ctx     context.Context
	host    Host
	runName string // the script's SHA1 or the function's name, for errors
	resp    int    // redis.setresp
	w       resp.Writer
	argBuf  []byte
	args    [][]byte
	ends    []int

	broken bool // a panic escaped the interpreter: build a new VM

	memLimit int64      // string.rep's budget (budget.go)
	oom      lua.LValue // the error object of a failed allocation

	fn *functionState // FUNCTION libraries in this VM (vm_function.go)
}

// Broken reports whether the VM must be replaced.
func (vm *VM) Broken() bool { return vm.broken }

// NewVM builds a sandboxed interpreter.
func NewVM() *VM {
	L := lua.NewState(lua.Options{
		SkipOpenLibs:        true,
		CallStackSize:       20000, // Lua 5.1 allows ~20000 nested Lua calls
		MinimizeStackMemory: true,
		RegistrySize:        1024 * 8,
		RegistryMaxSize:     1024 * 1024,
		RegistryGrowStep:    1024 * 8,
	})
	vm := &VM{L: L, globals: L.G.Global, protected: map[*lua.LTable]*lua.LTable{}, rand: 0x1234ABCD330E,
		resp: 2, oom: L.NewUserData()}
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath}, {lua.CoroutineLibName, lua.OpenCoroutine}} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	g := vm.globals
	g.RawSetString("bit", vm.newLib(bitFuncs))
	g.RawSetString("cjson", vm.newCJSON())
	g.RawSetString("cmsgpack", vm.newCMsgpack())
	g.RawSetString("struct", vm.newLib(structFuncs))
	g.RawSetString("redis", vm.newRedisLib())
	vm.override()

	// Only Redis 7.0's globals stay.
	var drop []lua.LValue
	g.ForEach(func(k, _ lua.LValue) {
		if s, ok := k.(lua.LString); !ok || !allowedGlobals[string(s)] {
			drop = append(drop, k)
		}
	})
	for _, k := range drop {
		g.RawSet(k, lua.LNil)
	}

	frozenMeta := L.NewTable()
	fm := L.NewTable()
	fm.RawSetString("__newindex", L.NewFunction(readonlyError))
	fm.RawSetString("__metatable", lua.LFalse)
	L.SetMetatable(frozenMeta, fm)
	vm.protected[frozenMeta] = L.NewTable()
	freeze := func(real *lua.LTable) *lua.LTable {
		p := L.NewTable()
		mt := L.NewTable()
		mt.RawSetString("__index", real)
		mt.RawSetString("__newindex", L.NewFunction(readonlyError))
		mt.RawSetString("__metatable", frozenMeta)
		L.SetMetatable(p, mt)
		vm.protected[p] = real
		return p
	}
	for _, lib := range []string{"string", "math", "table", "coroutine", "redis", "bit", "cjson", "cmsgpack", "struct"} {
		if t, ok := g.RawGetString(lib).(*lua.LTable); ok {
			g.RawSetString(lib, freeze(t))
		}
	}
	// String methods resolve through the frozen string library, and the
	// string metatable itself is out of reach.
	if smt, ok := L.GetMetatable(lua.LString("")).(*lua.LTable); ok {
		smt.RawSetString("__index", g.RawGetString("string"))
		shown := L.NewTable()
		shown.RawSetString("__index", g.RawGetString("string"))
		smt.RawSetString("__metatable", freeze(shown))
	}
	env := freeze(g)
	g.RawSetString("_G", env)
	// Reading an undefined global is an error, as in Redis.
	gm := L.NewTable()
	gm.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("Script attempted to access nonexistent global variable '%s'", lua.LVAsString(L.Get(2)))
		return 0
	}))
	L.SetMetatable(g, gm)
	L.Env = env
	vm.errFn = L.NewFunction(vm.onError)
	return vm
}

func init() {
	// Lua 5.0's implicit "arg" table costs a table per call of every vararg
	// function (each script's main chunk among them); scripts use "...".
	lua.CompatVarArg = false
}

// luaMaxStack is Lua 5.1's LUAI_MAXCSTACK: how many values a C function
// may push.
const luaMaxStack = 8000

// allowedGlobals are the globals Redis 7.0.15 scripts see.
var allowedGlobals = map[string]bool{
	"xpcall": true, "tostring": true, "setmetatable": true, "next": true, "assert": true, "tonumber": true,
	"rawequal": true, "collectgarbage": true, "getmetatable": true, "rawset": true, "pcall": true,
	"coroutine": true, "type": true, "_G": true, "select": true, "unpack": true, "gcinfo": true, "pairs": true,
	"rawget": true, "loadstring": true, "ipairs": true, "_VERSION": true, "load": true, "error": true,
	"string": true, "cjson": true, "bit": true, "cmsgpack": true, "struct": true, "math": true, "table": true, "redis": true,
}

func readonlyError(L *lua.LState) int {
	L.RaiseError("Attempt to modify a readonly table")
	return 0
}

func (vm *VM) newLib(funcs map[string]lua.LGFunction) *lua.LTable {
	t := vm.L.NewTable()
	for name, fn := range funcs {
		t.RawSetString(name, vm.L.NewFunction(fn))
	}
	return t
}

// Run executes s with KEYS and ARGV and appends the reply for a client
// speaking w.Proto. ctx cancels the script (SCRIPT KILL, shutdown).
func (vm *VM) Run(ctx context.Context, s *Script, keys, argv [][]byte, host Host, w *resp.Writer) {
	L := vm.L
	vm.ctx, vm.host, vm.runName, vm.resp = ctx, host, s.SHA, 2
	defer func() {
		vm.ctx, vm.host, vm.runName = nil, nil, ""
		vm.globals.RawSetString("KEYS", lua.LNil)
		vm.globals.RawSetString("ARGV", lua.LNil)
		L.SetTop(0)
	}()
	vm.globals.RawSetString("KEYS", vm.array(keys))
	vm.globals.RawSetString("ARGV", vm.array(argv))
	L.SetContext(ctx)
	defer L.RemoveContext()
	mark := len(w.B)
	defer func() {
		// gopher-lua can panic past PCall when it runs out of stack while
		// handling an error; the VM is then unusable.
		if r := recover(); r != nil {
			vm.broken = true
			w.B = w.B[:mark]
			w.Error("ERR Error running script " + s.SHA + ", " + trunc(fmt.Sprint(r), 100))
		}
	}()
	L.Push(L.NewFunctionFromProto(s.Proto))
	if err := L.PCall(0, 1, vm.errFn); err != nil {
		vm.writeError(w, err)
		return
	}
	writeReply(w, L.Get(-1), vm.resp, 0)
}

func (vm *VM) array(items [][]byte) *lua.LTable {
	t := vm.L.CreateTable(len(items), 0)
	for i, it := range items {
		t.RawSetInt(i+1, lua.LString(it))
	}
	return t
}

// onError is the message handler of the script call (Redis's
// __redis__err__handler): it turns any error into an {err=} table and
// records where in the script it happened.
func (vm *VM) onError(L *lua.LState) int {
	obj := L.Get(1)
	var t *lua.LTable
	if vm.outOfMemory(obj) {
		// Lua runs no handler for LUA_ERRMEM: Redis replies with the
		// bare message.
		L.Push(lua.LString(noMemoryMsg))
		return 1
	} else if vm.ctx != nil && vm.ctx.Err() != nil {
		t = errorTable(L, "Script killed by user with SCRIPT KILL...", false)
	} else if tt, ok := obj.(*lua.LTable); ok {
		t = tt
	} else {
		msg := luaString(obj)
		if _, ok := obj.(lua.LString); ok {
			msg = luaRuntimeMessages.Replace(quoteArgError(msg))
		}
		t = L.CreateTable(0, 3)
		t.RawSetString("err", lua.LString("ERR "+msg))
	}
	if dbg, ok := L.GetStack(1); ok {
		_, _ = L.GetInfo("Sl", dbg, nil)
		if dbg.What == "G" {
			if up, ok := L.GetStack(2); ok {
				_, _ = L.GetInfo("Sl", up, nil)
				dbg = up
			}
		}
		source, line := "=[C]", -1
		if dbg.What != "G" {
			source, line = dbg.Source, dbg.CurrentLine
			if source == chunkName || source == libChunkName {
				source = "@" + source
			}
		}
		t.RawSetString("source", lua.LString(source))
		t.RawSetString("line", lua.LNumber(line))
	}
	L.Push(t)
	return 1
}

// writeError replies with a failed script's error in Redis 7.0's format:
// "<err> script: <sha>, on @user_script:<line>.".
func (vm *VM) writeError(w *resp.Writer, err error) {
	var obj lua.LValue = lua.LString(err.Error())
	if ae, ok := err.(*lua.ApiError); ok {
		obj = ae.Object
	}
	t, ok := obj.(*lua.LTable)
	if !ok {
		// The message handler could not run (no stack left).
		msg := luaString(obj)
		if msg == "lua callstack overflow" {
			msg = "stack overflow"
		}
		w.Error("ERR Error running script " + vm.runName + ", " + trunc(msg, 100))
		return
	}
	msg := "ERR execution failure"
	switch v := t.RawGetString("err").(type) {
	case lua.LString:
		msg = string(v)
	case lua.LNumber:
		msg = luaNumber(float64(v))
	}
	src, okS := t.RawGetString("source").(lua.LString)
	line := t.RawGetString("line")
	if okS && line != lua.LNil {
		msg += " script: " + vm.runName + ", on " + string(src) + ":" + luaString(line) + "."
	}
	w.Error(msg)
}

func trunc(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// argErrorRE matches gopher-lua's "bad argument #1 to f (...)"; Lua
// quotes the function name.
var argErrorRE = regexp.MustCompile(`bad argument #(-?\d+) to ([^' (][^ ]*) \(`)

func quoteArgError(msg string) string {
	if !strings.Contains(msg, "bad argument #") {
		return msg
	}
	return argErrorRE.ReplaceAllString(msg, "bad argument #$1 to '$2' (")
}

// argError raises Lua 5.1's "bad argument #n to 'f' (msg)" for the
// running Go function.
func argError(L *lua.LState, n int, msg string) {
	name := "?"
	if dbg, ok := L.GetStack(0); ok {
		if _, err := L.GetInfo("n", dbg, nil); err == nil && dbg.Name != "" {
			name = dbg.Name
		}
	}
	L.RaiseError("bad argument #%d to '%s' (%s)", n, name, msg)
}

// checkString and checkNumber are luaL_checkstring / luaL_checknumber with
// Lua's messages ("got no value" for a missing argument).
func checkString(L *lua.LState, n int) string {
	switch v := L.Get(n).(type) {
	case lua.LString:
		return string(v)
	case lua.LNumber:
		return luaNumber(float64(v))
	}
	argError(L, n, "string expected, got "+typeName(L, n))
	return ""
}

func checkNumber(L *lua.LState, n int) float64 {
	switch v := L.Get(n).(type) {
	case lua.LNumber:
		return float64(v)
	case lua.LString:
		if f, ok := toNumber(v); ok {
			return f
		}
	}
	argError(L, n, "number expected, got "+typeName(L, n))
	return 0
}

func typeName(L *lua.LState, n int) string {
	if n > L.GetTop() {
		return "no value"
	}
	return L.Get(n).Type().String()
}

// luaNumber formats a number as Lua 5.1's tostring does ("%.14g").
func luaNumber(f float64) string { return formatG(f, 14) }

// luaString is Lua's tostring without metamethods.
func luaString(v lua.LValue) string {
	switch v := v.(type) {
	case lua.LNumber:
		return luaNumber(float64(v))
	case lua.LString:
		return string(v)
	}
	return v.String()
}

// luaToString is lua_tolstring: strings and numbers only.
func luaToString(v lua.LValue) (string, bool) {
	switch v := v.(type) {
	case lua.LString:
		return string(v), true
	case lua.LNumber:
		return luaNumber(float64(v)), true
	}
	return "", false
}

// override replaces base functions whose gopher-lua behaviour differs
// from Redis's Lua in ways scripts see.
func (vm *VM) override() {
	g := vm.globals
	orig := func(t *lua.LTable, name string) lua.LGFunction {
		if fn, ok := t.RawGetString(name).(*lua.LFunction); ok && fn.GFunction != nil {
			return fn.GFunction
		}
		return func(*lua.LState) int { return 0 }
	}
	set := func(t *lua.LTable, name string, fn lua.LGFunction) { t.RawSetString(name, vm.L.NewFunction(fn)) }

	set(g, "tonumber", luaToNumber)
	tostring := orig(g, "tostring")
	set(g, "tostring", func(L *lua.LState) int {
		if n, ok := L.CheckAny(1).(lua.LNumber); ok {
			L.Push(lua.LString(luaNumber(float64(n))))
			return 1
		}
		return tostring(L)
	})
	// error() adds the position to numbers too, as Lua does.
	errorFn := orig(g, "error")
	set(g, "error", func(L *lua.LState) int {
		if L.GetTop() == 0 {
			L.Error(lua.LNil, 1)
		}
		if n, ok := L.Get(1).(lua.LNumber); ok {
			L.Error(lua.LString(luaNumber(float64(n))), L.OptInt(2, 1))
		}
		return errorFn(L)
	})
	// pcall returns the message of a Redis error table, not the table.
	pcall := orig(g, "pcall")
	set(g, "pcall", func(L *lua.LState) int {
		n := pcall(L)
		base := L.GetTop() - n + 1
		if n >= 2 && L.Get(base) == lua.LFalse {
			if vm.outOfMemory(L.Get(base + 1)) {
				L.Replace(base+1, lua.LString(noMemoryMsg))
			}
			if s, ok := L.Get(base + 1).(lua.LString); ok {
				L.Replace(base+1, lua.LString(luaRuntimeMessages.Replace(string(s))))
			}
			if t, ok := L.Get(base + 1).(*lua.LTable); ok {
				switch e := t.RawGetString("err").(type) {
				case lua.LString, lua.LNumber:
					L.Replace(base+1, e)
				}
			}
		}
		return n
	})
	// Read-only tables refuse raw writes, metatable changes and the
	// table library's in-place edits.
	guard := func(t *lua.LTable, name string) {
		fn := orig(t, name)
		set(t, name, func(L *lua.LState) int {
			if t, ok := L.Get(1).(*lua.LTable); ok && vm.protected[t] != nil {
				L.Error(lua.LString("Attempt to modify a readonly table"), 0)
			}
			return fn(L)
		})
	}
	// Reading through a proxy sees the table behind it.
	through := func(t *lua.LTable, name string) *lua.LFunction {
		fn := orig(t, name)
		set(t, name, func(L *lua.LState) int {
			if p, ok := L.Get(1).(*lua.LTable); ok && vm.protected[p] != nil {
				L.Replace(1, vm.protected[p])
			}
			return fn(L)
		})
		return t.RawGetString(name).(*lua.LFunction)
	}
	next := through(g, "next")
	through(g, "rawget")
	set(g, "pairs", func(L *lua.LState) int {
		t := L.CheckTable(1)
		L.Push(next)
		L.Push(t)
		L.Push(lua.LNil)
		return 3
	})
	guard(g, "rawset")
	guard(g, "setmetatable")
	if tl, ok := g.RawGetString("table").(*lua.LTable); ok {
		for _, name := range []string{"insert", "remove", "sort"} {
			guard(tl, name)
		}
	}
	// unpack has Lua 5.1's stack limit (gopher-lua grows its stack instead).
	unpack := orig(g, "unpack")
	set(g, "unpack", func(L *lua.LState) int {
		t := L.CheckTable(1)
		i, j := L.OptInt(2, 1), L.OptInt(3, t.Len())
		if i <= j && j-i >= luaMaxStack-L.GetTop() {
			L.RaiseError("too many results to unpack")
		}
		return unpack(L)
	})
	// gopher-lua's collectgarbage runs a full Go GC on every call.
	set(g, "collectgarbage", func(L *lua.LState) int {
		switch opt := L.OptString(1, "collect"); opt {
		case "count":
			L.Push(lua.LNumber(heapKB()))
		case "step":
			L.Push(lua.LFalse)
		case "collect", "stop", "restart", "setpause", "setstepmul":
			L.Push(lua.LNumber(0))
		default:
			L.ArgError(1, "invalid option '"+opt+"'")
		}
		return 1
	})
	set(g, "gcinfo", func(L *lua.LState) int {
		L.Push(lua.LNumber(int(heapKB())))
		return 1
	})
	if st, ok := g.RawGetString("string").(*lua.LTable); ok {
		set(st, "rep", vm.strRep)
	}
	if m, ok := g.RawGetString("math").(*lua.LTable); ok {
		set(m, "random", vm.mathRandom)
		set(m, "randomseed", func(L *lua.LState) int {
			vm.rand = uint64(uint32(int32(L.CheckInt(1))))<<16 | 0x330E
			return 0
		})
	}
}

// heapKB is the Go heap in use, standing in for Lua's own memory count
// (collectgarbage("count"), gcinfo).
func heapKB() float64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return float64(s[0].Value.Uint64()) / 1024
}

// lrand48 is the POSIX 48-bit linear congruential generator Redis's
// math.random uses, so sequences have the same distribution and period.
func (vm *VM) lrand48() int32 {
	vm.rand = (0x5DEECE66D*vm.rand + 0xB) & (1<<48 - 1)
	return int32(vm.rand >> 17)
}

func (vm *VM) mathRandom(L *lua.LState) int {
	const max = math.MaxInt32
	r := float64(vm.lrand48()%max) / float64(max)
	switch L.GetTop() {
	case 0:
		L.Push(lua.LNumber(r))
	case 1:
		u := L.CheckInt(1)
		if u < 1 {
			L.ArgError(1, "interval is empty")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u)) + 1))
	case 2:
		l, u := L.CheckInt(1), L.CheckInt(2)
		if l > u {
			L.ArgError(2, "interval is empty")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u-l+1)) + float64(l)))
	default:
		L.RaiseError("wrong number of arguments")
	}
	return 1
}
