// Package cluster is the actor shell around the cluster logic of package bus.
// One cluster actor per node owns the node's bus.State: it loads nodes.conf
// at start (or creates a new node id and writes it), serves the CLUSTER
// subcommands that read or change the cluster configuration, and carries out
// the effects the logic asks for — nodes.conf is rewritten atomically and
// fsync'd before the reply goes out, and every change of slot ownership or
// cluster state publishes a new immutable slots.Table for the event loops.
//
// The actor runs on protoactor-go with the synchronized dispatcher, like the
// shard actors: a request to an idle actor runs on the event loop that sent
// it. Only commands that change the configuration do disk I/O (one fsync'd
// rewrite of a small file, as Redis does in its main thread).
package cluster

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/slotd/slotd/actors/trace"
	"github.com/slotd/slotd/bus"
	"github.com/slotd/slotd/netio/config"
	"github.com/slotd/slotd/netio/resp"
	"github.com/slotd/slotd/slots"
)

// Options configure Start.
type Options struct {
	Config *config.Config
	Log    zerolog.Logger
	System *actor.ActorSystem
	// Table receives every routing snapshot; the first is published before
	// Start returns.
	Table *slots.Holder
	// DBEmpty reports whether the node holds no keys (CLUSTER FLUSHSLOTS).
	DBEmpty func() bool
	// ReplOffset is this node's replication offset (CLUSTER SHARDS); nil
	// reports 0.
	ReplOffset func() int64
}

// Cluster is a running cluster actor. It implements netio.Cluster.
type Cluster struct {
	pid      *actor.PID
	root     *actor.RootContext
	myID     atomic.Pointer[string]
	store    *store
	stopOnce sync.Once
}

// watched are the directives the cluster logic follows at run time.
var watched = []string{
	"port", "cluster-port", "cluster-announce-ip", "cluster-announce-port", "cluster-announce-bus-port",
	"cluster-announce-hostname", "cluster-require-full-coverage", "cluster-allow-reads-when-down",
	"cluster-preferred-endpoint-type",
}

// Start loads or creates the node's cluster configuration, publishes the
// first routing table and starts the actor.
func Start(o Options) (*Cluster, error) {
	cfg := o.Config
	if cfg.Int("cluster-port") == 0 && cfg.Int("port") > 65535-bus.PortIncr {
		return nil, fmt.Errorf("Redis port number too high. Cluster communication port is 10,000 port " +
			"numbers higher than your Redis port. Your Redis port number must be 55535 or less.")
	}
	path := cfg.String("cluster-config-file")
	if !filepath.IsAbs(path) {
		path = filepath.Join(cfg.String("dir"), path)
	}
	st, err := openStore(path)
	if err != nil {
		return nil, err
	}
	a := &clusterActor{cfg: cfg, log: o.Log.With().Str("actor", "cluster").Logger(), store: st, table: o.Table,
		dbEmpty: o.DBEmpty, replOffset: o.ReplOffset}
	if err := a.load(); err != nil {
		st.close()
		return nil, err
	}
	c := &Cluster{root: o.System.Root, store: st}
	id := a.st.MyID()
	c.myID.Store(&id)

	props := actor.PropsFromProducer(func() actor.Actor { return a },
		actor.WithDispatcher(actor.NewSynchronizedDispatcher(300)),
		actor.WithReceiverMiddleware(trace.Middleware("cluster", "cluster")))
	c.pid = o.System.Root.Spawn(props)
	for _, name := range watched {
		cfg.OnChange(name, func(string) { c.root.Send(c.pid, configChanged{}) })
	}
	return c, nil
}

// Submit handles one CLUSTER subcommand (args[0] is "cluster"). It writes
// exactly one reply to w and then calls done, possibly on another goroutine.
// args are owned by the actor from now on.
func (c *Cluster) Submit(args [][]byte, w *resp.Writer, done func()) {
	c.root.Send(c.pid, &request{args: args, w: w, done: done})
}

// MyID is this node's id (safe from any goroutine).
func (c *Cluster) MyID() string { return *c.myID.Load() }

// Stop stops the actor and releases nodes.conf. Safe to call twice.
func (c *Cluster) Stop() {
	c.stopOnce.Do(func() {
		_ = c.root.StopFuture(c.pid).Wait()
		c.store.close()
	})
}

// request is one CLUSTER subcommand to execute.
type request struct {
	args [][]byte
	w    *resp.Writer
	done func()
}

// configChanged tells the actor to re-read the directives it follows.
type configChanged struct{}

// clusterActor owns the bus state. Only the actor goroutine touches it
// (and Start, before the actor exists).
type clusterActor struct {
	st         *bus.State
	cfg        *config.Config
	log        zerolog.Logger
	store      *store
	table      *slots.Holder
	dbEmpty    func() bool
	replOffset func() int64
}

// Receive implements actor.Actor.
func (a *clusterActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *request:
		a.serve(m)
	case configChanged:
		a.st.SetOptions(a.options())
		a.st.SetAnnounce(a.announce())
		if err := a.apply(); err != nil {
			a.log.Error().Err(err).Msg("can't update cluster config file")
		}
	}
}

// load reads nodes.conf, or creates a new node when it is missing or
// empty, then brings the announced address up to date, saves and publishes.
func (a *clusterActor) load() error {
	text, err := a.store.read()
	if err != nil {
		return err
	}
	if text == "" {
		a.st = bus.New(newID(), newID(), a.options())
		a.log.Info().Msgf("No cluster configuration found, I'm %s", a.st.MyID())
	} else {
		st, err := bus.Load(text, time.Now().UnixMilli(), a.options(), newID)
		if err != nil {
			return err
		}
		a.st = st
		a.log.Info().Msgf("Node configuration loaded, I'm %.40s", st.MyID())
	}
	a.st.SetAnnounce(a.announce())
	a.st.TakeEffects()
	// Always rewrite at start: the file gets the current ports (and any
	// shard id Load had to invent), and an unwritable dir fails start-up
	// rather than the first ADDSLOTS.
	if err := a.store.save(a.st.Config()); err != nil {
		return fmt.Errorf("Fatal: can't update cluster config file: %w", err)
	}
	a.table.Publish(a.st.Table())
	return nil
}

// apply carries out the pending effects: save first, then publish.
func (a *clusterActor) apply() error {
	fx := a.st.TakeEffects()
	var err error
	if fx.Save {
		err = a.store.save(a.st.Config())
	}
	if fx.Publish {
		a.table.Publish(a.st.Table())
	}
	return err
}

func (a *clusterActor) options() bus.Options {
	return bus.Options{
		RequireFullCoverage: a.cfg.Bool("cluster-require-full-coverage"),
		AllowReadsWhenDown:  a.cfg.Bool("cluster-allow-reads-when-down"),
		PreferredEndpoint:   bus.ParseEndpointType(a.cfg.String("cluster-preferred-endpoint-type")),
	}
}

func (a *clusterActor) announce() bus.Announce {
	c := a.cfg
	return bus.DeriveAnnounce(int(c.Int("port")), int(c.Int("cluster-port")), int(c.Int("cluster-announce-port")),
		int(c.Int("cluster-announce-bus-port")), c.String("cluster-announce-ip"), c.String("cluster-announce-hostname"))
}

// serve executes one request; the reply goes out only after the effects
// (nodes.conf first) are carried out.
func (a *clusterActor) serve(r *request) {
	w := r.w
	mark := len(w.B)
	defer func() {
		if p := recover(); p != nil {
			w.B = w.B[:mark]
			a.log.Error().Interface("panic", p).Str("stack", string(debug.Stack())).Msg("CLUSTER command panicked")
			w.Error("ERR internal error executing 'cluster'")
			_ = a.apply()
		}
		r.done()
	}()
	a.exec(w, r.args)
	if err := a.apply(); err != nil {
		a.log.Error().Err(err).Msg("can't update cluster config file")
		w.B = w.B[:mark]
		w.Error("ERR Fatal: can't update cluster config file.")
	}
}

func (a *clusterActor) exec(w *resp.Writer, args [][]byte) {
	st := a.st
	sub := strings.ToLower(string(args[1]))
	var err error
	switch sub {
	case "myid":
		w.BulkString(st.MyID())
	case "myshardid":
		w.BulkString(st.MyShardID())
	case "info":
		w.Verbatim(st.Info())
	case "nodes":
		w.Verbatim(st.Nodes())
	case "slots":
		writeSlots(w, st.Slots())
	case "shards":
		var off int64
		if a.replOffset != nil {
			off = a.replOffset()
		}
		writeShards(w, st.Shards(off))
	case "addslots":
		err = st.AddSlots(args[2:])
	case "addslotsrange":
		err = st.AddSlotsRange(args[2:])
	case "delslots":
		err = st.DelSlots(args[2:])
	case "delslotsrange":
		err = st.DelSlotsRange(args[2:])
	case "flushslots":
		err = st.FlushSlots(a.dbEmpty == nil || a.dbEmpty())
	default:
		w.Error("ERR unknown subcommand '" + string(args[1]) + "'. Try CLUSTER HELP.")
		return
	}
	switch sub {
	case "addslots", "addslotsrange", "delslots", "delslotsrange", "flushslots":
		if err != nil {
			w.Error(err.Error())
		} else {
			w.OK()
		}
	}
}

// writeSlots encodes CLUSTER SLOTS: [start, end, node...] with node entries
// [endpoint, port, id, metadata map] (RESP2: an empty map is "*0").
func writeSlots(w *resp.Writer, ranges []bus.SlotRange) {
	w.Array(len(ranges))
	for _, r := range ranges {
		w.Array(2 + len(r.Nodes))
		w.Int(int64(r.Start))
		w.Int(int64(r.End))
		for _, n := range r.Nodes {
			w.Array(4)
			if n.NullEndpoint {
				w.Null()
			} else {
				w.BulkString(n.Endpoint)
			}
			w.Int(int64(n.Port))
			w.BulkString(n.ID)
			w.Map(len(n.Metadata))
			for _, kv := range n.Metadata {
				w.BulkString(kv[0])
				w.BulkString(kv[1])
			}
		}
	}
}

// writeShards encodes CLUSTER SHARDS: one map per shard with "slots" (flat
// start/end integers) and "nodes" (one map per node).
func writeShards(w *resp.Writer, shards []bus.Shard) {
	w.Array(len(shards))
	for _, sh := range shards {
		w.Map(2)
		w.BulkString("slots")
		w.Array(2 * len(sh.Slots))
		for _, r := range sh.Slots {
			w.Int(int64(r.Start))
			w.Int(int64(r.End))
		}
		w.BulkString("nodes")
		w.Array(len(sh.Nodes))
		for _, n := range sh.Nodes {
			fields := 6
			if n.Port != 0 {
				fields++
			}
			if n.Hostname != "" {
				fields++
			}
			w.Map(fields)
			w.BulkString("id")
			w.BulkString(n.ID)
			if n.Port != 0 {
				w.BulkString("port")
				w.Int(int64(n.Port))
			}
			w.BulkString("ip")
			w.BulkString(n.IP)
			w.BulkString("endpoint")
			w.BulkString(n.Endpoint)
			if n.Hostname != "" {
				w.BulkString("hostname")
				w.BulkString(n.Hostname)
			}
			w.BulkString("role")
			w.BulkString(n.Role)
			w.BulkString("replication-offset")
			w.Int(n.ReplicationOffset)
			w.BulkString("health")
			w.BulkString(n.Health)
		}
	}
}

// newID returns a random 40-character lowercase hex id.
func newID() string {
	var b [bus.IDLen / 2]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b[:])
}
