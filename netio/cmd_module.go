package netio

import (
	"strconv"

	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/resp"
)

// MODULE and LOLWUT as Redis 7.0 answers them. slotd loads no Redis
// modules: MODULE LIST is empty, MODULE LOAD and LOADEX fail as a module
// that cannot be loaded fails in Redis (logged, "Error loading the
// extension"), MODULE UNLOAD finds no module. LOAD, LOADEX and UNLOAD are
// protected by enable-module-command, as in Redis.

const errModuleDisabled = "ERR MODULE command not allowed. If the enable-module-command option is set to \"local\", " +
	"you can run it from a local connection, otherwise you need to set this option in the configuration file, " +
	"and then restart the server."

func registerCmdModule() {
	adm := []string{"admin", "noscript", "no_async_loading"}
	sub := func(arity int, flags []string, since, summary string, h func(*Ctx), tips ...string) *command.Spec {
		return Loop(&command.Spec{Arity: arity, Flags: flags, Group: "server", Since: since, Summary: summary,
			Tips: tips}, h)
	}
	command.Register(&command.Spec{Name: "module", Arity: -2, Group: "server", Since: "4.0.0",
		Summary: "A container for module commands",
		Subcommands: map[string]*command.Spec{
			"help": sub(2, []string{"loading", "stale"}, "5.0.0", "Show helpful text about the different subcommands",
				moduleHelp),
			"list": sub(2, []string{"admin", "noscript"}, "4.0.0", "List all modules loaded by the server",
				func(x *Ctx) { x.W.Array(0) }, "nondeterministic_output_order"),
			"load":   sub(-3, adm, "4.0.0", "Load a module", moduleLoad),
			"loadex": sub(-3, adm, "7.0.0", "Load a module with extended parameters", moduleLoad),
			"unload": sub(3, adm, "4.0.0", "Unload a module", moduleUnload),
		}})
	command.Register(Loop(&command.Spec{Name: "lolwut", Arity: -1, Flags: []string{"readonly", "fast"},
		Group: "server", Since: "5.0.0", Summary: "Display some computer art and the Redis version"}, cmdLolwut))
}

func moduleHelp(x *Ctx) {
	WriteHelp(x.W, "MODULE", []string{
		"LIST", "    Return a list of loaded modules.",
		"LOAD <path> [<arg> ...]", "    Load a module library from <path>, passing to it any optional arguments.",
		"LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
		"    Load a module library from <path>, while passing it module configurations and optional arguments.",
		"UNLOAD <name>", "    Unload a module.",
	})
}

func moduleLoad(x *Ctx) {
	if !x.protectedAllowed("enable-module-command") {
		x.W.Error(errModuleDisabled)
		return
	}
	x.S.Log.Warn().Msgf("Module %s failed to load: slotd does not load Redis modules", x.Args[2])
	x.W.Error("ERR Error loading the extension. Please check the server logs.")
}

func moduleUnload(x *Ctx) {
	if !x.protectedAllowed("enable-module-command") {
		x.W.Error(errModuleDisabled)
		return
	}
	x.W.Error("ERR Error unloading module: no such module with that name")
}

// ProtectedAllowed applies an enable-* directive (no, yes, local) as Redis
// does for protected commands and configs: local allows loopback clients.
func (x *Ctx) ProtectedAllowed(directive string) bool { return x.protectedAllowed(directive) }

func (x *Ctx) protectedAllowed(directive string) bool {
	switch x.S.Cfg.String(directive) {
	case "yes":
		return true
	case "local":
		return localClient(x.C.addr)
	}
	return false
}

// cmdLolwut is LOLWUT [VERSION v]: the version line Redis 7.0 shows. The
// computer art of VERSION 5 and 6 (random drawings) is not drawn.
func cmdLolwut(x *Ctx) {
	v := redisVersion
	if len(x.Args) >= 3 && ArgIs(x.Args[1], "version") {
		n, ok := resp.ParseInt(x.Args[2])
		if !ok {
			x.W.Error("ERR value is not an integer or out of range")
			return
		}
		v = strconv.FormatUint(uint64(uint32(n)), 10) + ".0.0"
	}
	if len(v) > 2 && v[1] == '.' && (v[0] == '5' && v[2] != '9' || v[0] == '4' && v[2] == '9' ||
		v[0] == '6' && v[2] != '9' || v[0] == '5' && v[2] == '9') {
		x.W.Error("ERR LOLWUT VERSION " + v[:1] + " (computer art) is not available in slotd")
		return
	}
	x.W.Verbatim("Redis ver. " + redisVersion + "\n")
}
