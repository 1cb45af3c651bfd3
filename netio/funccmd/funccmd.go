// Package funccmd owns FUNCTION LOAD|DELETE|FLUSH|LIST|DUMP|RESTORE|
// STATS|KILL|HELP. They run on the event loop against the node's function
// registry (script.Libraries, held by the shard group); FCALL and FCALL_RO
// are shard commands (actors/engine). The wiring hands each server its
// node's Functions (Bind).
package funccmd

import (
	"strings"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/script"
	"github.com/slotd/slotd/netio"
	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/resp"
)

// Functions is the node's function registry and the functions running in
// its shards (actors/shard.Group).
type Functions interface {
	Functions() *script.Libraries
	RunningFunction() *engine.RunningFunction
	KillFunction() string
}

type extKey struct{}

// Bind gives srv's FUNCTION commands the node's functions.
func Bind(srv *netio.Server, f Functions) { srv.SetExt(extKey{}, f) }

func functions(x *netio.Ctx) Functions { return x.S.Ext(extKey{}).(Functions) }

func registerFunccmd() {
	sub := func(arity int, summary string, h func(*netio.Ctx), flags []string, tips ...string) *command.Spec {
		cats := []string{"slow", "scripting"}
		for _, f := range flags {
			if f == "write" {
				cats = append([]string{"write"}, cats...)
			}
		}
		return netio.Loop(&command.Spec{Arity: arity, Flags: flags, Categories: cats, Group: "scripting", Since: "7.0.0",
			Summary: summary, Tips: tips}, h)
	}
	all := []string{"request_policy:all_shards", "response_policy:all_succeeded"}
	command.Register(&command.Spec{Name: "function", Arity: -2, Categories: []string{"slow"}, Group: "scripting",
		Since: "7.0.0", Summary: "A container for function commands",
		Subcommands: map[string]*command.Spec{
			"load": sub(-3, "Create a function with the given arguments (name, code, description)", functionLoad,
				[]string{"write", "denyoom", "noscript"}, all...),
			"delete": sub(3, "Delete a function by name", functionDelete, []string{"write", "noscript"}, all...),
			"flush":  sub(-2, "Deleting all functions", functionFlush, []string{"write", "noscript"}, all...),
			"list": sub(-2, "List information about all the functions", functionList, []string{"noscript"},
				"nondeterministic_output_order"),
			"dump": sub(2, "Dump all functions into a serialized binary payload", functionDump, []string{"noscript"}),
			"restore": sub(-3, "Restore all the functions on the given payload", functionRestore,
				[]string{"write", "denyoom", "noscript"}, all...),
			"stats": sub(2, "Return information about the function currently running (name, description, duration)",
				functionStats, []string{"noscript", "allow_busy"}, "nondeterministic_output",
				"request_policy:all_shards", "response_policy:special"),
			"kill": sub(2, "Kill the function currently in execution.", functionKill, []string{"noscript", "allow_busy"},
				"request_policy:all_shards", "response_policy:one_succeeded"),
			"help": sub(2, "Show helpful text about the different subcommands", functionHelp,
				[]string{"loading", "stale"}),
		}})
}

func libs(x *netio.Ctx) *script.Libraries { return functions(x).Functions() }

// functionLoad is FUNCTION LOAD [REPLACE] <code>: the library's name.
func functionLoad(x *netio.Ctx) {
	replace := false
	i := 2
	for ; i < len(x.Args)-1; i++ {
		if !strings.EqualFold(string(x.Args[i]), "replace") {
			x.W.Error("ERR Unknown option given: " + string(x.Args[i]))
			return
		}
		replace = true
	}
	if i >= len(x.Args) {
		x.W.Error("ERR Function code is missing")
		return
	}
	name, err := libs(x).Load(string(x.Args[i]), replace)
	if err != nil {
		x.W.Error("ERR " + err.Error())
		return
	}
	x.W.BulkString(name)
}

func functionDelete(x *netio.Ctx) {
	if !libs(x).Delete(string(x.Args[2])) {
		x.W.Error("ERR Library not found")
		return
	}
	x.W.OK()
}

// functionFlush is FUNCTION FLUSH [ASYNC|SYNC]; both are the same here
// (the old libraries are left to the garbage collector).
func functionFlush(x *netio.Ctx) {
	if len(x.Args) > 3 {
		subcommandSyntax(x)
		return
	}
	if len(x.Args) == 3 && !strings.EqualFold(string(x.Args[2]), "sync") && !strings.EqualFold(string(x.Args[2]), "async") {
		x.W.Error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
		return
	}
	libs(x).Flush()
	x.W.OK()
}

// functionList is FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE].
func functionList(x *netio.Ctx) {
	withCode, pattern, named := false, "*", false
	for i := 2; i < len(x.Args); i++ {
		a := string(x.Args[i])
		switch {
		case !withCode && strings.EqualFold(a, "withcode"):
			withCode = true
		case !named && strings.EqualFold(a, "libraryname"):
			if i >= len(x.Args)-1 {
				x.W.Error("ERR library name argument was not given")
				return
			}
			i++
			pattern, named = string(x.Args[i]), true
		default:
			x.W.Error("ERR Unknown argument " + a)
			return
		}
	}
	list := libs(x).List(pattern)
	w := x.W
	w.Array(len(list))
	for _, lib := range list {
		if withCode {
			w.Map(4)
		} else {
			w.Map(3)
		}
		w.BulkString("library_name")
		w.BulkString(lib.Name)
		w.BulkString("engine")
		w.BulkString("LUA")
		w.BulkString("functions")
		w.Array(len(lib.Funcs))
		for _, f := range lib.Funcs {
			w.Map(3)
			w.BulkString("name")
			w.BulkString(f.Name)
			w.BulkString("description")
			if f.HasDesc {
				w.BulkString(f.Desc)
			} else {
				w.Null()
			}
			w.BulkString("flags")
			writeFlags(w, f.Flags)
		}
		if withCode {
			w.BulkString("library_code")
			w.BulkString(lib.Code)
		}
	}
}

// writeFlags writes a function's flags as a set of status strings, in
// Redis's order.
func writeFlags(w *resp.Writer, flags script.Flags) {
	names := script.FlagList(flags)
	w.Set(len(names))
	for _, n := range names {
		w.Simple(n)
	}
}

func functionDump(x *netio.Ctx) {
	x.W.Bulk(libs(x).Dump(x.S.Cfg.Bool("rdbcompression")))
}

// functionRestore is FUNCTION RESTORE <payload> [FLUSH|APPEND|REPLACE].
func functionRestore(x *netio.Ctx) {
	if len(x.Args) > 4 {
		subcommandSyntax(x)
		return
	}
	policy := script.RestoreAppend
	if len(x.Args) == 4 {
		switch strings.ToLower(string(x.Args[3])) {
		case "append":
		case "replace":
			policy = script.RestoreReplace
		case "flush":
			policy = script.RestoreFlush
		default:
			x.W.Error("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.")
			return
		}
	}
	if err := libs(x).Restore(x.Args[2], policy); err != nil {
		x.W.Error("ERR " + err.Error())
		return
	}
	x.W.OK()
}

// functionStats reports the running function, if any, and the engine's
// library and function counts.
func functionStats(x *netio.Ctx) {
	w := x.W
	w.Map(2)
	w.BulkString("running_script")
	if r := functions(x).RunningFunction(); r != nil {
		w.Map(3)
		w.BulkString("name")
		w.BulkString(r.Name)
		w.BulkString("command")
		w.Array(len(r.Command))
		for _, a := range r.Command {
			w.Bulk(a)
		}
		w.BulkString("duration_ms")
		w.Int(r.DurationMS)
	} else {
		w.Null()
	}
	w.BulkString("engines")
	w.Map(1)
	w.BulkString("LUA")
	nl, nf := libs(x).Counts()
	w.Map(2)
	w.BulkString("libraries_count")
	w.Int(int64(nl))
	w.BulkString("functions_count")
	w.Int(int64(nf))
}

func functionKill(x *netio.Ctx) {
	if msg := functions(x).KillFunction(); msg != "" {
		x.W.Error(msg)
		return
	}
	x.W.OK()
}

func subcommandSyntax(x *netio.Ctx) {
	x.W.Error("ERR unknown subcommand or wrong number of arguments for '" + string(x.Args[1]) +
		"'. Try FUNCTION HELP.")
}

var helpLines = []string{
	"FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"LOAD [REPLACE] <FUNCTION CODE>",
	"    Create a new library with the given library name and code.",
	"DELETE <LIBRARY NAME>",
	"    Delete the given library.",
	"LIST [LIBRARYNAME PATTERN] [WITHCODE]",
	"    Return general information on all the libraries:",
	"    * Library name",
	"    * The engine used to run the Library",
	"    * Library description",
	"    * Functions list",
	"    * Library code (if WITHCODE is given)",
	"    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
	"STATS",
	"    Return information about the current function running:",
	"    * Function name",
	"    * Command used to run the function",
	"    * Duration in MS that the function is running",
	"    If no function is running, return nil",
	"    In addition, returns a list of available engines.",
	"KILL",
	"    Kill the current running function.",
	"FLUSH [ASYNC|SYNC]",
	"    Delete all the libraries.",
	"    When called without the optional mode argument, the behavior is determined by the",
	"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
	"    * ASYNC: Asynchronously flush the libraries.",
	"    * SYNC: Synchronously flush the libraries.",
	"DUMP",
	"    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
	"RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
	"    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
	"    control how to handle existing libraries (default APPEND):",
	"    * FLUSH: delete all existing libraries.",
	"    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
	"    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
	"      libraries with the new libraries (notice that even on this option there is a chance of failure",
	"      in case of functions name collision with another library).",
	"HELP",
	"    Prints this help.",
}

func functionHelp(x *netio.Ctx) {
	x.W.Array(len(helpLines))
	for _, l := range helpLines {
		x.W.Simple(l)
	}
}
