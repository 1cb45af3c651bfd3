// Package sim runs several nodes' cluster-bus logic (bus.State) in one
// process over a simulated network driven by a fake clock and a seeded
// random generator, so that every run is reproducible from its seed.
//
// The network models what the bus relies on: outbound links that connect
// after a delay or fail (nothing listening, partition, random failure),
// per-frame latency with optional loss, duplication and reordering, link
// closes seen by the peer after a delay, partitions that silently drop
// frames, node crashes (peers see the connections reset) and restarts from
// the last saved nodes.conf text, possibly at a new address.
//
// While it runs it checks invariants after every step of every node: the
// state's own consistency (bus.State.Verify, sampled), and the persistence
// rule — whatever nodes.conf would record may change only in a step that
// asks for a Save, no frame may announce epochs that were not saved first,
// and no primary's frame may claim a configEpoch that was not saved
// durably (Effects.Sync) first. For failover scenarios it also checks that every vote
// (FAILOVER_AUTH_ACK) was saved durably as lastVoteEpoch before it left, that no
// node votes twice in an epoch, and (Config.CheckClaims) that no two up
// primaries claim a slot with the same configEpoch. Replication is modelled
// only as far as the bus needs it: a replica's link to its primary is down
// while either is down or they are partitioned (SetReplLinkDownSince),
// offsets are set by the scenarios (SetReplOffset), and a scenario answers
// a replica's AwaitOffset when it decides the replica caught up (Applied).
package sim

import (
	"container/heap"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"

	"google.golang.org/protobuf/proto"

	"github.com/slotd/slotd/bus"
	busv1 "github.com/slotd/slotd/proto/slotd/bus/v1"
)

// Config describes a simulated network.
type Config struct {
	Seed  uint64
	Nodes int
	// NodeTimeout is every node's cluster-node-timeout (ms); 0 means 2000.
	NodeTimeout int64
	// MinDelay and MaxDelay bound a frame's latency (ms); 0,0 means 1..10.
	MinDelay, MaxDelay int64
	// ConnectDelay bounds the time a dial takes (ms); 0 means 20.
	ConnectDelay int64
	// Loss, Dup and Reorder are the probabilities that a frame is lost,
	// delivered twice, or may overtake the frames sent before it.
	Loss, Dup, Reorder float64
	// DialFail is the probability that a dial fails although the peer is
	// reachable.
	DialFail float64
	// Codec sends every frame through bus.AppendFrame and bus.Decoder
	// instead of passing the pointer.
	Codec bool
	// CountBytes counts the encoded size of the frames each node sends.
	CountBytes bool
	// CheckSave verifies after every step that nodes.conf content changed
	// only with a Save effect (bus.State.ConfigDigest).
	CheckSave bool
	// CheckClaims verifies after every step that no two up primaries claim
	// a slot with the same configEpoch (failover.go).
	CheckClaims bool
	// Tune adjusts node i's options (at creation and at every restart).
	Tune func(i int, o *bus.Options)
}

// Node is one simulated node.
type Node struct {
	Index int
	ID    string // the id it was created with
	IP    string
	Port  int
	CPort int
	State *bus.State
	Up    bool
	// Saved is the last nodes.conf text it saved.
	Saved string
	// Replicate lists the Replicate effects it emitted, in order.
	Replicate []string
	// DropSlots lists the slots it was told to empty (DropSlots effects).
	DropSlots []int
	// Sent and Received count frames by type over the node's life.
	Sent, Received map[busv1.Type]int
	// SentBytes is the wire size of what it sent (with Config.CountBytes).
	SentBytes int
	// Promotions counts its Promote effects (PromotedAt: when); Pauses
	// lists the PauseWrites deadlines it was given (PausedAt: when) and
	// Unpauses when it was told UnpauseWrites.
	Promotions int
	PromotedAt []int64
	Pauses     []int64
	PausedAt   []int64
	Unpauses   []int64
	// Awaits lists the offsets it asked to be told about (AwaitOffset
	// effects); Net.Applied answers them.
	Awaits []uint64
	// Votes are the epochs it sent a FAILOVER_AUTH_ACK for, over its whole
	// life (restarts included).
	Votes map[uint64]string
	// ReplDown is what it was last told by SetReplLinkDownSince.
	ReplDown int64

	inc      int // incarnation: bumped by Crash, so stale events are dropped
	ends     map[bus.LinkID]*end
	dials    map[bus.LinkID]bool // dials in progress
	digest   uint64
	savedCE  uint64
	savedLVE uint64
	// syncedLVE and syncedCfg are lastVoteEpoch and the own configEpoch
	// as of the last durable save (Effects.Sync).
	syncedLVE uint64
	syncedCfg uint64
	steps     int
}

// end is one side of a simulated connection.
type end struct {
	node *Node
	inc  int
	link bus.LinkID
	open bool
	peer *end
	// last is the latest arrival time scheduled towards the peer: frames
	// are delivered in order unless reordered.
	last int64
}

// Net is a simulated network of nodes.
type Net struct {
	cfg    Config
	rng    *rand.Rand
	now    int64
	seq    uint64
	events eventQueue
	Nodes  []*Node
	// cut[i][j]: frames from i to j are dropped and dials fail.
	cut [][]bool
	err error
	// Trace, if set, receives a line per notable event.
	Trace func(string)
}

// Start is the simulated clock's origin (unix ms).
const Start = int64(1_700_000_000_000)

// New builds a network of cfg.Nodes fresh nodes (no slots, epoch 0, each
// knowing only itself), at 10.0.0.1:7000, 10.0.0.2:7000, ...
func New(cfg Config) *Net {
	if cfg.NodeTimeout == 0 {
		cfg.NodeTimeout = 2000
	}
	if cfg.MinDelay == 0 && cfg.MaxDelay == 0 {
		cfg.MinDelay, cfg.MaxDelay = 1, 10
	}
	if cfg.ConnectDelay == 0 {
		cfg.ConnectDelay = 20
	}
	n := &Net{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x5bd1e995)), now: Start}
	n.cut = make([][]bool, cfg.Nodes)
	for i := range cfg.Nodes {
		n.cut[i] = make([]bool, cfg.Nodes)
		nd := &Node{Index: i, IP: "10.0.0." + strconv.Itoa(i+1), Port: 7000, CPort: 17000,
			Sent: map[busv1.Type]int{}, Received: map[busv1.Type]int{}, Votes: map[uint64]string{}}
		nd.ID = n.randomID()
		nd.State = bus.New(nd.ID, n.randomID(), n.options(i))
		nd.Up = true
		nd.reset()
		nd.State.SetAnnounce(bus.Announce{Port: nd.Port, CPort: nd.CPort})
		n.Nodes = append(n.Nodes, nd)
		n.apply(nd)
		// Each node's cron runs at its own phase.
		n.scheduleTick(nd, n.now+1+n.rng.Int64N(bus.TickInterval))
	}
	return n
}

func (n *Net) options(i int) bus.Options {
	o := bus.DefaultOptions()
	o.NodeTimeout = n.cfg.NodeTimeout
	o.Rand = rand.New(rand.NewPCG(n.rng.Uint64(), n.rng.Uint64()))
	if n.cfg.Tune != nil {
		n.cfg.Tune(i, &o)
	}
	return o
}

func (n *Net) randomID() string {
	var b [20]byte
	for i := range b {
		b[i] = byte(n.rng.UintN(256))
	}
	return hex.EncodeToString(b[:])
}

func (nd *Node) reset() {
	nd.ends = map[bus.LinkID]*end{}
	nd.dials = map[bus.LinkID]bool{}
}

// Now is the simulated time (unix ms).
func (n *Net) Now() int64 { return n.now }

// Rand is the network's generator, for scenarios that need random choices
// reproducible from the seed.
func (n *Net) Rand() *rand.Rand { return n.rng }

// Err is the first invariant violation seen, if any.
func (n *Net) Err() error { return n.err }

func (n *Net) fail(nd *Node, format string, args ...any) {
	if n.err == nil {
		n.err = fmt.Errorf("t=%+dms node %d (%s): %s", n.now-Start, nd.Index, nd.State.MyID()[:8],
			fmt.Sprintf(format, args...))
	}
}

func (n *Net) trace(format string, args ...any) {
	if n.Trace != nil {
		n.Trace(fmt.Sprintf("t=%+d ", n.now-Start) + fmt.Sprintf(format, args...))
	}
}

// Do runs f on node i's state now (a CLUSTER command) and carries out the
// effects. It returns f's error.
func (n *Net) Do(i int, f func(s *bus.State, now int64) error) error {
	nd := n.Nodes[i]
	if !nd.Up {
		return fmt.Errorf("node %d is down", i)
	}
	err := f(nd.State, n.now)
	n.apply(nd)
	return err
}

// Applied tells replica i that it has applied its primary's stream up to
// off (State.ReplApplied, the answer to an AwaitOffset effect).
func (n *Net) Applied(i int, off uint64) error {
	return n.Do(i, func(s *bus.State, now int64) error { s.ReplApplied(now, off); return nil })
}

// Meet makes node i meet node j (CLUSTER MEET at j's current address).
func (n *Net) Meet(i, j int) error {
	nj := n.Nodes[j]
	return n.Do(i, func(s *bus.State, now int64) error { return s.Meet(now, nj.IP, nj.Port, nj.CPort) })
}

// Run advances the clock by d ms.
func (n *Net) Run(d int64) { n.runTo(n.now + d) }

// RunUntil advances the clock until cond holds (checked every 100 ms) or
// limit ms have passed; it reports whether cond held.
func (n *Net) RunUntil(limit int64, cond func() bool) bool {
	end := n.now + limit
	for {
		if cond() {
			return true
		}
		if n.now >= end || n.err != nil {
			return false
		}
		n.runTo(min(n.now+100, end))
	}
}

func (n *Net) runTo(t int64) {
	for len(n.events) > 0 && n.events[0].at <= t {
		ev := heap.Pop(&n.events).(*event)
		n.now = ev.at
		ev.fn()
	}
	n.now = t
}

func (n *Net) at(t int64, fn func()) {
	n.seq++
	heap.Push(&n.events, &event{at: t, seq: n.seq, fn: fn})
}

func (n *Net) delay() int64 {
	return n.cfg.MinDelay + n.rng.Int64N(n.cfg.MaxDelay-n.cfg.MinDelay+1)
}

func (n *Net) scheduleTick(nd *Node, t int64) {
	n.at(t, func() {
		if nd.Up {
			nd.State.Tick(n.now)
			n.apply(nd)
		}
		n.scheduleTick(nd, t+bus.TickInterval)
	})
}

// Partition cuts the network into the given groups: nodes in different
// groups cannot exchange frames or connect (nodes in no group are cut off
// from everyone). Established connections are not closed: their frames
// silently vanish, as on a real network.
func (n *Net) Partition(groups ...[]int) {
	group := make([]int, len(n.Nodes))
	for i := range group {
		group[i] = -1 - i
	}
	for g, members := range groups {
		for _, i := range members {
			group[i] = g
		}
	}
	for i := range n.cut {
		for j := range n.cut[i] {
			n.cut[i][j] = i != j && group[i] != group[j]
		}
	}
	n.replLinks()
}

// Heal removes every partition.
func (n *Net) Heal() {
	for i := range n.cut {
		clear(n.cut[i])
	}
	n.replLinks()
}

// Crash stops node i: its connections are reset (peers see them close
// unless partitioned away) and its in-flight work is lost. Its saved
// nodes.conf survives.
func (n *Net) Crash(i int) {
	nd := n.Nodes[i]
	if !nd.Up {
		return
	}
	nd.Up = false
	nd.inc++
	// In link order: map order would make the run depend on more than
	// the seed.
	ids := make([]bus.LinkID, 0, len(nd.ends))
	for id := range nd.ends {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		e := nd.ends[id]
		e.open = false
		n.fin(e)
	}
	nd.reset()
	n.replLinks()
	n.trace("node %d crashed", i)
}

// Restart brings node i back from its saved nodes.conf, at ip (its current
// address if empty).
func (n *Net) Restart(i int, ip string) error {
	nd := n.Nodes[i]
	if nd.Up {
		return fmt.Errorf("node %d is up", i)
	}
	if ip != "" {
		nd.IP = ip
	}
	st, err := bus.Load(nd.Saved, n.now, n.options(i), n.randomID)
	if err != nil {
		return err
	}
	nd.State = st
	nd.Up = true
	nd.reset()
	st.SetAnnounce(bus.Announce{Port: nd.Port, CPort: nd.CPort})
	// The shell rewrites nodes.conf at start.
	st.TakeEffects()
	n.save(nd)
	nd.syncedLVE, nd.syncedCfg = st.LastVoteEpoch(), st.Myself().ConfigEpoch
	nd.ReplDown = 0
	n.replLinks()
	n.trace("node %d restarted at %s", i, nd.IP)
	return nil
}

// save records node nd's nodes.conf.
func (n *Net) save(nd *Node) {
	nd.Saved = nd.State.Config()
	nd.digest = nd.State.ConfigDigest()
	nd.savedCE = nd.State.CurrentEpoch()
	nd.savedLVE = nd.State.LastVoteEpoch()
}

// apply carries out the effects of nd's last step with bus.Apply, as the
// cluster actor does, checking invariants.
func (n *Net) apply(nd *Node) {
	st := nd.State
	fx := st.TakeEffects()
	nd.steps++
	if !fx.Save && n.cfg.CheckSave && st.ConfigDigest() != nd.digest {
		n.fail(nd, "config changed without Save:\nsaved:\n%s\nnow:\n%s", nd.Saved, st.Config())
	}
	if nd.steps%200 == 0 {
		if err := st.Verify(); err != nil {
			n.fail(nd, "verify: %v", err)
		}
	}
	_ = bus.Apply(fx, executor{n: n, nd: nd}) // a simulated save never fails
	if fx.Replicate != "" || fx.Promote {
		n.replLinks()
	}
	if n.cfg.CheckClaims && (fx.Publish || fx.Save) {
		n.checkClaims(nd)
	}
}

// executor is the simulation's bus.Executor for one step of node nd: it
// records the effects on the node and checks the frames against what was
// saved before them.
type executor struct {
	n  *Net
	nd *Node
}

func (x executor) SaveConfig(durable bool) error {
	x.n.save(x.nd)
	if durable {
		x.nd.syncedLVE, x.nd.syncedCfg = x.nd.State.LastVoteEpoch(), x.nd.State.Myself().ConfigEpoch
	}
	return nil
}

// SyncConfig: a save that was not durable stays so for the checks (a
// crash keeps the text: Restart loads Saved).
func (x executor) SyncConfig() {}

func (x executor) Log(line string) { x.n.trace("node %d log: %s", x.nd.Index, line) }

func (x executor) Promote() {
	x.nd.Promotions++
	x.nd.PromotedAt = append(x.nd.PromotedAt, x.n.now)
	x.n.trace("node %d promoted, epoch %d", x.nd.Index, x.nd.State.Myself().ConfigEpoch)
}

// Publish: the simulation has no event loops to hand the table to.
func (x executor) Publish() {}

func (x executor) Dial(d bus.Dial) { x.n.dial(x.nd, d) }

func (x executor) Send(s bus.Send) {
	n, nd, st := x.n, x.nd, x.nd.State
	h := s.Frame.GetHeader()
	if h.GetCurrentEpoch() > nd.savedCE {
		n.fail(nd, "frame announces currentEpoch %d, saved %d", h.GetCurrentEpoch(), nd.savedCE)
	}
	if h.GetSender() != st.MyID() {
		n.fail(nd, "frame from %s", h.GetSender())
	}
	if me := st.Myself(); me.IsMaster() && h.GetConfigEpoch() > nd.syncedCfg {
		n.fail(nd, "frame claims configEpoch %d, durable %d", h.GetConfigEpoch(), nd.syncedCfg)
	}
	if h.GetType() == busv1.Type_TYPE_FAILOVER_AUTH_ACK {
		n.checkVote(nd, s)
	}
	n.send(nd, s)
}

func (x executor) Close(l bus.LinkID) {
	n, nd := x.n, x.nd
	n.trace("%d closes link %d", nd.Index, l)
	delete(nd.dials, l)
	if e := nd.ends[l]; e != nil {
		delete(nd.ends, l)
		e.open = false
		n.fin(e)
	}
}

// Deliver: the simulation has no local subscribers.
func (x executor) Deliver(bus.Delivery) {}

func (x executor) DropSlots(slots []int) { x.nd.DropSlots = append(x.nd.DropSlots, slots...) }

func (x executor) Replicate(primary string) {
	x.nd.Replicate = append(x.nd.Replicate, primary)
	x.n.trace("node %d replicates %s", x.nd.Index, primary[:8])
}

func (x executor) UnpauseWrites() { x.nd.Unpauses = append(x.nd.Unpauses, x.n.now) }

// PauseWrites: writes stop at once in the simulation, and the shell
// confirms right after this step: the offset is final.
func (x executor) PauseWrites(untilMs int64) {
	n, nd := x.n, x.nd
	nd.Pauses = append(nd.Pauses, untilMs)
	nd.PausedAt = append(nd.PausedAt, n.now)
	inc := nd.inc
	n.at(n.now, func() {
		if nd.Up && nd.inc == inc {
			nd.State.WritesPaused(n.now, nd.State.ReplOffset())
			n.apply(nd)
		}
	})
}

func (x executor) AwaitOffset(offset uint64) { x.nd.Awaits = append(x.nd.Awaits, offset) }

// listener is the up node listening at addr, if any.
func (n *Net) listener(addr string) *Node {
	for _, nd := range n.Nodes {
		if nd.Up && addr == nd.IP+":"+strconv.Itoa(nd.CPort) {
			return nd
		}
	}
	return nil
}

func (n *Net) dial(from *Node, d bus.Dial) {
	from.dials[d.Link] = true
	inc := from.inc
	n.at(n.now+1+n.rng.Int64N(n.cfg.ConnectDelay), func() {
		if !from.Up || from.inc != inc || !from.dials[d.Link] {
			return
		}
		delete(from.dials, d.Link)
		to := n.listener(d.Addr)
		switch {
		case to == nil:
			// Connection refused.
		case n.cut[from.Index][to.Index] || n.cut[to.Index][from.Index]:
			// Times out much later.
			n.at(n.now+n.cfg.NodeTimeout/2+n.rng.Int64N(n.cfg.NodeTimeout/2+1), func() {
				if from.Up && from.inc == inc {
					from.State.LinkClosed(n.now, d.Link)
					n.apply(from)
				}
			})
			return
		case n.rng.Float64() < n.cfg.DialFail:
			to = nil
		}
		if to == nil {
			n.trace("%d dial %d to %s (%s) failed", from.Index, d.Link, d.Addr, short(d.NodeID))
			from.State.LinkClosed(n.now, d.Link)
			n.apply(from)
			return
		}
		a := &end{node: from, inc: inc, link: d.Link, open: true}
		b := &end{node: to, inc: to.inc, open: true}
		a.peer, b.peer = b, a
		b.link = to.State.Accept(n.now, to.IP, from.IP)
		from.ends[a.link] = a
		to.ends[b.link] = b
		n.apply(to)
		n.trace("%d dial %d to %s (%s) connected: node %d link %d", from.Index, d.Link, d.Addr, short(d.NodeID),
			to.Index, b.link)
		from.State.LinkConnected(n.now, d.Link)
		n.apply(from)
	})
}

func (n *Net) send(from *Node, s bus.Send) {
	from.Sent[s.Frame.GetHeader().GetType()]++
	if n.cfg.CountBytes {
		from.SentBytes += 4 + proto.Size(s.Frame)
	}
	e := from.ends[s.Link]
	if e == nil || !e.open {
		return
	}
	if n.rng.Float64() < n.cfg.Loss {
		n.trace("%d lost %s on link %d", from.Index, s.Frame.GetHeader().GetType(), s.Link)
		return
	}
	f := s.Frame
	if n.cfg.Codec {
		var err error
		if f, err = roundTrip(f); err != nil {
			n.fail(from, "codec: %v", err)
			return
		}
	}
	t := n.now + n.delay()
	if n.rng.Float64() >= n.cfg.Reorder {
		t = max(t, e.last)
	}
	e.last = max(e.last, t)
	n.deliver(e, f, t)
	if n.rng.Float64() < n.cfg.Dup {
		n.deliver(e, f, t+n.delay())
	}
}

func (n *Net) deliver(e *end, f *busv1.Frame, t int64) {
	n.at(t, func() {
		p := e.peer
		to := p.node
		if !p.open || !to.Up || to.inc != p.inc || n.cut[e.node.Index][to.Index] {
			return
		}
		to.Received[f.GetHeader().GetType()]++
		if n.Trace != nil {
			n.trace("%d->%d %s link %d->%d gossip=%d", e.node.Index, to.Index, f.GetHeader().GetType(), e.link,
				p.link, len(f.Gossip))
		}
		to.State.Receive(n.now, p.link, f)
		n.apply(to)
	})
}

// fin tells e's peer, after the frames already on their way, that the
// connection closed (unless a partition swallows it).
func (n *Net) fin(e *end) {
	t := max(n.now+n.delay(), e.last)
	n.at(t, func() {
		p := e.peer
		to := p.node
		if !p.open || !to.Up || to.inc != p.inc || n.cut[e.node.Index][to.Index] {
			return
		}
		p.open = false
		delete(to.ends, p.link)
		to.State.LinkClosed(n.now, p.link)
		n.apply(to)
	})
}

type event struct {
	at  int64
	seq uint64
	fn  func()
}

type eventQueue []*event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(*event)) }
func (q *eventQueue) Pop() any {
	old := *q
	ev := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	return ev
}
