package engine

import (
	"github.com/slotd/slotd/actors/script"
	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/resp"
)

// Scripting: EVAL, EVALSHA, EVAL_RO and EVALSHA_RO. They are shard
// commands whose keys are the numkeys arguments, so a script runs inside
// the actor that owns its keys' slot and is atomic like any other command
// there; a script with no keys runs in the actor of slot 0. The script
// itself runs off the event loop (see script_run.go), and the commands it
// calls run in the same actor (script_host.go). SCRIPT LOAD|EXISTS|FLUSH|
// KILL are loop commands (netio/scriptcmd).

// Reply texts of Redis 7.0.
const (
	ErrNoScript      = "NOSCRIPT No matching script. Please use EVAL."
	ErrBusy          = command.ErrBusyScript
	errNumKeysMany   = "ERR Number of keys can't be greater than number of args"
	errNumKeysNeg    = "ERR Number of keys can't be negative"
	errROWriteScript = "ERR Can not execute a script with write flag using *_ro command."
	errNoCluster     = "ERR Can not run script on cluster, 'no-cluster' flag is set."
)

var specEval, specEvalSHA, specEvalRO, specEvalSHARO *command.Spec

func registerScriptCmds() {
	mk := func(name, summary, since string, h Handler, flags ...string) *command.Spec {
		return Handle(&command.Spec{Name: name, Arity: -3, Flags: flags, Keys: evalKeys,
			Categories: []string{"slow", "scripting"}, Group: "scripting", Since: since, Summary: summary,
			Exec: command.Shard, ScriptCache: true}, h)
	}
	specEval = mk("eval", "Execute a Lua script server side", "2.6.0", cmdEval,
		"noscript", "stale", "skip_monitor", "no_mandatory_keys")
	specEvalSHA = mk("evalsha", "Execute a Lua script server side", "2.6.0", cmdEvalSHA,
		"noscript", "stale", "skip_monitor", "no_mandatory_keys")
	specEvalRO = mk("eval_ro", "Execute a read-only Lua script server side", "7.0.0", cmdEvalRO,
		"readonly", "noscript", "stale", "skip_monitor", "no_mandatory_keys")
	specEvalSHARO = mk("evalsha_ro", "Execute a read-only Lua script server side", "7.0.0", cmdEvalSHARO,
		"readonly", "noscript", "stale", "skip_monitor", "no_mandatory_keys")
	// A script that declares flags writes unless it says no-writes: on a
	// replica it is redirected like any write, before it runs (Redis's
	// evalGetCommandFlags; a body without a shebang keeps EVAL's flags).
	specEval.WriteFor = func(args [][]byte) bool {
		f, ok := script.ShebangFlags(args[1])
		return ok && f&script.FlagNoWrites == 0
	}
	command.Register(specEval, specEvalSHA, specEvalRO, specEvalSHARO)
}

// evalKeys: the numkeys keys after the script. A bad numkeys declares no
// keys; the handler then replies with the error, as Redis does (so inside
// MULTI the error comes with EXEC, not when queueing).
func evalKeys(args [][]byte) ([]int, error) {
	n, ok := resp.ParseInt(args[2])
	if !ok || n <= 0 || n > int64(len(args)-3) {
		return nil, nil
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = 3 + i
	}
	return idx, nil
}

// numKeys reads the numkeys argument of EVAL and FCALL; notInt is the
// reply when it is not a number.
func (c *Call) numKeys(notInt string) (int64, bool) {
	n, ok := resp.ParseInt(c.Args[2])
	switch {
	case !ok:
		c.W.Error(notInt)
	case n > int64(len(c.Args)-3):
		c.W.Error(errNumKeysMany)
	case n < 0:
		c.W.Error(errNumKeysNeg)
	default:
		return n, true
	}
	return 0, false
}

// scriptDeniesOOM reports whether the EVAL's script declares flags without
// no-writes or allow-oom: such a script is refused over maxmemory before
// it runs, as a denyoom command (Redis's evalGetCommandFlags). A script
// without a shebang, or an unknown SHA, is not.
func (c *Call) scriptDeniesOOM(cache *script.Cache, bySHA bool) bool {
	if bySHA {
		sc := cache.Get(c.Args[1])
		return sc != nil && sc.Shebang && denyOOMFlags(sc.Flags)
	}
	f, ok := script.ShebangFlags(c.Args[1])
	return ok && denyOOMFlags(f)
}

// denyOOMFlags: flags that neither say no-writes nor allow-oom.
func denyOOMFlags(f script.Flags) bool { return f&(script.FlagNoWrites|script.FlagAllowOOM) == 0 }

func isScriptSpec(s *command.Spec) bool {
	return s != nil && (s == specEval || s == specEvalSHA || s == specEvalRO || s == specEvalSHARO ||
		s == specFcall || s == specFcallRO)
}

func cmdEval(c *Call)      { c.eval(false, false) }
func cmdEvalSHA(c *Call)   { c.eval(true, false) }
func cmdEvalRO(c *Call)    { c.eval(false, true) }
func cmdEvalSHARO(c *Call) { c.eval(true, true) }

// eval runs EVAL-family commands: checks numkeys, finds or compiles the
// script, then runs it in this shard's VM.
func (c *Call) eval(bySHA, readOnly bool) {
	cache := c.S.group.Scripts()
	if c.S.oomAtStart && c.scriptDeniesOOM(cache, bySHA) {
		c.W.Error(ErrOOM)
		return
	}
	n, ok := c.numKeys(ErrNotInt)
	if !ok {
		return
	}
	var sc *script.Script
	if bySHA {
		if sc = cache.Get(c.Args[1]); sc == nil {
			c.W.Error(ErrNoScript)
			return
		}
	} else {
		var err error
		if sc, err = cache.Load(c.Args[1]); err != nil {
			c.W.Error(err.Error())
			return
		}
	}
	if sc.Shebang {
		if readOnly && sc.Flags&script.FlagNoWrites == 0 {
			c.W.Error(errROWriteScript)
			return
		}
		if sc.Flags&script.FlagNoCluster != 0 && c.S.group.clusterMode() {
			c.W.Error(errNoCluster)
			return
		}
		readOnly = readOnly || sc.Flags&script.FlagNoWrites != 0
	}
	keys := c.Args[3 : 3+n]
	argv := c.Args[3+n:]
	c.S.runScript(c, sc, keys, argv, readOnly)
}
