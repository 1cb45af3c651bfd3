// Package node wires one slotd node together: configuration, logging, the
// protoactor system, the shard actors, the cluster actor (in cluster mode)
// and the client-facing server. cmd/slotd and the integration tests start
// nodes through it.
package node

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/slotd/slotd/actors/repl"
	// SCRIPT LOAD|EXISTS|FLUSH|KILL (loop commands over the shards' cache).
	_ "github.com/slotd/slotd/actors/script/scriptcmd"
	"github.com/slotd/slotd/actors/trace"
	"github.com/slotd/slotd/netio"
	"github.com/slotd/slotd/netio/config"
	"github.com/slotd/slotd/slots"
)

// Node is a running slotd node.
type Node struct {
	Cfg    *config.Config
	Log    zerolog.Logger
	Server *netio.Server
	System *actor.ActorSystem
	// Repl is the replication engine (REPLICAOF; the cluster actor drives
	// it in cluster mode).
	Repl *repl.Manager

	logFile io.Closer
	errc    chan error
	stops   []func()
	// stopOnce makes Stop idempotent (tests stop a node, then cleanup
	// stops it again).
	stopOnce sync.Once
}

// Start builds a node from cfg and starts serving. It returns once the
// listener is up (or failed).
func Start(cfg *config.Config) (*Node, error) {
	n := &Node{Cfg: cfg, errc: make(chan error, 1)}
	if err := n.setupLog(); err != nil {
		return nil, err
	}
	n.System = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		l := n.Log.With().Str("component", "protoactor").Logger().Level(zerolog.WarnLevel)
		return slog.New(zerolog.NewSlogHandler(l))
	}))
	tl := n.Log.With().Str("component", "trace").Logger()
	trace.SetLogger(&tl)
	trace.SetRingSize(int(cfg.Int("trace-ring-size")))
	trace.Configure(cfg.String("trace-actors"))
	cfg.OnChange("trace-actors", trace.Configure)

	// In cluster mode the cluster actor publishes the routing table; the
	// server routes with that holder from the start.
	var table *slots.Holder
	if cfg.Bool("cluster-enabled") {
		table = new(slots.Holder)
	}
	n.Server = netio.New(netio.Options{Config: cfg, Log: n.Log, System: n.System, Table: table})
	if cfg.Bool("cluster-enabled") {
		stop, err := startCluster(n)
		if err != nil {
			n.Server.Stop()
			return nil, err
		}
		n.stops = append(n.stops, stop)
	}
	n.stops = append(n.stops, startRepl(n))
	n.Server.Shutdown = n.Stop
	addrs := netio.ListenAddrs(cfg.String("bind"), int(cfg.Int("port")))
	go func() { n.errc <- n.Server.Serve(addrs...) }()
	select {
	case <-n.Server.Ready():
	case err := <-n.errc:
		if err == nil {
			err = fmt.Errorf("server stopped during start-up")
		}
		return nil, fmt.Errorf("Failed listening on port %d (tcp), aborting: %w", cfg.Int("port"), err)
	case <-time.After(10 * time.Second):
		return nil, fmt.Errorf("timed out starting listeners")
	}
	n.Log.Info().Int("pid", os.Getpid()).Int64("port", cfg.Int("port")).Msg("Ready to accept connections tcp")
	return n, nil
}

// Wait blocks until the server stops.
func (n *Node) Wait() error { return <-n.errc }

// Stop shuts the node down.
func (n *Node) Stop() {
	n.stopOnce.Do(n.stop)
}

func (n *Node) stop() {
	for i := len(n.stops) - 1; i >= 0; i-- {
		n.stops[i]()
	}
	n.Server.Stop()
	n.System.Shutdown()
	if n.logFile != nil {
		_ = n.logFile.Close()
	}
}

func (n *Node) setupLog() error {
	var w io.Writer = os.Stdout
	if path := n.Cfg.String("logfile"); path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("can't open the log file: %w", err)
		}
		n.logFile = f
		w = f
	}
	n.Log = zerolog.New(zerolog.ConsoleWriter{Out: w, NoColor: true, TimeFormat: "02 Jan 2006 15:04:05.000"}).
		With().Timestamp().Int("pid", os.Getpid()).Logger().Level(levelOf(n.Cfg.String("loglevel")))
	n.Cfg.OnChange("loglevel", func(v string) { n.Log = n.Log.Level(levelOf(v)) })
	return nil
}

func levelOf(s string) zerolog.Level {
	switch strings.ToLower(s) {
	case "debug":
		return zerolog.DebugLevel
	case "verbose":
		return zerolog.DebugLevel
	case "warning":
		return zerolog.WarnLevel
	case "nothing":
		return zerolog.Disabled
	default:
		return zerolog.InfoLevel
	}
}
