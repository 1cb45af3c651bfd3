// Package scriptcmd owns SCRIPT LOAD|EXISTS|FLUSH|KILL|DEBUG|HELP. They
// run on the event loop: they only touch the node's script cache, and
// SCRIPT KILL must be answered while a shard actor is busy with a script.
// The wiring hands each server its node's Scripting (Bind).
package scriptcmd

import (
	"strings"

	"github.com/slotd/slotd/actors/script"
	"github.com/slotd/slotd/netio"
	"github.com/slotd/slotd/netio/command"
)

// Scripting is the node's script cache and SCRIPT KILL (actors/shard.Group).
type Scripting interface {
	Scripts() *script.Cache
	KillScripts() string
}

type extKey struct{}

// Bind gives srv's SCRIPT commands the node's scripting.
func Bind(srv *netio.Server, s Scripting) { srv.SetExt(extKey{}, s) }

func scripting(x *netio.Ctx) Scripting { return x.S.Ext(extKey{}).(Scripting) }

func registerScriptcmd() {
	sub := func(arity int, summary, since string, h func(*netio.Ctx), flags []string, tips ...string) *command.Spec {
		return netio.Loop(&command.Spec{Arity: arity, Flags: flags, Categories: []string{"slow", "scripting"},
			Group: "scripting", Since: since, Summary: summary, Tips: tips}, h)
	}
	command.Register(&command.Spec{Name: "script", Arity: -2, Categories: []string{"slow"}, Group: "scripting",
		Since: "2.6.0", Summary: "A container for Lua scripts management commands",
		Subcommands: map[string]*command.Spec{
			"load": sub(3, "Load the specified Lua script into the script cache.", "2.6.0", scriptLoad,
				[]string{"noscript", "stale"}, "request_policy:all_nodes", "response_policy:all_succeeded"),
			"exists": sub(-3, "Check existence of scripts in the script cache.", "2.6.0", scriptExists,
				[]string{"noscript"}, "request_policy:all_shards", "response_policy:agg_logical_and"),
			"flush": sub(-2, "Remove all the scripts from the script cache.", "2.6.0", scriptFlush,
				[]string{"noscript"}, "request_policy:all_nodes", "response_policy:all_succeeded"),
			"kill": sub(2, "Kill the script currently in execution.", "2.6.0", scriptKill,
				[]string{"noscript", "allow_busy"}, "request_policy:all_shards", "response_policy:one_succeeded"),
			"debug": sub(3, "Set the debug mode for executed scripts.", "3.2.0", scriptDebug,
				[]string{"noscript"}),
			"help": sub(2, "Show helpful text about the different subcommands", "5.0.0", scriptHelp,
				[]string{"loading", "stale"}),
		}})
}

func scriptLoad(x *netio.Ctx) {
	sc, err := scripting(x).Scripts().Load(x.Args[2])
	if err != nil {
		x.W.Error(err.Error())
		return
	}
	x.W.BulkString(sc.SHA)
}

func scriptExists(x *netio.Ctx) {
	cache := scripting(x).Scripts()
	x.W.Array(len(x.Args) - 2)
	for _, sha := range x.Args[2:] {
		if cache.Exists(sha) {
			x.W.Int(1)
		} else {
			x.W.Int(0)
		}
	}
}

// scriptFlush empties the cache; ASYNC and SYNC are the same here (the old
// map is left to the garbage collector).
func scriptFlush(x *netio.Ctx) {
	if len(x.Args) > 3 || (len(x.Args) == 3 && !strings.EqualFold(string(x.Args[2]), "async") &&
		!strings.EqualFold(string(x.Args[2]), "sync")) {
		x.W.Error("ERR SCRIPT FLUSH only support SYNC|ASYNC option")
		return
	}
	scripting(x).Scripts().Flush()
	x.W.OK()
}

func scriptKill(x *netio.Ctx) {
	if msg := scripting(x).KillScripts(); msg != "" {
		x.W.Error(msg)
		return
	}
	x.W.OK()
}

// scriptDebug accepts NO; the Lua debugger (YES, SYNC) is not available.
func scriptDebug(x *netio.Ctx) {
	switch strings.ToLower(string(x.Args[2])) {
	case "no":
		x.W.OK()
	case "yes", "sync":
		x.W.Error("ERR The Lua debugger (SCRIPT DEBUG YES|SYNC) is not supported by this server")
	default:
		x.W.Error("ERR Use SCRIPT DEBUG YES/SYNC/NO")
	}
}

var helpLines = []string{
	"SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"DEBUG (YES|SYNC|NO)",
	"    Set the debug mode for subsequent scripts executed.",
	"EXISTS <sha1> [<sha1> ...]",
	"    Return information about the existence of the scripts in the script cache.",
	"FLUSH [ASYNC|SYNC]",
	"    Flush the Lua scripts cache. Very dangerous on replicas.",
	"    When called without the optional mode argument, the behavior is determined by the",
	"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
	"    * ASYNC: Asynchronously flush the scripts cache.",
	"    * SYNC: Synchronously flush the scripts cache.",
	"KILL",
	"    Kill the currently executing Lua script.",
	"LOAD <script>",
	"    Load a script into the scripts cache without executing it.",
	"HELP",
	"    Prints this help.",
}

func scriptHelp(x *netio.Ctx) {
	x.W.Array(len(helpLines))
	for _, l := range helpLines {
		x.W.Simple(l)
	}
}
