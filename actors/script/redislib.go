package script

import (
	lua "github.com/yuin/gopher-lua"
)

// The redis.* API of Redis 7.0.

func (vm *VM) newRedisLib() *lua.LTable {
	L := vm.L
	t := vm.newLib(map[string]lua.LGFunction{
		"call":               func(L *lua.LState) int { return vm.redisCall(L, true) },
		"pcall":              func(L *lua.LState) int { return vm.redisCall(L, false) },
		"error_reply":        redisErrorReply,
		"status_reply":       redisStatusReply,
		"sha1hex":            redisSHA1Hex,
		"log":                vm.redisLog,
		"setresp":            vm.redisSetResp,
		"set_repl":           redisSetRepl,
		"replicate_commands": func(L *lua.LState) int { L.Push(lua.LTrue); return 1 },
		"breakpoint":         func(L *lua.LState) int { L.Push(lua.LFalse); return 1 },
		"debug":              func(L *lua.LState) int { return 0 },
		"acl_check_cmd":      vm.redisACLCheckCmd,
	})
	for name, v := range map[string]lua.LValue{
		"LOG_DEBUG": lua.LNumber(LogDebug), "LOG_VERBOSE": lua.LNumber(LogVerbose),
		"LOG_NOTICE": lua.LNumber(LogNotice), "LOG_WARNING": lua.LNumber(LogWarning),
		"REPL_NONE": lua.LNumber(0), "REPL_AOF": lua.LNumber(1), "REPL_SLAVE": lua.LNumber(2),
		"REPL_REPLICA": lua.LNumber(2), "REPL_ALL": lua.LNumber(3),
		"REDIS_VERSION": lua.LString(Version), "REDIS_VERSION_NUM": lua.LNumber(VersionNum),
	} {
		t.RawSetString(name, v)
	}
	_ = L
	return t
}

// raise fails the current redis.* function with an {err=} table, which the
// script's error handler completes with the position.
func raise(L *lua.LState, msg string) int {
	L.Error(errorTable(L, msg, false), 0)
	return 0
}

// callArgs converts the Lua arguments of redis.call into command
// arguments: strings as they are, numbers in "%.17g" (Lua's own format
// would lose precision). Anything else is refused.
func (vm *VM) callArgs(L *lua.LState) ([][]byte, string) {
	n := L.GetTop()
	if n == 0 {
		return nil, "Please specify at least one argument for this redis lib call"
	}
	buf, ends := vm.argBuf[:0], vm.ends[:0]
	for i := 1; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			buf = append(buf, v...)
		case lua.LNumber:
			buf = append(buf, formatDouble(float64(v))...)
		default:
			return nil, "Lua redis lib command arguments must be strings or integers"
		}
		ends = append(ends, len(buf))
	}
	args := vm.args[:0]
	start := 0
	for _, e := range ends {
		args = append(args, buf[start:e:e])
		start = e
	}
	vm.argBuf, vm.ends, vm.args = buf, ends, args
	return args, ""
}

// redisCall is redis.call (raise) and redis.pcall.
func (vm *VM) redisCall(L *lua.LState, raiseErr bool) int {
	if vm.host == nil {
		return raise(L, "redis.call/pcall can only be called inside a script invocation")
	}
	args, msg := vm.callArgs(L)
	L.SetTop(0)
	if msg == "" {
		vm.w.B = vm.w.B[:0]
		vm.w.Proto = vm.resp
		msg = vm.host.Call(args, &vm.w)
	}
	if msg != "" {
		t := errorTable(L, msg, true)
		if raiseErr {
			L.Error(t, 0)
		}
		L.Push(t)
		return 1
	}
	v, _ := parseReply(L, vm.w.B)
	if raiseErr && len(vm.w.B) > 0 && vm.w.B[0] == '-' {
		L.Error(v, 0)
	}
	if cap(vm.w.B) > 1<<20 {
		vm.w.B = nil
	}
	L.Push(v)
	return 1
}

// redisErrorReply is redis.error_reply(msg): an {err=} table, "ERR"
// prefixed when msg has no code of its own... unless msg has a space, in
// which case its first word is the code (Redis's rule).
func redisErrorReply(L *lua.LState) int {
	s, ok := L.Get(1).(lua.LString)
	if L.GetTop() != 1 || !ok {
		L.Push(errorTable(L, "wrong number or type of arguments", false))
		return 1
	}
	msg := string(s)
	if len(msg) == 0 || msg[0] != '-' {
		msg = "-" + msg
	}
	L.Push(errorTable(L, msg, false))
	return 1
}

func redisStatusReply(L *lua.LState) int {
	s, ok := L.Get(1).(lua.LString)
	if L.GetTop() != 1 || !ok {
		L.Push(errorTable(L, "wrong number or type of arguments", false))
		return 1
	}
	t := L.CreateTable(0, 1)
	t.RawSetString("ok", s)
	L.Push(t)
	return 1
}

func redisSHA1Hex(L *lua.LState) int {
	if L.GetTop() != 1 {
		return raise(L, "wrong number of arguments")
	}
	s, _ := luaToString(L.Get(1))
	L.Push(lua.LString(SHA1Hex([]byte(s))))
	return 1
}

// toNumber is lua_tonumber: numbers and numeric strings (decimal or 0x
// hex, surrounding spaces allowed).
func toNumber(v lua.LValue) (float64, bool) {
	switch v := v.(type) {
	case lua.LNumber:
		return float64(v), true
	case lua.LString:
		return str2d(string(v))
	}
	return 0, false
}

func (vm *VM) redisLog(L *lua.LState) int {
	argc := L.GetTop()
	if argc < 2 {
		return raise(L, "redis.log() requires two arguments or more.")
	}
	lvl, ok := toNumber(L.Get(1))
	if !ok {
		return raise(L, "First argument must be a number (log level).")
	}
	level := int(lvl)
	if level < LogDebug || level > LogWarning {
		return raise(L, "Invalid debug level.")
	}
	var msg []byte
	for j := 1; j < argc; j++ {
		if s, ok := luaToString(L.Get(j + 1)); ok {
			if j != 1 {
				msg = append(msg, ' ')
			}
			msg = append(msg, s...)
		}
	}
	if vm.host != nil {
		vm.host.Log(level, string(msg))
	}
	return 0
}

func (vm *VM) redisSetResp(L *lua.LState) int {
	if vm.host == nil {
		return raise(L, "redis.setresp can only be called inside a script invocation")
	}
	if L.GetTop() != 1 {
		return raise(L, "redis.setresp() requires one argument.")
	}
	n, _ := toNumber(L.Get(1))
	if r := int(n); r == 2 || r == 3 {
		vm.resp = r
		return 0
	}
	return raise(L, "RESP version must be 2 or 3.")
}

// redisSetRepl checks its argument like Redis 7.0; effects replication is
// the only mode slotd has, so the flags change nothing.
func redisSetRepl(L *lua.LState) int {
	if L.GetTop() != 1 {
		return raise(L, "redis.set_repl() requires two arguments.")
	}
	n, _ := toNumber(L.Get(1))
	if int(n)&^3 != 0 {
		return raise(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.")
	}
	return 0
}

// redisACLCheckCmd is redis.acl_check_cmd: slotd has no ACL users beyond
// the default one, who may run every command.
func (vm *VM) redisACLCheckCmd(L *lua.LState) int {
	if vm.host == nil {
		return raise(L, "redis.acl_check_cmd can only be called inside a script invocation")
	}
	args, msg := vm.callArgs(L)
	if msg != "" {
		return raise(L, msg)
	}
	if !vm.host.Known(args) {
		return raise(L, "Invalid command passed to redis.acl_check_cmd()")
	}
	L.Push(lua.LTrue)
	return 1
}
