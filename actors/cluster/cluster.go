// Package cluster is the actor shell around the cluster logic of package bus.
// One cluster actor per node owns the node's bus.State: it loads nodes.conf
// at start (or creates a new node id and writes it), serves the CLUSTER
// subcommands that read or change the cluster configuration, and carries out
// the effects the logic asks for — nodes.conf is rewritten before the reply
// goes out (atomically and fsync'd for a new epoch or vote of the node's
// own, in place otherwise, as Redis 7.0: store.go), and every change of
// slot ownership or cluster state publishes a new immutable slots.Table for
// the event loops.
//
// The actor is also the hub of the cluster bus: it owns the bus listener
// (inbound connections become links via State.Accept), one child peer actor
// per link (package peer), and a 100 ms ticker (State.Tick, Redis's
// clusterCron). Every message — a CLUSTER command, a tick, a frame, a link
// event — is one step of the deterministic state machine; after each step
// the actor drains State.TakeEffects and carries them out with bus.Apply
// (apply.go), in the order it defines: save nodes.conf, log, publish the
// routing table, dial links, send frames, close links (after flushing what
// was queued on them), then the data and replication changes. A CLUSTER
// command's reply goes out after that.
//
// The actor runs on protoactor-go's default dispatcher (its own goroutine),
// not the synchronized one of the shard actors: it does disk I/O (fsync'd
// nodes.conf rewrites) and handles bus traffic, neither of which may run on
// an event loop that happens to send it a CLUSTER command.
package cluster

import (
	crand "crypto/rand"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/slotd/slotd/actors/peer"
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
	// Repl is the replication layer the cluster logic drives: which
	// primary to follow, promotion, the manual failover's write pause;
	// its offsets feed the failover rank. Nil: replication is off (tests
	// of the bus alone).
	Repl Replication
	// BusAddrs are the "host:port" addresses the cluster bus listens on
	// (the bind addresses with the bus port). None: no listener.
	BusAddrs []string
	// SlotKeys is the number of keys this node holds in a slot (CLUSTER
	// SETSLOT NODE refuses to give away a slot that still has keys); nil
	// reports 0.
	SlotKeys func(slot int) int64
	// DropSlots deletes the keys of slots this node lost to a newer
	// configuration (called on the actor; must not block).
	DropSlots func(slots []int)
	// Deliver hands a pub/sub message from another node to the local
	// subscribers; OnTable sees every routing snapshot once published
	// (shard-channel subscribers of lost slots are unsubscribed). Both are
	// called on the actor and must not block.
	Deliver func(d bus.Delivery)
	OnTable func(t *slots.Table)
	// TickEvery is the period of State.Tick (0: bus.TickInterval, 100 ms
	// as Redis's clusterCron).
	TickEvery time.Duration
	// Paused reports how long the node stays frozen (DEBUG SLEEP); while
	// it is, the actor holds bus messages and skips ticks (debug.go). Nil:
	// never.
	Paused func() time.Duration
	// Lease receives every new write lease (bus.State.WriteLease, unix
	// ms), called on the actor; nil: not followed.
	Lease func(unixMs int64)
	// Fatal ends the process after msg, logged, when nodes.conf cannot be
	// saved (Redis's clusterSaveConfigOrDie); the actor acts on nothing
	// after it. Nil: log and exit with status 1.
	Fatal func(msg string)
	// saver replaces nodes.conf's store once it is loaded (tests).
	saver saver
}

// saver writes nodes.conf: store, or a test's.
type saver interface {
	save(text string) error
	saveNoSync(text string) error
	sync() error
}

// Replication is what the cluster actor needs from the replication layer
// (actors/repl through actors/node). Calls come from the actor and must not
// block.
type Replication interface {
	// Follow makes the node a replica of the primary at host:port (no-op
	// if it already follows it).
	Follow(host string, port int)
	// Promote stops following and serves as a primary, keeping the data;
	// done is called, from any goroutine, once client writes are
	// replicated (the routing table naming myself waits for it).
	Promote(done func())
	// Offset is the replication offset: applied from the primary on a
	// replica, produced on a primary.
	Offset() int64
	// DataSince is, on a replica, the unix ms since which it has had no
	// data from its primary (link down since, else the last interaction);
	// 0 on a primary or when unknown.
	DataSince() int64
	// PauseWrites pauses client writes until until and calls done, from
	// any goroutine, once every write accepted before is in the stream,
	// with the final offset. UnpauseWrites lifts the pause.
	PauseWrites(until time.Time, done func(offset int64))
	UnpauseWrites()
	// WhenApplied calls done, from any goroutine, as soon as this replica
	// has applied its primary's stream up to target (not at all if until
	// passes first).
	WhenApplied(target int64, until time.Time, done func(offset int64))
}

// Cluster is a running cluster actor. It implements netio.Cluster.
type Cluster struct {
	pid      *actor.PID
	root     *actor.RootContext
	myID     *atomic.Pointer[string]
	store    *store
	listener *peer.Listener
	stopTick chan struct{}
	stopOnce sync.Once
	dbg      *debugState // DEBUG DROP-CLUSTER-PACKET-FILTER & co (debug.go)

	startedAsReplica bool
}

// watched are the directives the cluster logic follows at run time.
var watched = []string{
	"port", "cluster-port", "cluster-announce-ip", "cluster-announce-port", "cluster-announce-bus-port",
	"cluster-announce-hostname", "cluster-require-full-coverage", "cluster-allow-reads-when-down",
	"cluster-preferred-endpoint-type", "cluster-node-timeout", "cluster-quorum-timeout", "cluster-replica-validity-factor",
	"repl-ping-replica-period", "cluster-migration-barrier", "cluster-replica-no-failover",
	"cluster-allow-replica-migration", "cluster-link-sendbuf-limit",
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
		dbEmpty: o.DBEmpty, dropSlots: o.DropSlots, slotKeys: o.SlotKeys, rnd: newRand(),
		deliver: o.Deliver, onTable: o.OnTable, repl: o.Repl, onLease: o.Lease,
		subs: actorSubcommands(), links: map[bus.LinkID]*peer.Handle{}, myID: new(atomic.Pointer[string]), dbg: newDebugState(o.Paused)}
	a.saver, a.fatal = st, o.Fatal
	if err := a.load(); err != nil {
		st.close()
		return nil, err
	}
	if o.saver != nil {
		a.saver = o.saver
	}
	c := &Cluster{root: o.System.Root, store: st, myID: a.myID, stopTick: make(chan struct{}), dbg: a.dbg,
		startedAsReplica: a.st.Myself().Flags&bus.FlagSlave != 0}

	props := actor.PropsFromProducer(func() actor.Actor { return a }, trace.Props(o.System, "cluster", "cluster")...)
	c.pid = o.System.Root.Spawn(props)
	if len(o.BusAddrs) > 0 {
		l, err := peer.Listen(o.BusAddrs, func(conn net.Conn) { c.root.Send(c.pid, accepted{conn: conn}) })
		if err != nil {
			_ = c.root.StopFuture(c.pid).Wait()
			st.close()
			return nil, fmt.Errorf("Failed listening on port %d (cluster), aborting: %w", busPort(cfg), err)
		}
		c.listener = l
	}
	every := o.TickEvery
	if every <= 0 {
		every = bus.TickInterval * time.Millisecond
	}
	go c.ticker(every)
	for _, name := range watched {
		cfg.OnChange(name, func(string) { c.root.Send(c.pid, configChanged{}) })
	}
	return c, nil
}

// BusPort is the port the cluster bus listens on: cluster-port, else
// port+10000.
func BusPort(cfg *config.Config) int { return busPort(cfg) }

func busPort(cfg *config.Config) int {
	if p := cfg.Int("cluster-port"); p != 0 {
		return int(p)
	}
	return int(cfg.Int("port")) + bus.PortIncr
}

func (c *Cluster) ticker(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-c.stopTick:
			return
		case <-t.C:
			c.root.Send(c.pid, tick{})
		}
	}
}

// Submit handles one CLUSTER subcommand (args[0] is "cluster"). It writes
// exactly one reply to w and then calls done, possibly on another goroutine.
// args are owned by the actor from now on.
func (c *Cluster) Submit(args [][]byte, w *resp.Writer, done func()) {
	c.root.Send(c.pid, &request{args: args, w: w, done: done})
}

// publishMsg is a PUBLISH (or, with shard, an SPUBLISH) to propagate to
// the other nodes.
type publishMsg struct {
	channel, message []byte
	shard            bool
}

// Publish sends a PUBLISH to every other node (safe from any goroutine;
// calls from one goroutine go out in call order). The arguments are
// copied.
func (c *Cluster) Publish(channel, message []byte) { c.publish(channel, message, false) }

// SPublish sends an SPUBLISH to the other nodes of this node's shard (its
// primary and that primary's replicas), like Publish otherwise.
func (c *Cluster) SPublish(channel, message []byte) { c.publish(channel, message, true) }

func (c *Cluster) publish(channel, message []byte, shard bool) {
	buf := make([]byte, len(channel)+len(message))
	n := copy(buf, channel)
	copy(buf[n:], message)
	c.root.Send(c.pid, publishMsg{channel: buf[:n:n], message: buf[n:], shard: shard})
}

// MyID is this node's id (safe from any goroutine).
func (c *Cluster) MyID() string { return *c.myID.Load() }

// StartedAsReplica reports whether the node's configuration, as loaded at
// start-up, made it a replica.
func (c *Cluster) StartedAsReplica() bool { return c.startedAsReplica }

// Stop closes the bus listener, stops the actor and its links and releases
// nodes.conf. Safe to call twice.
func (c *Cluster) Stop() {
	c.stopOnce.Do(func() {
		if c.listener != nil {
			c.listener.Close()
		}
		close(c.stopTick)
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

// tick drives State.Tick.
type tick struct{}

// accepted is an inbound bus connection.
type accepted struct{ conn net.Conn }

// writesPaused: the write pause a manual failover asked for is in effect
// and offset is final.
type writesPaused struct{ offset int64 }

// replApplied: this replica applied its primary's stream up to offset
// (the answer to an AwaitOffset effect).
type replApplied struct{ offset int64 }

// promoted: the replication layer finished a promotion; the routing table
// held meanwhile goes out.
type promoted struct{}

// clusterActor owns the bus state. Only the actor goroutine touches it
// (and Start, before the actor exists).
type clusterActor struct {
	st    *bus.State
	cfg   *config.Config
	log   zerolog.Logger
	store *store
	saver saver // store, unless a test's
	// fatal is Options.Fatal; dead: it was called, nothing else is done.
	fatal     func(msg string)
	dead      bool
	table     *slots.Holder
	dbEmpty   func() bool
	dropSlots func([]int)
	slotKeys  func(int) int64
	// lazySave: the step changed no epoch (SETSLOT), so nodes.conf is
	// rewritten without fsync, as Redis does (setslot.go).
	lazySave bool
	deliver  func(bus.Delivery)
	onTable  func(*slots.Table)
	rnd      *rand.Rand
	myID     *atomic.Pointer[string] // read by Cluster.MyID

	links map[bus.LinkID]*peer.Handle // open links (peer actors are children)
	// bufLimitExceeded counts links closed by the send limit
	// (total_cluster_links_buffer_limit_exceeded).
	bufLimitExceeded uint64
	replicate        string // last Effects.Replicate logged
	dbg              *debugState
	repl             Replication
	setSlot          setSlotState // a SETSLOT waiting for the replicas (setslot.go)
	// following is the "ip:port" replication follows ("" as a primary).
	following string
	// promoting: a promotion is under way in the replication layer; until
	// it is done no table is published (heldTable: one is waiting), so no
	// client write reaches a shard that does not replicate it yet.
	promoting, heldTable bool
	// handOff is the failover on shutdown in progress (handoff.go).
	handOff *handOff
	// onLease and lease: the write lease last handed to the event loops.
	onLease func(int64)
	lease   int64
	// btr is the actor's part of actor tracing (tracing.go).
	btr busTrace
	// subs are the CLUSTER subcommands the actor serves, by name.
	subs map[string]func(a *clusterActor, w *resp.Writer, args [][]byte)
}

// Receive implements actor.Actor. Every message is one step of the state
// machine, followed by its effects.
func (a *clusterActor) Receive(ctx actor.Context) {
	if a.dead {
		return // the process is exiting: nothing not on disk is acted on
	}
	if r, ok := ctx.Message().(*request); ok {
		a.serve(ctx, r)
		return
	}
	defer func() {
		// A bug in the logic must not take the node down (protoactor would
		// restart the actor): log it and keep serving.
		if p := recover(); p != nil {
			a.log.Error().Interface("panic", p).Str("stack", string(debug.Stack())).
				Msgf("cluster bus step panicked on %T", ctx.Message())
		}
	}()
	if a.hold(ctx) {
		return
	}
	a.step(ctx, ctx.Message())
}

// step runs one message through the state machine and applies the
// effects.
func (a *clusterActor) step(ctx actor.Context, msg any) {
	now := time.Now().UnixMilli()
	switch m := msg.(type) {
	case configChanged:
		a.st.SetOptions(a.options())
		a.st.SetAnnounce(a.announce())
		// cluster-link-sendbuf-limit applies to the links already open too.
		limit := &peer.SetSendLimit{Bytes: a.cfg.Int("cluster-link-sendbuf-limit")}
		for _, h := range a.links {
			ctx.Send(h.PID, limit)
		}
	case snapshotReq:
		m.reply <- a.snapshot(now)
		return
	case tick:
		a.feedRepl()
		a.st.Tick(now)
	case writesPaused:
		a.st.WritesPaused(now, uint64(m.offset))
	case replApplied:
		a.st.ReplApplied(now, uint64(m.offset))
	case handOffReq:
		a.startHandOff(ctx, m)
	case promoted:
		a.promoting = false
		if a.heldTable {
			a.heldTable = false
			a.publish()
		}
	case publishMsg:
		if m.shard {
			a.st.PublishShard(m.channel, m.message)
		} else {
			a.st.Publish(m.channel, m.message)
		}
	case killLinks:
		a.killLinks(now, m)
	case accepted:
		id := a.st.Accept(now, addrIP(m.conn.LocalAddr()), addrIP(m.conn.RemoteAddr()))
		a.links[id] = peer.Spawn(ctx, a.peerOptions(ctx, id, m.conn, ""))
	case *peer.Connected:
		if a.links[m.Link] == nil {
			return
		}
		a.st.LinkConnected(now, m.Link)
	case *peer.Received:
		if a.links[m.Link] == nil {
			return // closed by us; the reader had this frame already
		}
		if a.dropped(ctx, now, m) {
			return
		}
		if a.btr.on {
			a.traceReceived(now, m.Frame)
		}
		a.st.Receive(now, m.Link, m.Frame)
	case *peer.Closed:
		if a.links[m.Link] == nil {
			return
		}
		delete(a.links, m.Link)
		if m.BufferLimit {
			a.bufLimitExceeded++
			a.log.Warn().Uint64("link", uint64(m.Link)).Msg("cluster bus link send buffer over the limit: link freed")
		}
		a.st.LinkClosed(now, m.Link)
	default:
		return
	}
	if err := a.apply(ctx); err != nil {
		a.die(err)
	}
}

// die stops the node after a failed nodes.conf save, as Redis exits: the
// step's frames, votes and replies are not sent (bus.Apply stopped), and
// no later message is acted on.
func (a *clusterActor) die(err error) {
	a.dead = true
	a.log.Warn().Err(err).Msg("can't save the cluster config file")
	const msg = "Fatal: can't update cluster config file."
	if a.fatal != nil {
		a.fatal(msg)
		return
	}
	a.log.Warn().Msg(msg)
	os.Exit(1)
}

func (a *clusterActor) peerOptions(ctx actor.Context, id bus.LinkID, conn net.Conn, addr string) peer.Options {
	timeout := time.Duration(a.cfg.Int("cluster-node-timeout")) * time.Millisecond
	if timeout < time.Second {
		timeout = time.Second
	}
	return peer.Options{Link: id, Owner: ctx.Self(), Conn: conn, Addr: addr, DialTimeout: timeout,
		SendLimit: a.cfg.Int("cluster-link-sendbuf-limit"), Log: a.log, SourceIP: a.cfg.String("bind-source-addr")}
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
	id := a.st.MyID()
	a.myID.Store(&id)
	// Always rewrite at start: the file gets the current ports (and any
	// shard id Load had to invent), and an unwritable dir fails start-up
	// rather than the first ADDSLOTS.
	if err := a.store.save(a.st.Config()); err != nil {
		return fmt.Errorf("Fatal: can't update cluster config file: %w", err)
	}
	a.table.Publish(a.st.Table())
	return nil
}

// publish swaps in the current routing table.
func (a *clusterActor) publish() {
	t := a.st.Table()
	a.table.Publish(t)
	if a.onTable != nil {
		a.onTable(t)
	}
}

// feedRepl tells the state the replication figures it ranks and gates
// failovers with, before every Tick.
func (a *clusterActor) feedRepl() {
	if a.repl == nil {
		return
	}
	if off := a.repl.Offset(); off >= 0 && !a.st.ManualFailoverPaused() {
		a.st.SetReplOffset(uint64(off))
	}
	a.st.SetReplLinkDownSince(a.repl.DataSince())
}

// addrIP is the bare IP of a TCP address ("" if it has none).
func addrIP(a net.Addr) string {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return ""
	}
	return host
}

func (a *clusterActor) options() bus.Options {
	return bus.Options{
		RequireFullCoverage:   a.cfg.Bool("cluster-require-full-coverage"),
		AllowReadsWhenDown:    a.cfg.Bool("cluster-allow-reads-when-down"),
		PreferredEndpoint:     bus.ParseEndpointType(a.cfg.String("cluster-preferred-endpoint-type")),
		NodeTimeout:           a.cfg.Int("cluster-node-timeout"),
		QuorumTimeout:         a.cfg.Int("cluster-quorum-timeout"),
		ReplicaValidityFactor: a.cfg.Int("cluster-replica-validity-factor"),
		ReplPingPeriod:        a.cfg.Int("repl-ping-replica-period") * 1000,
		MigrationBarrier:      int(a.cfg.Int("cluster-migration-barrier")),
		ReplicaNoFailover:     a.cfg.Bool("cluster-replica-no-failover"),
		AllowReplicaMigration: a.cfg.Bool("cluster-allow-replica-migration"),
		WritableDelay:         bus.WritableDelay,
		Rand:                  a.rnd,
	}
}

func (a *clusterActor) announce() bus.Announce {
	c := a.cfg
	return bus.DeriveAnnounce(int(c.Int("port")), int(c.Int("cluster-port")), int(c.Int("cluster-announce-port")),
		int(c.Int("cluster-announce-bus-port")), c.String("cluster-announce-ip"), c.String("cluster-announce-hostname"))
}

// serve executes one request; the reply goes out only after the effects
// (nodes.conf first) are carried out.
func (a *clusterActor) serve(ctx actor.Context, r *request) {
	w := r.w
	mark := len(w.B)
	defer func() {
		if p := recover(); p != nil {
			w.B = w.B[:mark]
			a.log.Error().Interface("panic", p).Str("stack", string(debug.Stack())).Msg("CLUSTER command panicked")
			w.Error("ERR internal error executing 'cluster'")
			if err := a.apply(ctx); err != nil {
				w.B = w.B[:mark]
				a.die(err)
			}
		}
		if !a.setSlot.isParked(r) && !a.dead {
			r.done()
		}
	}()
	a.setSlot.serving(ctx, r)
	a.exec(w, r.args)
	if err := a.apply(ctx); err != nil {
		w.B = w.B[:mark] // no reply: the node stops
		a.die(err)
	}
}

// info is CLUSTER INFO with the links closed by their send limit (counted
// here: the state never sees a send buffer) added in.
func (a *clusterActor) info() string {
	text := a.st.Info()
	const key = "total_cluster_links_buffer_limit_exceeded:"
	i := strings.LastIndex(text, key)
	if a.bufLimitExceeded == 0 || i < 0 {
		return text
	}
	i += len(key)
	j := i + strings.Index(text[i:], "\r\n")
	if j < i {
		return text
	}
	n, _ := strconv.ParseUint(text[i:j], 10, 64)
	return text[:i] + strconv.FormatUint(n+a.bufLimitExceeded, 10) + text[j:]
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

// newRand returns the random source of the cluster logic, seeded from
// crypto/rand (simulations seed theirs).
func newRand() *rand.Rand {
	var seed [32]byte
	if _, err := crand.Read(seed[:]); err != nil {
		panic(err)
	}
	return rand.New(rand.NewChaCha8(seed))
}

// newID returns a random 40-character lowercase hex id.
func newID() string {
	var b [bus.IDLen / 2]byte
	if _, err := crand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b[:])
}
