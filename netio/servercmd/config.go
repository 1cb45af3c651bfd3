package servercmd

import (
	"errors"

	"github.com/slotd/slotd/netio"
	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/config"
)

// CONFIG GET|SET|RESETSTAT|REWRITE|HELP, backed by netio/config.
func registerConfig() {
	adm := []string{"admin", "noscript", "loading", "stale"}
	admCats := []string{"admin", "slow", "dangerous"}
	sub := func(arity int, summary string, h func(*netio.Ctx), tips ...string) *command.Spec {
		return netio.Loop(&command.Spec{Arity: arity, Flags: adm, Categories: admCats, Group: "server", Since: "2.0.0",
			Summary: summary, Tips: tips}, h)
	}
	rewrite := sub(2, "Rewrite the configuration file with the in memory configuration", configRewrite)
	rewrite.Since = "2.8.0"
	command.Register(&command.Spec{Name: "config", Arity: -2, Categories: []string{"slow"}, Group: "server",
		Since: "2.0.0", Summary: "A container for server configuration commands",
		Subcommands: map[string]*command.Spec{
			"get": sub(-3, "Get the values of configuration parameters", configGet),
			"set": sub(-4, "Set configuration parameters to the given values", configSet,
				"request_policy:all_nodes", "response_policy:all_succeeded"),
			"resetstat": sub(2, "Reset the stats returned by INFO", configResetStat),
			"rewrite":   rewrite,
			"help": netio.Loop(&command.Spec{Arity: 2, Flags: []string{"loading", "stale"}, Categories: []string{"slow"}, Group: "server",
				Since: "5.0.0", Summary: "Show helpful text about the different subcommands"}, configHelp),
		}})
}

// configGet answers a map of every matching directive (RESP2: a flat array
// of name, value pairs), each name once.
func configGet(x *netio.Ctx) {
	pats := make([]string, 0, len(x.Args)-2)
	for _, a := range x.Args[2:] {
		pats = append(pats, string(a))
	}
	kv := x.S.Cfg.Get(pats...)
	x.W.Map(len(kv))
	for _, p := range kv {
		x.W.BulkString(p[0])
		x.W.BulkString(p[1])
	}
}

// configSet applies name/value pairs atomically (all or none).
func configSet(x *netio.Ctx) {
	if (len(x.Args)-2)%2 != 0 {
		x.W.Error("ERR syntax error")
		return
	}
	pairs := make([][2]string, 0, (len(x.Args)-2)/2)
	for i := 2; i+1 < len(x.Args); i += 2 {
		pairs = append(pairs, [2]string{string(x.Args[i]), string(x.Args[i+1])})
	}
	if err := x.S.Cfg.SetFrom(x.ProtectedAllowed("enable-protected-configs"), pairs...); err != nil {
		x.W.Error(err.Error())
		return
	}
	x.W.OK()
}

func configResetStat(x *netio.Ctx) {
	x.S.ResetStats()
	x.W.OK()
}

// configRewrite rewrites the config file with the running values
// (config.Rewrite).
func configRewrite(x *netio.Ctx) {
	err := x.S.Cfg.Rewrite()
	switch {
	case err == nil:
		x.S.Log.Info().Msg("CONFIG REWRITE executed with success.")
		x.W.OK()
	case errors.Is(err, config.ErrNoConfigFile):
		x.W.Error("ERR " + err.Error())
	default:
		x.S.Log.Warn().Err(err).Msg("CONFIG REWRITE failed")
		x.W.Error("ERR Rewriting config file: " + err.Error())
	}
}

func configHelp(x *netio.Ctx) {
	netio.WriteHelp(x.W, "CONFIG", []string{
		"GET <pattern>",
		"    Return parameters matching the glob-like <pattern> and their values.",
		"SET <directive> <value>",
		"    Set the configuration <directive> to <value>.",
		"RESETSTAT",
		"    Reset statistics reported by the INFO command.",
		"REWRITE",
		"    Rewrite the configuration file.",
	})
}
