package script

import (
	"context"
	"errors"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// A script's memory budget (script-memory-limit).
//
// Redis's Lua allocates through its own allocator; a script that asks for
// more than the machine has fails with Lua's "not enough memory" and the
// server lives on. Go has no such failure: an allocation past the machine
// ends the process. So a script gets a budget, and running past it fails
// the script with that same error ("ERR Error running script <sha>, not
// enough memory"), which pcall can catch as in Lua:
//   - string.rep, the one library call that multiplies its input, checks
//     its result's size against the budget before building it;
//   - what a script grows step by step (tables, concatenation, coroutines)
//     is watched from outside: the shard actor compares the heap with what
//     it was when the script started and cancels the script's context with
//     ErrNoMemory (actors/shard), which the interpreter checks before every
//     instruction.

// ErrNoMemory is the cause a script's context is cancelled with when the
// script ran past its memory budget.
var ErrNoMemory = errors.New("not enough memory")

// noMemoryMsg is Lua's message for a failed allocation.
const noMemoryMsg = "not enough memory"

// SetMemoryLimit sets the budget string.rep checks against (bytes; 0: no
// limit). The shard sets it before each run.
func (vm *VM) SetMemoryLimit(n int64) { vm.memLimit = n }

// noMemory raises Lua's memory error: the message handler turns it into
// the reply Redis gives for LUA_ERRMEM, pcall into its message.
func (vm *VM) noMemory(L *lua.LState) {
	L.Error(vm.oom, 0)
}

// outOfMemory reports whether err (a message handler's argument) is the
// memory error: raised by noMemory, or the context cancelled for the
// budget.
func (vm *VM) outOfMemory(obj lua.LValue) bool {
	if obj == vm.oom {
		return true
	}
	if vm.ctx != nil && vm.ctx.Err() != nil {
		return errors.Is(context.Cause(vm.ctx), ErrNoMemory)
	}
	return false
}

// strRep is string.rep with the result's size checked first.
func (vm *VM) strRep(L *lua.LState) int {
	s := checkString(L, 1)
	n := L.CheckInt(2)
	if n <= 0 || s == "" {
		L.Push(lua.LString(""))
		return 1
	}
	if vm.memLimit > 0 && int64(len(s)) > vm.memLimit/int64(n) {
		vm.noMemory(L)
	}
	if uint64(len(s))*uint64(n) > maxAlloc {
		vm.noMemory(L)
	}
	L.Push(lua.LString(strings.Repeat(s, n)))
	return 1
}

// maxAlloc bounds string.rep without a budget: Go's largest allocation.
const maxAlloc = 1 << 47
