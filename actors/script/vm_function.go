package script

import (
	"context"
	"fmt"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/slotd/slotd/netio/resp"
)

// Functions in a VM. Library bodies and the closures they register share
// one globals table, F, whose metatable's __index is switched as in
// Redis: while a body runs (FUNCTION LOAD) F reads through to the library
// API (redis.register_function, redis.log, the LOG_* and version
// constants, nothing else); while a function runs, to the same read-only
// globals EVAL scripts see. Writing to F is an error either way.

// functionState is a VM's function machinery, built on first use.
type functionState struct {
	env     *lua.LTable // F
	envMeta *lua.LTable // F's metatable
	libAPI  *lua.LTable // globals while a library body runs
	runEnv  lua.LValue  // globals while a function runs

	loading *[]registration // set while a body runs
	libs    map[*Library]map[string]*lua.LFunction
}

// registration is one redis.register_function call.
type registration struct {
	fn *Function
	cb *lua.LFunction
}

func (vm *VM) functions() *functionState {
	if vm.fn != nil {
		return vm.fn
	}
	L := vm.L
	fs := &functionState{runEnv: L.Env, libs: map[*Library]map[string]*lua.LFunction{}}
	missing := L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("Script attempted to access nonexistent global variable '%s'", lua.LVAsString(L.Get(2)))
		return 0
	})
	withMissing := func(t *lua.LTable) *lua.LTable {
		mt := L.NewTable()
		mt.RawSetString("__index", missing)
		L.SetMetatable(t, mt)
		return t
	}
	api := vm.newLib(map[string]lua.LGFunction{"register_function": vm.registerFunction, "log": vm.redisLog})
	for name, v := range map[string]lua.LValue{
		"LOG_DEBUG": lua.LNumber(LogDebug), "LOG_VERBOSE": lua.LNumber(LogVerbose),
		"LOG_NOTICE": lua.LNumber(LogNotice), "LOG_WARNING": lua.LNumber(LogWarning),
		"REDIS_VERSION": lua.LString(Version), "REDIS_VERSION_NUM": lua.LNumber(VersionNum),
	} {
		api.RawSetString(name, v)
	}
	redisProxy := L.NewTable()
	pm := L.NewTable()
	pm.RawSetString("__index", withMissing(api))
	pm.RawSetString("__newindex", L.NewFunction(readonlyError))
	L.SetMetatable(redisProxy, pm)
	vm.protected[redisProxy] = api
	fs.libAPI = withMissing(L.NewTable())
	fs.libAPI.RawSetString("redis", redisProxy)

	fs.env = L.NewTable()
	fs.envMeta = L.NewTable()
	fs.envMeta.RawSetString("__index", fs.runEnv)
	fs.envMeta.RawSetString("__newindex", L.NewFunction(readonlyError))
	fs.envMeta.RawSetString("__metatable", lua.LFalse)
	L.SetMetatable(fs.env, fs.envMeta)
	vm.fn = fs
	return fs
}

// runLibrary runs a library's body and returns what it registered; its
// errors are FUNCTION LOAD's replies (without "ERR ").
func (vm *VM) runLibrary(ctx context.Context, lib *Library) (regs []registration, err error) {
	fs := vm.functions()
	L := vm.L
	fs.envMeta.RawSetString("__index", fs.libAPI)
	fs.loading = &regs
	defer func() {
		fs.envMeta.RawSetString("__index", fs.runEnv)
		fs.loading = nil
		L.SetTop(0)
		if r := recover(); r != nil {
			vm.broken = true
			regs, err = nil, fmt.Errorf("Error registering functions: %v", r)
		}
	}()
	L.SetContext(ctx)
	defer L.RemoveContext()
	saved := L.Env
	L.Env = fs.env
	body := L.NewFunctionFromProto(lib.Proto)
	L.Env = saved
	L.Push(body)
	if perr := L.PCall(0, 0, nil); perr != nil {
		msg := loadErrorText(perr)
		if ctx.Err() != nil {
			msg = "ERR FUNCTION LOAD timeout"
		}
		return nil, fmt.Errorf("Error registering functions: %s", msg)
	}
	for _, r := range regs {
		r.fn.Lib = lib
	}
	return regs, nil
}

// loadErrorText is Redis's luaExtractErrorInformation message of an error
// raised by a library body: a string gets "ERR ", a table its err field.
func loadErrorText(err error) string {
	obj := lua.LValue(lua.LString(err.Error()))
	if ae, ok := err.(*lua.ApiError); ok {
		obj = ae.Object
	}
	if t, ok := obj.(*lua.LTable); ok {
		if s, ok := luaToString(t.RawGetString("err")); ok {
			return s
		}
		return "ERR unknown error"
	}
	return "ERR " + luaRuntimeMessages.Replace(quoteArgError(luaString(obj)))
}

// registerFunction is redis.register_function(name, callback) or
// redis.register_function{function_name=, callback=, flags=, description=}.
func (vm *VM) registerFunction(L *lua.LState) int {
	fs := vm.fn
	if fs == nil || fs.loading == nil {
		return raise(L, "redis.register_function can only be called on FUNCTION LOAD command")
	}
	f, cb, msg := readRegisterArgs(L)
	if msg != "" {
		return raise(L, msg)
	}
	if !validName(f.Name) {
		return raise(L, errBadName)
	}
	for _, r := range *fs.loading {
		if r.fn.Name == f.Name {
			return raise(L, "Function already exists in the library")
		}
	}
	*fs.loading = append(*fs.loading, registration{fn: f, cb: cb})
	return 0
}

func readRegisterArgs(L *lua.LState) (*Function, *lua.LFunction, string) {
	switch L.GetTop() {
	case 1:
		return readNamedArgs(L)
	case 2:
		name, ok := luaToString(L.Get(1))
		if !ok {
			return nil, nil, "first argument to redis.register_function must be a string"
		}
		cb, ok := L.Get(2).(*lua.LFunction)
		if !ok {
			return nil, nil, "second argument to redis.register_function must be a function"
		}
		return &Function{Name: name}, cb, ""
	}
	return nil, nil, "wrong number of arguments to redis.register_function"
}

func readNamedArgs(L *lua.LState) (*Function, *lua.LFunction, string) {
	t, ok := L.Get(1).(*lua.LTable)
	if !ok {
		return nil, nil, "calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments)."
	}
	f := &Function{}
	var cb *lua.LFunction
	named := false
	msg := ""
	t.ForEach(func(k, v lua.LValue) {
		if msg != "" {
			return
		}
		key, ok := luaToString(k)
		if !ok {
			msg = "named argument key given to redis.register_function is not a string"
			return
		}
		switch strings.ToLower(key) {
		case "function_name":
			if f.Name, ok = luaToString(v); !ok {
				msg = "function_name argument given to redis.register_function must be a string"
			}
			named = ok
		case "description":
			if f.Desc, ok = luaToString(v); !ok {
				msg = "description argument given to redis.register_function must be a string"
			}
			f.HasDesc = ok
		case "callback":
			if cb, ok = v.(*lua.LFunction); !ok {
				msg = "callback argument given to redis.register_function must be a function"
			}
		case "flags":
			ft, ok := v.(*lua.LTable)
			if !ok {
				msg = "flags argument to redis.register_function must be a table representing function flags"
				return
			}
			if f.Flags, ok = readFlags(ft); !ok {
				msg = "unknown flag given"
			}
		default:
			msg = "unknown argument given to redis.register_function"
		}
	})
	switch {
	case msg != "":
		return nil, nil, msg
	case !named:
		return nil, nil, "redis.register_function must get a function name argument"
	case cb == nil:
		return nil, nil, "redis.register_function must get a callback argument"
	}
	return f, cb, ""
}

// readFlags reads a flags table {'no-writes', ...} (its array part, up to
// the first nil; names are case-insensitive).
func readFlags(t *lua.LTable) (Flags, bool) {
	var flags Flags
	for i := 1; ; i++ {
		v := t.RawGetInt(i)
		if v == lua.LNil {
			return flags, true
		}
		s, ok := v.(lua.LString)
		if !ok {
			return 0, false
		}
		f, ok := flagNames[strings.ToLower(string(s))]
		if !ok {
			return 0, false
		}
		flags |= f
	}
}

// CallFunction runs fn (FCALL) with its keys and arguments, appending the
// reply as Run does. The first call of a library's function in this VM
// runs the library's body to get this VM's closures.
func (vm *VM) CallFunction(ctx context.Context, fn *Function, keys, args [][]byte, host Host, w *resp.Writer) {
	L := vm.L
	vm.ctx, vm.host, vm.runName, vm.resp = ctx, host, fn.Name, 2
	defer func() {
		vm.ctx, vm.host, vm.runName = nil, nil, ""
		L.SetTop(0)
	}()
	mark := len(w.B)
	defer func() {
		if r := recover(); r != nil {
			vm.broken = true
			w.B = w.B[:mark]
			w.Error("ERR Error running script " + fn.Name + ", " + trunc(fmt.Sprint(r), 100))
		}
	}()
	fs := vm.functions()
	cbs, ok := fs.libs[fn.Lib]
	if !ok {
		regs, err := vm.runLibrary(ctx, fn.Lib)
		if err != nil {
			w.Error("ERR " + err.Error())
			return
		}
		cbs = make(map[string]*lua.LFunction, len(regs))
		for _, r := range regs {
			cbs[r.fn.Name] = r.cb
		}
		fs.libs[fn.Lib] = cbs
	}
	cb := cbs[fn.Name]
	if cb == nil {
		w.Error("ERR Function not found")
		return
	}
	L.SetContext(ctx)
	defer L.RemoveContext()
	L.Push(cb)
	L.Push(vm.array(keys))
	L.Push(vm.array(args))
	if err := L.PCall(2, 1, vm.errFn); err != nil {
		vm.writeError(w, err)
		return
	}
	writeReply(w, L.Get(-1), vm.resp, 0)
}

// ForgetLibraries drops this VM's closures of libraries that are no longer
// loaded (FUNCTION DELETE, FLUSH, a REPLACE), keeping those in keep.
func (vm *VM) ForgetLibraries(keep func(*Library) bool) {
	if vm.fn == nil {
		return
	}
	for lib := range vm.fn.libs {
		if !keep(lib) {
			delete(vm.fn.libs, lib)
		}
	}
}
