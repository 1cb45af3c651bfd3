package repl

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/shard"
	"github.com/slotd/slotd/netio/config"
	"github.com/slotd/slotd/netio/replproto"
)

// Server is what the engine needs from the node's client server.
type Server interface {
	SetReplGate(bits uint32)
	DeliverPublish(channel, msg []byte)
	DeliverSPublish(channel, msg []byte)
	// AddMasterLink shows a replica's link to its primary in CLIENT LIST
	// (flags=M) and lets CLIENT KILL close it.
	AddMasterLink(remote, local string, closeFn func()) replproto.MasterLink
	// WritesPaused reports a client pause of writes (a manual failover's).
	WritesPaused() bool
	// LoadEvents marks an events point of a full sync's load (once every
	// loading-process-events-interval-bytes loaded): commands held until
	// then get LOADING.
	LoadEvents()
	// PausedFor is how long the node stays frozen by DEBUG SLEEP (0 when
	// it is not): a frozen node does not reconnect to its primary.
	PausedFor() time.Duration
}

// Manager is a node's replication state: its role, replication ids, the
// feeds of its replicas and, on a replica, the link to its primary. Role
// changes are serialized by mu; nothing that talks to the shard actors
// runs under mu (an actor run inline may call back into the manager).
type Manager struct {
	cfg    *config.Config
	log    zerolog.Logger
	shards *shard.Group
	srv    Server

	mu       sync.Mutex
	replid   string
	replid2  string
	second   []int64 // own offsets when replid2 was retired (nil: none)
	feeds    map[replproto.FeedConn]*feed
	nextFeed int
	waiters  map[*waiter]struct{}
	link     *link // nil on a primary
	role     uint64
	// replicating mirrors link != nil without the lock (Replicating).
	replicating atomic.Bool
	frozen      *frozenState // Freeze before a final snapshot (restart.go)
	fo          failover     // FAILOVER's state (failover.go)

	pauseWrites   func(settled func()) // Options.PauseWrites
	unpauseWrites func()

	firstMu    sync.Mutex // psync's first-backlog step
	opsMu      sync.Mutex
	ops        []func()
	opsRunning bool

	keyLoadDelay                            config.Var   // key-load-delay, read per key loaded
	loadInterval                            config.Var   // loading-process-events-interval-bytes
	replicaHard                             atomic.Int64 // client-output-buffer-limit replica hard
	syncFull, syncPartialOK, syncPartialErr atomic.Int64
	stop                                    chan struct{}
	stopOnce                                sync.Once
}

// Options configure New.
type Options struct {
	Config *config.Config
	Log    zerolog.Logger
	Shards *shard.Group
	Server Server
	// PauseWrites pauses client writes until UnpauseWrites (FAILOVER) and
	// calls settled once the writes dispatched before it have finished.
	PauseWrites   func(settled func())
	UnpauseWrites func()
}

// New creates the engine of a primary node (no replica, no backlog yet).
func New(o Options) *Manager {
	m := &Manager{cfg: o.Config, log: o.Log.With().Str("component", "repl").Logger(), shards: o.Shards,
		srv: o.Server, replid: newReplID(), replid2: zeroID, feeds: map[replproto.FeedConn]*feed{},
		waiters: map[*waiter]struct{}{}, stop: make(chan struct{})}
	m.pauseWrites, m.unpauseWrites = o.PauseWrites, o.UnpauseWrites
	m.replicaHard.Store(m.cfg.ClientOutputBufferLimits()[config.ClassReplica].Hard)
	m.keyLoadDelay = m.cfg.Var("key-load-delay")
	m.loadInterval = m.cfg.Var("loading-process-events-interval-bytes")
	m.cfg.OnChange("client-output-buffer-limit", func(string) {
		m.replicaHard.Store(m.cfg.ClientOutputBufferLimits()[config.ClassReplica].Hard)
	})
	for _, d := range []string{"replica-read-only", "replica-serve-stale-data"} {
		m.cfg.OnChange(d, func(string) { m.updateGate() })
	}
	m.cfg.OnChange("repl-backlog-size", func(string) {
		if m.shards.StreamsOn() {
			m.shards.EnableStreams(m.cfg.Int("repl-backlog-size"), nil)
		}
	})
	m.shards.ReplicaReadOnly.Store(m.cfg.Bool("replica-read-only"))
	m.cfg.OnChange("replica-read-only", func(string) {
		m.shards.ReplicaReadOnly.Store(m.cfg.Bool("replica-read-only"))
	})
	go m.cron()
	return m
}

// Stop ends the link and the background work.
func (m *Manager) Stop() {
	m.stopOnce.Do(func() {
		close(m.stop)
		m.mu.Lock()
		l := m.link
		m.link = nil
		m.mu.Unlock()
		m.Settle()
		if l != nil {
			l.halt()
		}
		m.dropFeeds()
	})
}

const zeroID = "0000000000000000000000000000000000000000"

func newReplID() string {
	var b [20]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func itoa(n int) string { return strconv.Itoa(n) }

// ---- role changes (the Go API the cluster actor uses too)

// StartReplicaOf makes the node a replica of host:port, dropping its
// replicas (they must resync with the new history). It returns at once;
// the link connects, syncs and reconnects in the background. It reports
// false when the node already replicates from host:port.
func (m *Manager) StartReplicaOf(host string, port int) bool {
	return m.startReplicaOf(host, port, false)
}

// startReplicaOf is StartReplicaOf; with failover the link is FAILOVER's
// hand-off to its target (its PSYNC carries FAILOVER).
func (m *Manager) startReplicaOf(host string, port int, failover bool) bool {
	m.mu.Lock()
	if l := m.link; l != nil && l.host == host && l.port == port {
		m.mu.Unlock()
		return false
	}
	old := m.link
	// The node's own history is what it offers first: a primary that was
	// its sibling (or its own replica) may continue from it.
	l := newLink(m, host, port, m.replid, m.shards.Offsets())
	m.link = l
	if failover {
		m.fo.link = l
	}
	m.role++
	m.replicating.Store(true)
	m.mu.Unlock()
	m.updateGate()
	m.log.Info().Str("master", l.addr()).Msg("Connecting to MASTER")
	m.do(func() {
		if old != nil {
			old.halt()
		}
		m.dropFeeds()
		m.failWaiters()
		wait(func(done func()) { m.shards.SetReplica(true, done) })
		m.enableStreams()
		go l.run()
	})
	return true
}

// BecomePrimary stops replicating and keeps the data: the node gets a new
// replication id and keeps the old one (with its offsets) as replid2, so
// replicas of the same primary can continue from it. It is a no-op on a
// primary. It returns at once.
func (m *Manager) BecomePrimary() { m.Promote(nil) }

// Promote is BecomePrimary that calls done (if not nil), off the caller's
// goroutine, once the shards stream their own writes under the new
// replication id: from then on a client write is replicated. On a primary
// done is called at once.
func (m *Manager) Promote(done func()) {
	m.mu.Lock()
	l := m.link
	if l == nil {
		m.mu.Unlock()
		if done != nil {
			done()
		}
		return
	}
	m.link = nil
	m.role++
	m.replicating.Store(false)
	m.mu.Unlock()
	m.updateGate()
	m.do(func() {
		l.halt()
		wait(func(done func()) { m.shards.SetReplica(false, done) })
		m.mu.Lock()
		if m.link == nil {
			m.replid2 = m.replid
			m.second = m.shards.Offsets()
			m.replid = newReplID()
		}
		m.mu.Unlock()
		if done != nil {
			done()
		}
		// Replicas learn the new id by reconnecting (PSYNC then continues).
		m.dropFeeds()
		m.log.Info().Msg("MASTER MODE enabled")
	})
}

// do queues a role change; they run one at a time, in order, off the
// event loops.
func (m *Manager) do(fn func()) {
	m.opsMu.Lock()
	m.ops = append(m.ops, fn)
	if !m.opsRunning {
		m.opsRunning = true
		go m.runOps()
	}
	m.opsMu.Unlock()
}

func (m *Manager) runOps() {
	for {
		m.opsMu.Lock()
		if len(m.ops) == 0 {
			m.opsRunning = false
			m.opsMu.Unlock()
			return
		}
		fn := m.ops[0]
		m.ops = m.ops[1:]
		m.opsMu.Unlock()
		fn()
	}
}

// Settle waits until queued role changes have been carried out.
func (m *Manager) Settle() {
	done := make(chan struct{})
	m.do(func() { close(done) })
	<-done
}

// wait runs an asynchronous shard operation and waits for it (never call
// on an event loop).
func wait(op func(done func())) {
	c := make(chan struct{})
	op(func() { close(c) })
	<-c
}

// dropFeeds disconnects every replica.
func (m *Manager) dropFeeds() {
	m.mu.Lock()
	feeds := m.feedList()
	m.mu.Unlock()
	for _, f := range feeds {
		f.kill("")
	}
}

// isLink reports whether l is still the node's link.
func (m *Manager) isLink(l *link) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.link == l
}

// beginFullSync starts a full sync from a primary whose history is id and
// whose shards start at starts. The node's replicas are dropped (their
// history ends here) and its offset reads 0 until the sync is done. With
// a spool the old data stays and is served until the snapshot is
// complete (startLoad); without one, the data goes now and the frames are
// applied as they come.
func (m *Manager) beginFullSync(l *link, id string, starts []int64, sp *spool) error {
	if !m.isLink(l) {
		return errHalted
	}
	l.fullSync.Store(true)
	l.syncRead.Store(0)
	l.spooled.Store(0)
	l.mu.Lock()
	l.synced = false
	l.masterID = id
	l.syncStarts = append([]int64(nil), starts...)
	l.read = append([]int64(nil), starts...)
	l.applied = append([]int64(nil), starts...)
	l.mu.Unlock()
	l.asyncLoading.Store(sp != nil && sp.file == nil)
	l.setState(linkSync)
	m.dropFeeds()
	if sp != nil {
		m.updateGate()
		return nil
	}
	return m.startLoad(l)
}

// startLoad drops the old data and resets the shards' streams to the
// primary's history: the full sync's frames are applied next, and clients
// get LOADING meanwhile.
func (m *Manager) startLoad(l *link) error {
	if !m.isLink(l) {
		return errHalted
	}
	l.mu.Lock()
	id, starts := l.masterID, l.syncStarts
	l.mu.Unlock()
	l.asyncLoading.Store(false)
	l.loading.Store(true)
	m.updateGate()
	if sp := l.spooled.Load(); sp > 0 {
		m.log.Info().Str("master", l.addr()).Msgf("MASTER <-> REPLICA sync: receiving %d bytes from master to disk", sp)
	}
	m.log.Info().Str("master", l.addr()).Msg("MASTER <-> REPLICA sync: Flushing old data")
	same := len(starts) == m.shards.N()
	wait(func(done func()) { m.shards.DropAll(done) })
	var offs []int64
	if same {
		offs = starts
	}
	wait(func(done func()) { m.shards.ResetStreams(offs, done) })
	m.mu.Lock()
	if m.link == l {
		if same {
			m.replid = id
		} else {
			m.replid = newReplID()
		}
		m.replid2, m.second = zeroID, nil
	}
	m.mu.Unlock()
	m.log.Info().Str("master", l.addr()).Msg("MASTER <-> REPLICA sync: Loading DB in memory")
	return nil
}

// syncDone ends a full sync once every record received is applied.
func (m *Manager) syncDone(l *link) error {
	wait(m.shards.Barrier)
	if !m.isLink(l) {
		return errHalted
	}
	l.mu.Lock()
	l.synced = true
	l.applied = append(l.applied[:0], l.read...)
	l.mu.Unlock()
	l.loading.Store(false)
	l.fullSync.Store(false)
	l.setState(linkConnected)
	m.log.Info().Str("master", l.addr()).Msg("MASTER <-> REPLICA sync: Finished with success")
	return nil
}

// continued handles +CONTINUE: the primary may have a new id (it was
// promoted); with the same shard count this node's streams are the
// primary's, so it shifts its ids as Redis does.
func (m *Manager) continued(l *link, id string) error {
	if !m.isLink(l) {
		return errHalted
	}
	l.mu.Lock()
	old := l.masterID
	l.masterID = id
	n := len(l.read)
	l.mu.Unlock()
	if id != old {
		m.mu.Lock()
		if m.link == l && n == m.shards.N() && m.replid == old {
			m.replid2 = old
			m.second = m.shards.Offsets()
			m.replid = id
		}
		m.mu.Unlock()
		m.dropFeeds()
	}
	l.loading.Store(false)
	l.fullSync.Store(false)
	l.setState(linkConnected)
	return nil
}

// ReplOffset is the node's replication offset: on a replica how much of
// its primary's stream it has applied (failover rank), on a primary its
// own stream offset.
func (m *Manager) ReplOffset() int64 {
	m.mu.Lock()
	l := m.link
	m.mu.Unlock()
	if l != nil {
		if l.fullSync.Load() {
			// Redis's offset with no master client: peers show the
			// replica as loading and leave it out of CLUSTER SLOTS.
			return 0
		}
		return sum(l.appliedVec())
	}
	return sum(m.shards.Offsets())
}

// Status is the replication state the cluster actor needs for a replica
// (failover eligibility and rank).
type Status struct {
	Replica    bool
	Host       string
	Port       int
	LinkUp     bool
	DownSince  time.Time // when the link went down (zero while up)
	LastIO     time.Time // last frame from the primary
	Syncing    bool      // full sync in progress
	ReplOffset int64     // see ReplOffset
}

// Status reports the node's replication state.
func (m *Manager) Status() Status {
	m.mu.Lock()
	l := m.link
	m.mu.Unlock()
	if l == nil {
		return Status{ReplOffset: sum(m.shards.Offsets())}
	}
	st := Status{Replica: true, Host: l.host, Port: l.port, ReplOffset: sum(l.appliedVec())}
	st.LinkUp = l.state.Load() == linkConnected
	st.Syncing = l.state.Load() == linkSync
	if !st.LinkUp {
		st.DownSince = time.UnixMilli(l.downSince.Load())
	}
	if io := l.lastIO.Load(); io > 0 {
		st.LastIO = time.UnixMilli(io)
	}
	return st
}

// Offsets returns the node's own stream offsets, one per shard.
func (m *Manager) Offsets() []int64 { return m.shards.Offsets() }

// ---- replproto.Replication

// ReplicaOf implements replproto.Replication.
func (m *Manager) ReplicaOf(host string, port int) string {
	m.mu.Lock()
	fo := m.failingOver()
	m.mu.Unlock()
	if fo {
		return "-ERR REPLICAOF not allowed while failing over."
	}
	if host == "" {
		m.BecomePrimary()
		return "OK"
	}
	if !m.StartReplicaOf(host, port) {
		return "OK Already connected to specified master"
	}
	return "OK"
}

// SyncStats implements replproto.Replication.
func (m *Manager) SyncStats() (full, partialOK, partialErr int64) {
	return m.syncFull.Load(), m.syncPartialOK.Load(), m.syncPartialErr.Load()
}

// Replicating reports whether the node is a replica, without taking any
// lock: the log writer asks it for every line's role character, from code
// that may hold the manager's own lock.
func (m *Manager) Replicating() bool { return m.replicating.Load() }

// IsReplica implements replproto.Replication.
func (m *Manager) IsReplica() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.link != nil
}

func (m *Manager) enableStreams() {
	if m.shards.StreamsOn() {
		return
	}
	done := make(chan struct{})
	m.shards.EnableStreams(m.cfg.Int("repl-backlog-size"), func() { close(done) })
	<-done
}

// updateGate publishes what a replica refuses to clients.
func (m *Manager) updateGate() {
	m.mu.Lock()
	l := m.link
	m.mu.Unlock()
	var bits uint32
	if l != nil {
		bits |= replproto.GateReplica
		if m.cfg.Bool("replica-read-only") {
			bits |= replproto.GateReadOnly
		}
		st := l.state.Load()
		if st != linkConnected && !m.cfg.Bool("replica-serve-stale-data") {
			bits |= replproto.GateStaleDeny
		}
		if l.loading.Load() {
			bits |= replproto.GateLoading
		}
		if l.asyncLoading.Load() {
			bits |= replproto.GateAsyncLoading
		}
	}
	m.srv.SetReplGate(bits)
}

// PSync implements replproto.Replication.
func (m *Manager) PSync(req replproto.PSyncRequest, conn replproto.FeedConn, reply func(string, bool)) {
	go m.psync(req, conn, reply)
}

func (m *Manager) psync(req replproto.PSyncRequest, conn replproto.FeedConn, reply func(string, bool)) {
	if !hasCapa(req.Capa, "slotd") {
		reply("ERR slotd replicates only to slotd replicas", true)
		conn.Close()
		return
	}
	if req.Failover && !m.promoteFor(req, reply) {
		conn.Close()
		return
	}
	m.mu.Lock()
	if m.failingOver() {
		m.mu.Unlock()
		reply("NOMASTERLINK Can't SYNC while failing over", true)
		conn.Close()
		return
	}
	if l := m.link; l != nil && l.state.Load() != linkConnected {
		m.mu.Unlock()
		reply("NOMASTERLINK Can't SYNC while not connected with my master", true)
		conn.Close()
		return
	}
	m.mu.Unlock()
	// Two replicas' first PSYNCs at once must not each start a new id
	// (one would sync under an id the other replaced): firstMu makes the
	// check, the backlog's start and the id's reading one step.
	m.firstMu.Lock()
	first := !m.shards.StreamsOn()
	m.enableStreams()
	m.mu.Lock()
	if first && m.link == nil {
		// A backlog created from scratch holds no past history: like
		// Redis, start a new id.
		m.replid, m.replid2, m.second = newReplID(), zeroID, nil
	}
	m.nextFeed++
	f := newFeed(m, conn, m.nextFeed, req.IP, req.ListeningPort)
	m.feeds[conn] = f
	replid, replid2, second := m.replid, m.replid2, m.second
	role := m.role
	m.mu.Unlock()
	m.firstMu.Unlock()
	conn.OnClose(f.gone)

	n := m.shards.N()
	vec, ok := parseVec(req.Offsets)
	partial := ok && len(vec) == n &&
		(req.ReplID == replid || (req.ReplID == replid2 && second != nil && covers(second, vec)))
	if partial {
		// Phase one: does every backlog still hold the replica's offsets?
		// (checked again, atomically, when attaching).
		partial = m.attachAll(f, vec, true)
		if !partial && f.dead.Load() {
			reply("ERR the backlog moved on during the partial resync, retry", true)
			return
		}
	}
	if partial {
		if !m.sameRole(role) {
			reply(errRoleChanged, true)
			conn.Close()
			return
		}
		f.state.Store(feedOnline)
		f.ack(vec)
		m.syncPartialOK.Add(1)
		reply("CONTINUE "+replid, false)
		m.log.Info().Str("replica", f.addr()).Msg("Partial resynchronization request accepted")
		return
	}
	if req.ReplID != "?" {
		m.syncPartialErr.Add(1)
	}
	m.syncFull.Add(1)
	f.pace() // rdb-key-save-delay, before any shard writes to f
	starts := make([]int64, n)
	var wg sync.WaitGroup
	wg.Add(n)
	for i := 0; i < n; i++ {
		m.shards.Attach(i, f, -1, func(_ bool, start int64) {
			starts[i] = start
			wg.Done()
		})
	}
	wg.Wait()
	if !m.sameRole(role) {
		reply(errRoleChanged, true)
		conn.Close()
		return
	}
	f.state.Store(feedSync)
	reply("FULLRESYNC "+replid+" "+formatVec(starts), false)
	m.log.Info().Str("replica", f.addr()).Msg("Starting full resynchronization")
	go f.fullSync()
}

// promoteFor handles PSYNC ... FAILOVER on a replica: sent by its own
// primary (the replication id it follows), it makes the node a primary
// before the PSYNC goes on; otherwise it answers Redis's error and
// reports false.
func (m *Manager) promoteFor(req replproto.PSyncRequest, reply func(string, bool)) bool {
	m.mu.Lock()
	replica, same := m.link != nil, m.replid == req.ReplID
	m.mu.Unlock()
	m.log.Warn().Msg("Failover request received for replid " + req.ReplID + ".")
	switch {
	case !replica:
		reply("ERR PSYNC FAILOVER can't be sent to a master.", true)
		return false
	case !same:
		reply("ERR PSYNC FAILOVER replid must match my replid.", true)
		return false
	}
	done := make(chan struct{})
	m.Promote(func() { close(done) })
	<-done
	m.log.Info().Msg("MASTER MODE enabled (failover request from " + req.IP + ")")
	return true
}

// attachAll attaches f to every shard from vec (partial resync). When
// check is set it first only asks whether each backlog covers its offset;
// if a shard's backlog moved on between the check and the attach, the
// feed is closed (the replica retries and gets a full sync).
func (m *Manager) attachAll(f *feed, vec []int64, check bool) bool {
	n := len(vec)
	oks := make([]bool, n)
	var wg sync.WaitGroup
	if check {
		wg.Add(n)
		for i := 0; i < n; i++ {
			m.shards.Covers(i, vec[i], func(ok bool) {
				oks[i] = ok
				wg.Done()
			})
		}
		wg.Wait()
		for _, ok := range oks {
			if !ok {
				return false
			}
		}
	}
	wg.Add(n)
	for i := 0; i < n; i++ {
		m.shards.Attach(i, f, vec[i], func(ok bool, _ int64) {
			oks[i] = ok
			wg.Done()
		})
	}
	wg.Wait()
	for _, ok := range oks {
		if !ok {
			f.kill("backlog overrun during partial resync")
			return false
		}
	}
	return true
}

const errRoleChanged = "ERR the replication role changed, retry"

func (m *Manager) sameRole(role uint64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.role == role
}

func hasCapa(capa []string, c string) bool {
	for _, x := range capa {
		if x == c {
			return true
		}
	}
	return false
}

func (m *Manager) removeFeed(f *feed) {
	m.mu.Lock()
	if m.feeds[f.conn] == f {
		delete(m.feeds, f.conn)
	}
	m.mu.Unlock()
	m.shards.Detach(f, nil)
	m.log.Info().Str("replica", f.addr()).Msg("Connection with replica lost")
	m.checkWaiters() // a SETSLOT no longer waits for it
}

// pingReplicas puts a PING in the stream every repl-ping-replica-period
// seconds while the node has replicas, as Redis's replicationCron does:
// replicas see their primary alive in a quiet stream, and their offsets
// move past 0 (peers show a replica whose offset is 0 as loading and
// leave it out of CLUSTER SLOTS). Not while writes are paused: a manual
// failover waits for the replica to reach the paused offset.
func (m *Manager) pingReplicas(loops int64) {
	period := m.cfg.Int("repl-ping-replica-period")
	if period <= 0 || loops%period != 0 || m.IsReplica() || m.srv.WritesPaused() {
		return
	}
	m.mu.Lock()
	n := len(m.feeds)
	m.mu.Unlock()
	if n > 0 {
		m.shards.StreamAdmin(0, [][]byte{[]byte("PING")}, func(bool) {})
	}
}

func (m *Manager) feedList() []*feed {
	out := make([]*feed, 0, len(m.feeds))
	for _, f := range m.feeds {
		out = append(out, f)
	}
	return out
}

// sortedFeeds lists the feeds in connection order (INFO, ROLE).
func (m *Manager) sortedFeeds() []*feed {
	m.mu.Lock()
	out := m.feedList()
	m.mu.Unlock()
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].id < out[j-1].id; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// Ack implements replproto.Replication.
func (m *Manager) Ack(conn replproto.FeedConn, offsets string) {
	m.mu.Lock()
	f := m.feeds[conn]
	m.mu.Unlock()
	if f == nil {
		return
	}
	v, ok := parseVec(offsets)
	if !ok {
		return
	}
	f.ack(v)
	m.checkWaiters()
}

// Publish forwards a PUBLISH (shard false) or SPUBLISH to the replicas.
func (m *Manager) Publish(sharded bool, channel, msg []byte) {
	m.mu.Lock()
	if len(m.feeds) == 0 {
		m.mu.Unlock()
		return
	}
	feeds := m.feedList()
	m.mu.Unlock()
	kind := "PUBLISH"
	if sharded {
		kind = "SPUBLISH"
	}
	rec := engine.AppendRecord(nil, -1, [][]byte{[]byte(kind), channel, msg})
	for _, f := range feeds {
		if f.state.Load() == feedOnline {
			f.send(framePublish, rec)
		}
	}
}

// ---- background work

// cron pings the replicas every second (the replica's timeout counts from
// the last frame), drops replicas silent for longer than repl-timeout.
func (m *Manager) cron() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for loops := int64(1); ; loops++ {
		select {
		case <-m.stop:
			return
		case <-t.C:
		}
		m.pingReplicas(loops)
		timeout := m.cfg.Int("repl-timeout") * 1000
		now := time.Now().UnixMilli()
		m.mu.Lock()
		feeds := m.feedList()
		m.mu.Unlock()
		for _, f := range feeds {
			if now-f.ackAt.Load() > timeout {
				f.kill("timeout, no ACK from replica")
				continue
			}
			f.send(framePing, nil)
		}
	}
}
