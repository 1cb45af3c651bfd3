package netio

import (
	"math"
	"time"

	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/resp"
)

// SLOWLOG GET [count] / LEN / RESET / HELP, as Redis 7.0. Loop commands are
// logged here (a deferred one, such as DEBUG SLEEP, when its reply is
// complete), keyed commands by the shard actor that ran them; EXEC itself is
// not logged (skip_slowlog), the commands it ran are.

func registerCmdSlowlog() {
	sub := func(arity int, flags []string, summary string, h func(*Ctx), tips ...string) *command.Spec {
		return Loop(&command.Spec{Arity: arity, Flags: flags, Group: "server", Since: "2.2.12", Summary: summary,
			Tips: tips}, h)
	}
	adm := []string{"admin", "loading", "stale"}
	command.Register(&command.Spec{Name: "slowlog", Arity: -2, Group: "server", Since: "2.2.12",
		Summary: "A container for slow log commands",
		Subcommands: map[string]*command.Spec{
			"get": sub(-2, adm, "Get the slow log's entries", slowlogGet, "request_policy:all_nodes",
				"nondeterministic_output"),
			"len": sub(2, adm, "Get the slow log's length", slowlogLen, "request_policy:all_nodes",
				"response_policy:agg_sum", "nondeterministic_output"),
			"reset": sub(2, adm, "Clear all entries from the slow log", slowlogReset, "request_policy:all_nodes",
				"response_policy:all_succeeded"),
			"help": sub(2, []string{"loading", "stale"}, "Show helpful text about the different subcommands", slowlogHelp),
		}})
}

// PeerAddr implements batch.Peer.
func (cl *client) PeerAddr() string { return cl.addr }

// PeerName implements batch.Peer.
func (cl *client) PeerName() string {
	if n := cl.name.Load(); n != nil {
		return *n
	}
	return ""
}

// slowLoop logs a loop command that took us µs.
func (s *Server) slowLoop(cl *client, spec *command.Spec, args [][]byte, us int64) {
	if s.slowlog.Wants(us) && !spec.Is("skip_slowlog") {
		s.slowlog.Add(args, us, time.Now().Unix(), cl.PeerAddr(), cl.PeerName())
	}
}

// slowDeferred logs a deferred loop command once d is done.
// Its latency (histogram and LATENCY event) is recorded then too, as Redis
// records a command that blocked its thread for that long.
func (s *Server) slowDeferred(cl *client, spec *command.Spec, args [][]byte, t0 time.Time, d *Deferred) {
	if s.slowlog.SlowerThan.Load() < 0 || spec.Is("skip_slowlog") {
		d.slow = func() { s.loopLatency(spec, time.Since(t0).Nanoseconds()) }
		return
	}
	saved := copyArgs(args) // the read buffer is reused
	addr, name := cl.PeerAddr(), cl.PeerName()
	d.slow = func() {
		ns := time.Since(t0).Nanoseconds()
		s.loopLatency(spec, ns)
		s.slowlog.Add(saved, ns/1000, time.Now().Unix(), addr, name)
	}
}

func slowlogGet(x *Ctx) {
	if len(x.Args) > 3 {
		x.W.Error("ERR unknown subcommand or wrong number of arguments for '" + Trunc(string(x.Args[1]), 128) +
			"'. Try SLOWLOG HELP.")
		return
	}
	count := int64(10)
	if len(x.Args) == 3 {
		n, ok := resp.ParseInt(x.Args[2])
		if !ok {
			x.W.Error("ERR value is not an integer or out of range")
			return
		}
		if n < -1 {
			x.W.Error("ERR count should be greater than or equal to -1")
			return
		}
		count = n
		if n == -1 {
			count = math.MaxInt64
		}
	}
	entries := x.S.slowlog.Get(count)
	x.W.Array(len(entries))
	for _, e := range entries {
		x.W.Array(6)
		x.W.Int(e.ID)
		x.W.Int(e.Time)
		x.W.Int(e.Duration)
		x.W.Array(len(e.Args))
		for _, a := range e.Args {
			x.W.BulkString(a)
		}
		x.W.BulkString(e.Addr)
		x.W.BulkString(e.Name)
	}
}

func slowlogLen(x *Ctx) { x.W.Int(int64(x.S.slowlog.Len())) }

func slowlogReset(x *Ctx) {
	x.S.slowlog.Reset()
	x.W.OK()
}

func slowlogHelp(x *Ctx) {
	WriteHelp(x.W, "SLOWLOG", []string{
		"GET [<count>]",
		"    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
		"    Entries are made of:",
		"    id, timestamp, time in microseconds, arguments array, client IP and port,",
		"    client name",
		"LEN",
		"    Return the length of the slowlog.",
		"RESET",
		"    Reset the slowlog.",
	})
}
