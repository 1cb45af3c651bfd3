package netio

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/resp"
)

// TIME, DEBUG and SHUTDOWN.
func registerCmdServer() {
	adm := []string{"admin", "noscript", "loading", "stale"}
	admCats := []string{"admin", "slow", "dangerous"}
	command.Register(
		Loop(&command.Spec{Name: "time", Arity: 1, Flags: []string{"loading", "stale", "fast"}, Categories: []string{"fast"},
			Tips: []string{"nondeterministic_output"}, Group: "server", Since: "2.6.0",
			Summary: "Return the current server time"}, cmdTime),
		Loop(&command.Spec{Name: "debug", Arity: -2, Flags: adm, Categories: admCats, Group: "server", Since: "1.0.0",
			Summary: "A container for debugging commands"}, cmdDebug),
		Loop(&command.Spec{Name: "shutdown", Arity: -1, Flags: append(adm, "no_multi", "allow_busy"), Categories: admCats,
			Group: "server", Since: "1.0.0",
			Summary: "Synchronously save the dataset to disk and then shut down the server"}, cmdShutdown),
	)
	RegisterDebug("sleep", []string{"SLEEP <seconds>",
		"    Stop the server for <seconds>. Decimals allowed."}, 3, debugSleep)
	RegisterDebug("trace", []string{"TRACE [<count>]",
		"    Return the <count> (default 100, 0 for all) most recent actor trace records,",
		"    oldest first (see the trace-actors directive)."}, -2, debugTrace)
}

func cmdTime(x *Ctx) {
	now := time.Now()
	x.W.Array(2)
	x.W.BulkString(strconv.FormatInt(now.Unix(), 10))
	x.W.BulkString(strconv.FormatInt(int64(now.Nanosecond()/1000), 10))
}

// ---- DEBUG

type debugSub struct {
	help  []string
	arity int // Redis convention, counting DEBUG and the subcommand name
	h     LoopHandler
}

var (
	debugMu    sync.Mutex
	debugSubs  = map[string]*debugSub{}
	debugOrder []string
)

// RegisterDebug adds a DEBUG subcommand (name in lower case) with its HELP
// lines. arity counts "DEBUG" and the subcommand name, Redis style. Call it
// from init.
func RegisterDebug(name string, help []string, arity int, h LoopHandler) {
	debugMu.Lock()
	defer debugMu.Unlock()
	name = strings.ToLower(name)
	if _, dup := debugSubs[name]; !dup {
		debugOrder = append(debugOrder, name)
	}
	debugSubs[name] = &debugSub{help: help, arity: arity, h: h}
}

const errDebugDisabled = "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", " +
	"you can run it from a local connection, otherwise you need to set this option in the configuration file, " +
	"and then restart the server."

// debugAllowed applies enable-debug-command (no, yes, local) as Redis does.
func (x *Ctx) debugAllowed() bool { return x.protectedAllowed("enable-debug-command") }

func cmdDebug(x *Ctx) {
	if !x.debugAllowed() {
		x.W.Error(errDebugDisabled)
		return
	}
	name := strings.ToLower(string(x.Args[1]))
	if name == "help" && len(x.Args) == 2 {
		debugHelp(x)
		return
	}
	debugMu.Lock()
	d := debugSubs[name]
	debugMu.Unlock()
	if d == nil || (d.arity >= 0 && len(x.Args) != d.arity) || (d.arity < 0 && len(x.Args) < -d.arity) {
		x.W.Error("ERR unknown subcommand or wrong number of arguments for '" + Trunc(string(x.Args[1]), 128) +
			"'. Try DEBUG HELP.")
		return
	}
	d.h(x)
}

func debugHelp(x *Ctx) {
	debugMu.Lock()
	var lines []string
	for _, n := range debugOrder {
		lines = append(lines, debugSubs[n].help...)
	}
	debugMu.Unlock()
	WriteHelp(x.W, "DEBUG", lines)
}

// debugSleep freezes the whole node for the given time (Server.PauseFor):
// no client command runs and the cluster bus answers nothing, as when
// redis-server sleeps; the caller gets +OK at the end.
func debugSleep(x *Ctx) {
	secs := parseFloatPrefix(string(x.Args[2]))
	var d time.Duration
	switch {
	case secs != secs || secs <= 0: // NaN or negative: no delay, as in Redis
	case secs >= float64(math.MaxInt64/int64(time.Second)):
		d = math.MaxInt64
	default:
		d = time.Duration(secs * float64(time.Second))
	}
	x.S.PauseFor(d)
	x.Defer(func(def *Deferred) {
		time.AfterFunc(d, func() {
			def.W.OK()
			def.Done()
		})
	})
}

// parseFloatPrefix reads a number like C's strtod: the longest valid
// prefix, 0 when there is none.
func parseFloatPrefix(s string) float64 {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	for n := len(s); n > 0; n-- {
		if f, err := strconv.ParseFloat(s[:n], 64); err == nil {
			return f
		}
	}
	return 0
}

// debugTrace returns recent actor trace records, one line each.
func debugTrace(x *Ctx) {
	n := int64(100)
	if len(x.Args) > 3 {
		x.W.Error("ERR syntax error")
		return
	}
	if len(x.Args) == 3 {
		v, ok := resp.ParseInt(x.Args[2])
		if !ok || v < 0 {
			x.W.Error(errNotInt)
			return
		}
		n = v
	}
	var recs []string
	if x.S.Trace != nil {
		recs = x.S.Trace(int(n))
	}
	x.W.Array(len(recs))
	for _, r := range recs {
		x.W.BulkString(r)
	}
}

// ---- SHUTDOWN

// cmdShutdown implements SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [FAILOVER] |
// ABORT (Valkey 9). The sequence runs off the loop (shutdown.go): a
// cluster primary with FAILOVER first hands its slots to a replica; else,
// unless NOW, writes pause while lagging replicas catch up (up to
// shutdown-timeout; SHUTDOWN ABORT cancels that wait). Then a plain
// SHUTDOWN saves a snapshot when save rules exist, SAVE always does,
// NOSAVE never; a failed save keeps the server up unless FORCE is given.
// On success the client gets no reply: its connection closes.
func cmdShutdown(x *Ctx) {
	var nosave, save, now, force, abort, failover bool
	for _, a := range x.Args[1:] {
		switch {
		case ArgIs(a, "nosave"):
			nosave = true
		case ArgIs(a, "save"):
			save = true
		case ArgIs(a, "now"):
			now = true
		case ArgIs(a, "force"):
			force = true
		case ArgIs(a, "failover"):
			failover = true
		case ArgIs(a, "abort"):
			abort = true
		default:
			x.W.Error("ERR syntax error")
			return
		}
	}
	if (abort && (nosave || save || now || force || failover)) || (nosave && save) {
		x.W.Error("ERR syntax error")
		return
	}
	s, c := x.S, x.C
	if abort {
		if s.AbortShutdown() {
			x.W.OK()
		} else {
			x.W.Error("ERR No shutdown in progress.")
		}
		return
	}
	if failover && !s.clusterMode() {
		x.W.Error("ERR FAILOVER option is only supported in cluster mode")
		return
	}
	s.Log.Warn().Str("client", c.addr).Msg("User requested shutdown...")
	p := s.Persist
	x.Defer(func(d *Deferred) {
		go func() {
			s.shut.waiting.Add(1)
			err := s.PrepareShutdown(ShutdownOptions{Now: now, Failover: failover})
			s.shut.waiting.Add(-1)
			if err != nil {
				s.Log.Warn().Err(err).Msg("Errors trying to shut down the server.")
				d.W.Error("ERR Errors trying to SHUTDOWN. Check logs.")
				d.Done()
				return
			}
			if !nosave && (save || (p != nil && p.ShouldSaveOnShutdown())) {
				var err error
				if p == nil {
					err = errors.New("snapshots are not available on this server")
				} else {
					s.Log.Info().Msg("Saving the final RDB snapshot before exiting.")
					err = p.FinalSave()
				}
				if err != nil && !force {
					s.Log.Warn().Err(err).Msg("Error trying to save the DB, can't exit.")
					s.EndShutdown(err)
					d.W.Error("ERR Errors trying to SHUTDOWN. Check logs.")
					d.Done()
					return
				}
			}
			// No reply: the connection closes with the server. The group
			// is released first, so the loop can stop.
			d.Done()
			s.shutdown()
		}()
	})
}

// shutdown stops the node off the event loop (stopping gnet waits for the
// loops). Without a Shutdown hook only the listeners and loops stop: Serve
// returns and whoever started the server tears the rest down (Stop is not
// meant to run twice).
func (s *Server) shutdown() {
	if s.Shutdown != nil {
		s.Shutdown()
		return
	}
	s.Stop()
}
