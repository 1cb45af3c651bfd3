package netio

import (
	"github.com/slotd/slotd/netio/command"
)

// Flags, categories and summaries follow Redis 7.0's COMMAND INFO/DOCS.
func registerCmdBasic() {
	command.Register(
		Loop(&command.Spec{Name: "ping", Arity: -1, Flags: []string{"fast", "sentinel"}, Categories: []string{"fast", "connection"},
			Tips: []string{"request_policy:all_shards", "response_policy:all_succeeded"}, Group: "connection", Since: "1.0.0",
			Summary: "Ping the server"}, cmdPing),
		Loop(&command.Spec{Name: "echo", Arity: 2, Flags: []string{"loading", "stale", "fast"}, Categories: []string{"fast", "connection"},
			Group: "connection", Since: "1.0.0", Summary: "Echo the given string"}, cmdEcho),
		Loop(&command.Spec{Name: "quit", Arity: -1, Flags: []string{"allow_busy", "noscript", "loading", "stale", "fast", "no_auth"},
			Categories: []string{"fast", "connection"}, Group: "connection", Since: "1.0.0",
			Summary: "Close the connection"}, cmdQuit),
	)
}

func cmdPing(x *Ctx) {
	if len(x.Args) > 2 {
		x.W.Error("ERR wrong number of arguments for 'ping' command")
		return
	}
	if pingSubscribed(x) {
		return
	}
	if len(x.Args) == 2 {
		x.W.Bulk(x.Args[1])
		return
	}
	x.W.Simple("PONG")
}

func cmdEcho(x *Ctx) { x.W.Bulk(x.Args[1]) }

// cmdQuit answers +OK and closes the connection once every earlier reply
// has been written.
func cmdQuit(x *Ctx) {
	x.W.OK()
	x.C.closing = true
}
