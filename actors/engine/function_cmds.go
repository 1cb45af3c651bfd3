package engine

import (
	"context"

	"github.com/slotd/slotd/actors/script"
	"github.com/slotd/slotd/netio/command"
)

// FCALL and FCALL_RO: calls of functions of the node's libraries (FUNCTION
// LOAD, in netio/funccmd). Like EVAL they are shard commands whose
// keys are the numkeys arguments, and run on the shard's script worker
// (script_run.go) in the shard's VM.

// ErrBusyFunction is the BUSY reply while a function runs.
const ErrBusyFunction = "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."

var specFcall, specFcallRO *command.Spec

func registerFunctionCmds() {
	mk := func(name, summary string, h Handler, flags ...string) *command.Spec {
		return Handle(&command.Spec{Name: name, Arity: -3, Flags: flags, Keys: evalKeys,
			Categories: []string{"slow", "scripting"}, Group: "scripting", Since: "7.0.0", Summary: summary,
			Exec: command.Shard, ScriptCache: true}, h)
	}
	specFcall = mk("fcall", "Invoke a function", func(c *Call) { c.fcall(false) },
		"noscript", "stale", "skip_monitor", "no_mandatory_keys")
	specFcallRO = mk("fcall_ro", "Invoke a read-only function", func(c *Call) { c.fcall(true) },
		"readonly", "noscript", "stale", "skip_monitor", "no_mandatory_keys")
	command.Register(specFcall, specFcallRO)
}

// RunningFunction is FUNCTION STATS's running_script.
type RunningFunction struct {
	Name       string
	Command    [][]byte // the FCALL's arguments
	DurationMS int64
}

func (c *Call) fcall(readOnly bool) {
	fn := c.S.group.Functions().Function(c.Args[1])
	if fn == nil {
		c.W.Error("ERR Function not found")
		return
	}
	if c.S.oomAtStart && denyOOMFlags(fn.Flags) {
		c.W.Error(ErrOOM)
		return
	}
	n, ok := c.numKeys("ERR Bad number of keys provided")
	if !ok {
		return
	}
	if readOnly && fn.Flags&script.FlagNoWrites == 0 {
		c.W.Error(errROWriteScript)
		return
	}
	if fn.Flags&script.FlagNoCluster != 0 && c.S.group.clusterMode() {
		c.W.Error(errNoCluster)
		return
	}
	readOnly = readOnly || fn.Flags&script.FlagNoWrites != 0
	keys, argv := c.Args[3:3+n], c.Args[3+n:]
	s := c.S
	cmd := make([][]byte, len(c.Args))
	for i, a := range c.Args {
		cmd[i] = append([]byte(nil), a...)
	}
	s.runLua(c, readOnly, fn.Flags&script.FlagAllowOOM != 0, &RunningFunction{Name: fn.Name, Command: cmd}, func(vm *script.VM, ctx context.Context, h script.Host) {
		libs := s.group.Functions()
		if gen := libs.Gen(); s.script.libGen != gen {
			vm.ForgetLibraries(libs.Loaded)
			s.script.libGen = gen
		}
		vm.CallFunction(ctx, fn, keys, argv, h, c.W)
	})
}
