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
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/slotd/slotd/actors/aof"
	"github.com/slotd/slotd/actors/cluster"
	"github.com/slotd/slotd/actors/persist"
	"github.com/slotd/slotd/actors/repl"
	"github.com/slotd/slotd/actors/shard"
	"github.com/slotd/slotd/actors/trace"
	"github.com/slotd/slotd/netio"
	"github.com/slotd/slotd/netio/config"
	"github.com/slotd/slotd/netio/funccmd"
	"github.com/slotd/slotd/netio/metrics"
	"github.com/slotd/slotd/netio/scriptcmd"
	"github.com/slotd/slotd/slots"
)

// Node is a running slotd node.
type Node struct {
	Cfg    *config.Config
	Log    zerolog.Logger
	Server *netio.Server
	System *actor.ActorSystem
	// Shards are the shard actors.
	Shards *shard.Group
	// Repl is the replication engine (REPLICAOF; the cluster actor drives
	// it in cluster mode).
	Repl *repl.Manager
	// clusterRepl is the cluster actor's handle on Repl (cluster.go).
	clusterRepl *clusterRepl
	// Persist takes and loads RDB snapshots.
	Persist *persist.Manager
	// AOF is the append-only file.
	AOF *aof.Manager
	// Meter instruments the actors (mailbox depth, handling time).
	Meter *trace.Meter
	// Metrics serves metrics-port (nil: off).
	Metrics *metrics.Server
	cluster *cluster.Cluster

	logFile io.Closer
	logw    *redisLog
	// startReplica: nodes.conf made this node a replica at start-up.
	startReplica bool
	pidfile      string // written at start-up, removed at stop
	errc         chan error
	stops        []func()
	// stopOnce makes Stop idempotent (tests stop a node, then cleanup
	// stops it again).
	stopOnce sync.Once
}

// Start builds a node from cfg and starts serving. It returns once the
// listener is up (or failed).
func Start(cfg *config.Config) (*Node, error) {
	RegisterCommands()
	n := &Node{Cfg: cfg, errc: make(chan error, 1)}
	if err := n.setupLog(); err != nil {
		return nil, err
	}
	if err := n.start(); err != nil {
		// As redis-server does, the reason goes to the log (the log file
		// when there is one), not to stderr.
		n.Log.Warn().Msg(err.Error())
		return nil, &LoggedError{err}
	}
	return n, nil
}

// fatal logs msg as Redis logs the line before it exits, and ends the
// process with status 1 (an AOF or nodes.conf error the node must not
// survive: it would acknowledge or act on what is not on disk).
func (n *Node) fatal(msg string) {
	n.Log.Warn().Msg(msg)
	os.Exit(1)
}

// LoggedError is a start-up error the node has already written to its
// log.
type LoggedError struct{ Err error }

func (e *LoggedError) Error() string { return e.Err.Error() }
func (e *LoggedError) Unwrap() error { return e.Err }

func (n *Node) start() error {
	cfg := n.Cfg
	n.Log.Info().Msg("oO0OoO0OoO0Oo slotd is starting oO0OoO0OoO0Oo")
	n.Log.Info().Msgf("slotd (Redis %s compatible), bits=64, pid=%d, just started", netio.RedisVersion, os.Getpid())
	if f := cfg.File(); f != "" {
		n.Log.Info().Msgf("Configuration loaded from %s", f)
	} else {
		n.Log.Info().Msg("Configuration loaded (no config file)")
	}
	for _, name := range cfg.NoEffect() {
		n.Log.Warn().Msgf("The '%s' directive is accepted for redis.conf compatibility but has no effect in slotd", name)
	}
	if !trace.Built() {
		if cfg.String("trace-actors") != "" || cfg.Int("metrics-port") != 0 {
			n.Log.Warn().Msg("This slotd was built with -tags slotd_notrace: trace-actors and metrics-port have no effect")
		}
	}
	if err := n.writePidfile(); err != nil {
		return err
	}
	n.System = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		l := n.Log.With().Str("component", "protoactor").Logger().Level(zerolog.WarnLevel)
		return slog.New(zerolog.NewSlogHandler(l))
	}))
	n.Meter = trace.NewMeter(n.System)
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
	nshards := int(cfg.Int("shard-actors"))
	if nshards <= 0 {
		nshards = netio.DefaultParallelism()
	}
	databases := int(cfg.Int("databases"))
	if cfg.Bool("cluster-enabled") {
		databases = 1 // a Redis 7 cluster node has only database 0
	}
	n.Shards = shard.NewGroup(n.System, nshards, n.Log, shard.WithDatabases(databases))
	n.Shards.FollowConfig(cfg)
	n.stops = append(n.stops, followMemoryLimit(cfg))
	n.Server = netio.New(netio.Options{Config: cfg, Log: n.Log, System: n.System, Table: table, Shards: n.Shards})
	if err := n.Server.LoadUsers(); err != nil {
		return err
	}
	n.Shards.SetRouting(n.Server.Table)
	n.Shards.Tracking.Tracker = n.Server.Tracker()
	n.Shards.Tracking.Publish = n.Server.PublishFromScript
	n.Shards.Notify.Notifier = n.Server.KeyspaceNotifier()
	n.Shards.CmdStats = n.Server.CmdStats()
	n.Shards.SlowLog = n.Server.SlowLog()
	n.Shards.Latency = n.Server.LatencyMonitor()
	n.Shards.Monitor = n.Server.FeedScriptMonitors
	n.Shards.ACLDenied = n.Server.ScriptACLDenied
	n.Shards.ACLUser = n.Server.ClientACLUser
	n.Server.Trace = trace.RecentLines
	scriptcmd.Bind(n.Server, n.Shards)
	funccmd.Bind(n.Server, n.Shards)
	n.clusterRepl = &clusterRepl{n: n}
	if cfg.Bool("cluster-enabled") {
		stop, err := startCluster(n)
		if err != nil {
			n.Server.Stop()
			return err
		}
		n.stops = append(n.stops, stop)
	}
	n.stops = append(n.stops, startRepl(n))
	n.logw.setRole(n.Repl.Replicating)
	n.banner()
	n.Server.Shutdown = n.Stop
	// The snapshot is loaded before the listeners open, so no client sees
	// a partial dataset.
	n.Persist = persist.New(n.Shards, cfg, n.Log.With().Str("component", "persist").Logger())
	n.Server.Persist = n.Persist
	// A replica's final snapshot records its replication id and offsets;
	// loaded back, they let it continue with a partial resync.
	n.Persist.ReplState = n.Repl.FrozenState
	n.Persist.OnReplState = func(id string, offs []int64) {
		if n.Repl.Restore(id, offs) {
			n.Log.Info().Str("replid", id).Msg("Restored the replication id and offsets of the snapshot: a partial resync will be attempted")
		}
	}
	n.Persist.Freeze = func() func() {
		n.Repl.Freeze()
		return n.Repl.Resume
	}
	// With appendonly yes the AOF is the dataset and dump.rdb is not read,
	// as in Redis.
	n.AOF = aof.New(n.Shards, cfg, n.Log.With().Str("component", "aof").Logger(), n.Persist)
	n.Persist.AOF = n.AOF
	// A failed save (with stop-writes-on-bgsave-error) or AOF write makes
	// the node refuse writes with MISCONF until it persists again (turning
	// the AOF off lifts its part: aof.Manager.Disable reports it).
	diskFault := func() {
		msg := n.Persist.Fault()
		if msg == "" {
			msg = n.AOF.Fault()
		}
		n.Server.SetDiskError(msg)
	}
	n.Persist.OnFault, n.AOF.OnFault = diskFault, diskFault
	n.AOF.SetFatal(n.fatal)
	cfg.OnChange("stop-writes-on-bgsave-error", func(string) { diskFault() })
	cfg.OnChange("save", func(string) { diskFault() })
	load := n.Persist.Load
	if cfg.Bool("appendonly") {
		load = n.AOF.Open
	}
	// A node that starts as a replica (its nodes.conf or a replicaof
	// directive says so) loads its data as a replica: keys whose expiry has
	// passed stay until the primary deletes them.
	if n.startReplica || !cfg.Bool("cluster-enabled") && cfg.String("replicaof") != "" {
		done := make(chan struct{})
		n.Shards.SetReplica(true, func() { close(done) })
		<-done
	}
	if err := load(); err != nil {
		n.Log.Error().Err(err).Msg("Fatal error loading the DB, check server logs. Exiting.")
		n.stop()
		return err
	}
	n.Persist.Start()
	// FLUSHALL with save rules writes the empty dataset at once, so a
	// restart cannot bring the flushed keys back from an older dump.rdb.
	n.Shards.OnFlushAll = func() {
		if n.Persist.ShouldSaveOnShutdown() {
			go func() {
				if err := n.Persist.SaveWait(); err != nil {
					n.Log.Warn().Err(err).Msg("Saving the dataset after FLUSHALL failed")
				}
			}()
		}
	}
	n.AOF.Start()
	n.stops = append(n.stops, n.Persist.Stop, n.AOF.Stop)
	n.clusterRepl.start()
	// The replicaof directive starts replication once the data is loaded,
	// from the snapshot's replication state if it had one.
	if ro := strings.Fields(cfg.String("replicaof")); len(ro) == 2 && !cfg.Bool("cluster-enabled") {
		if port, err := strconv.Atoi(ro[1]); err == nil {
			n.Repl.StartReplicaOf(ro[0], port)
		}
	}
	n.Log.Info().Msg("Server initialized")
	if err := n.startMetrics(); err != nil {
		n.stop()
		return err
	}
	addrs := netio.ListenAddrs(cfg.String("bind"), int(cfg.Int("port")))
	go func() { n.errc <- n.Server.Serve(addrs...) }()
	select {
	case <-n.Server.Ready():
	case err := <-n.errc:
		if err == nil {
			err = fmt.Errorf("server stopped during start-up")
		}
		return fmt.Errorf("Failed listening on port %d (tcp), aborting: %w", cfg.Int("port"), err)
	case <-time.After(10 * time.Second):
		return fmt.Errorf("timed out starting listeners")
	}
	n.Log.Info().Msg("Ready to accept connections")
	return nil
}

// startMetrics opens metrics-port on the bind addresses, if set.
func (n *Node) startMetrics() error {
	port := int(n.Cfg.Int("metrics-port"))
	if port == 0 {
		return nil
	}
	src := metrics.Sources{Server: n.Server, Shards: n.Shards, Meter: n.Meter, Repl: n.Repl,
		Persist: n.Persist, Cluster: func() *cluster.Cluster { return n.cluster }}
	srv, err := metrics.Listen(busAddrs(n.Cfg.String("bind"), port), metrics.NewRegistry(src), src)
	if err != nil {
		return fmt.Errorf("Failed listening on metrics port %d (tcp), aborting: %w", port, err)
	}
	n.Metrics = srv
	n.stops = append(n.stops, srv.Close)
	n.Log.Info().Msgf("Metrics on port %d (/metrics; the cluster page on /)", port)
	return nil
}

// Terminate is the SIGTERM/SIGINT shutdown; directive is the one that
// rules it (shutdown-on-sigterm or shutdown-on-sigint): the failover on
// shutdown (flag failover) or the wait for lagging replicas (unless flag
// now), then a final snapshot when save rules exist (flag save: always;
// nosave: never), then Stop. If that save fails the node keeps running and
// the error is returned, as redis-server does ("errors trying to shut down
// the server"), unless the flags say force; a later signal tries again.
func (n *Node) Terminate(directive string) error {
	flags := n.Cfg.Int(directive)
	save := flags&config.ShutdownSave != 0 ||
		flags&config.ShutdownNoSave == 0 && n.Persist != nil && n.Persist.ShouldSaveOnShutdown()
	n.Log.Warn().Msg("User requested shutdown...")
	// Failover on shutdown, or the wait for lagging replicas
	// (netio/shutdown.go).
	if err := n.Server.PrepareShutdown(netio.ShutdownOptions{Now: flags&config.ShutdownNow != 0,
		Failover: flags&config.ShutdownFailover != 0}); err != nil {
		return err
	}
	if n.Persist != nil && save {
		n.Log.Info().Msg("Saving the final RDB snapshot before exiting.")
		if err := n.Persist.FinalSave(); err != nil {
			n.Log.Warn().Err(err).Msg("Error trying to save the DB, can't exit.")
			if flags&config.ShutdownForce == 0 {
				n.Server.EndShutdown(err)
				return err
			}
			n.Log.Warn().Msg("Errors trying to shut down the server. Exit anyway since the force flag is set.")
		} else {
			n.Log.Info().Msg("DB saved on disk")
		}
	}
	n.Stop()
	return nil
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
	if n.pidfile != "" {
		n.Log.Info().Msg("Removing the pid file.")
		_ = os.Remove(n.pidfile)
	}
	n.Server.Stop()
	n.Shards.Stop()
	n.System.Shutdown()
	n.Log.Warn().Msg("slotd is now ready to exit, bye bye...")
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
	n.logw = newRedisLog(w)
	n.Log = newRedisLogger(n.logw).Level(levelOf(n.Cfg.String("loglevel")))
	n.Cfg.OnChange("loglevel", func(v string) { n.Log = n.Log.Level(levelOf(v)) })
	return nil
}

// writePidfile writes the process id to pidfile (a daemonized node without
// one uses /var/run/redis.pid, as redis-server does). Failing to write it
// is logged, not fatal, as in Redis.
func (n *Node) writePidfile() error {
	path := n.Cfg.String("pidfile")
	if path == "" && n.Cfg.Bool("daemonize") {
		path = "/var/run/redis.pid"
	}
	if path == "" {
		return nil
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(n.Cfg.String("dir"), path)
	}
	if err := os.WriteFile(path, []byte(fmt.Sprintf("%d\n", os.Getpid())), 0o644); err != nil {
		n.Log.Warn().Err(err).Msgf("Failed to write PID file")
		return nil
	}
	n.pidfile = path
	return nil
}
