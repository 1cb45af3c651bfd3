package bus

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sort"
	"strings"

	busv1 "github.com/slotd/slotd/proto/slotd/bus/v1"
	"github.com/slotd/slotd/slots"
)

// EndpointType is cluster-preferred-endpoint-type: what CLUSTER SLOTS,
// CLUSTER SHARDS and MOVED/ASK redirects name a node by.
type EndpointType uint8

// Endpoint types.
const (
	EndpointIP EndpointType = iota
	EndpointHostname
	EndpointUnknown
)

// ParseEndpointType maps a cluster-preferred-endpoint-type value
// ("ip", "hostname", "unknown-endpoint") to its type; anything else is ip.
func ParseEndpointType(s string) EndpointType {
	switch strings.ToLower(s) {
	case "hostname":
		return EndpointHostname
	case "unknown-endpoint":
		return EndpointUnknown
	}
	return EndpointIP
}

// Options are the configuration directives the cluster logic depends on.
type Options struct {
	RequireFullCoverage bool // cluster-require-full-coverage
	AllowReadsWhenDown  bool // cluster-allow-reads-when-down
	PreferredEndpoint   EndpointType
	// NodeTimeout is cluster-node-timeout in ms; 0 or less means
	// DefaultNodeTimeout.
	NodeTimeout int64
	// ReplicaValidityFactor is cluster-replica-validity-factor: a replica
	// whose data is older than NodeTimeout × factor + ReplPingPeriod does
	// not start an automatic failover (0: no limit).
	ReplicaValidityFactor int64
	// ReplPingPeriod is repl-ping-replica-period in ms (0 means 10000).
	ReplPingPeriod int64
	// MigrationBarrier is cluster-migration-barrier: a replica migrates to
	// an orphaned primary only if its own primary keeps more than this
	// many working replicas.
	MigrationBarrier int
	// ReplicaNoFailover is cluster-replica-no-failover: no automatic
	// failover (CLUSTER FAILOVER still works).
	ReplicaNoFailover bool
	// AllowReplicaMigration is cluster-allow-replica-migration.
	AllowReplicaMigration bool
	// QuorumTimeout is cluster-quorum-timeout in ms: a node that has had
	// no PONG from a majority of the slot-serving primaries for this long
	// turns its cluster state fail (a primary stops taking writes). 0, or
	// more than NodeTimeout, means NodeTimeout: the specification's rule.
	QuorumTimeout int64
	// WritableDelay is how long (ms) after the node starts a primary's
	// cluster state stays fail before it may turn ok: Redis's
	// CLUSTER_WRITABLE_DELAY (WritableDelay), so that a primary rejoining
	// after a restart gives the cluster a chance to reconfigure it first.
	// 0: none (simulations and tests of the state machine).
	WritableDelay int64
	// Rand drives every random choice (ids of handshake nodes and of a hard
	// reset, ping targets, gossip entries): seeded in simulations,
	// crypto-seeded in production. Nil keeps the generator in use
	// (SetOptions), or derives a deterministic one from the node id (New,
	// Load).
	Rand *rand.Rand
}

// WritableDelay is Redis's CLUSTER_WRITABLE_DELAY (ms), what a node sets
// Options.WritableDelay to.
const WritableDelay = 2000

// DefaultNodeTimeout is cluster-node-timeout's default (ms).
const DefaultNodeTimeout = 15000

// DefaultOptions are Redis's defaults.
func DefaultOptions() Options {
	return Options{RequireFullCoverage: true, NodeTimeout: DefaultNodeTimeout, ReplicaValidityFactor: 10,
		MigrationBarrier: 1, AllowReplicaMigration: true}
}

// Announce is how this node presents itself, derived from port,
// cluster-port and the cluster-announce-* directives (see [DeriveAnnounce]).
type Announce struct {
	IP       string // cluster-announce-ip ("" keeps the address learned from peers)
	Port     int
	CPort    int
	Hostname string
}

// PortIncr is the default offset of the bus port from the client port.
const PortIncr = 10000

// DeriveAnnounce computes the announced address the way Redis does: the
// client port unless cluster-announce-port overrides it, and the bus port
// from cluster-announce-bus-port, else cluster-port, else port+10000 (of the
// real port, not the announced one).
func DeriveAnnounce(port, clusterPort, announcePort, announceBusPort int, announceIP, hostname string) Announce {
	a := Announce{IP: announceIP, Port: port, CPort: port + PortIncr, Hostname: hostname}
	if clusterPort != 0 {
		a.CPort = clusterPort
	}
	if announcePort != 0 {
		a.Port = announcePort
	}
	if announceBusPort != 0 {
		a.CPort = announceBusPort
	}
	return a
}

// Effects are the pending side effects of the steps taken since the last
// TakeEffects. The owner carries them out with Apply, in the order Apply
// documents: Save first (before any reply or frame of the step goes out),
// the log, Promote, Publish, Dial, Send (each link's frames in slice
// order), Close, then the data and replication changes.
type Effects struct {
	// Save: nodes.conf must be rewritten before any reply to the step that
	// caused it, and any frame below, goes out. With Sync the new file must
	// be durable (fsync'd) by then: the step changed this node's own
	// configEpoch, last vote or id, or raised currentEpoch by its own
	// decision (an election, BUMPEPOCH, a collision). Without, it must be
	// written by then and fsync'd after the step's other effects: it only
	// records what the node learned from its peers, which they tell again
	// if a crash loses it.
	Save bool
	Sync bool
	// Publish: the routing table changed; swap in State.Table().
	Publish bool
	// Dial: open outbound links. Report the outcome with LinkConnected or
	// LinkClosed.
	Dial []Dial
	// Send: frames to write. A frame is immutable once emitted and may be
	// shared by several Sends. Drop a Send whose link is already gone.
	Send []Send
	// Close: links to close once their pending frames are flushed. The
	// state has already forgotten them: they need no LinkClosed.
	Close []LinkID
	// Replicate, when not empty, is the id of the primary this node must
	// now replicate: it lost its last slot to that node (or its primary
	// did). The state already shows myself as that node's replica. The
	// replication layer acts on it; until then the shell only logs it.
	Replicate string
	// DropSlots are slots this node lost to a newer configuration while it
	// stays a primary of other slots: their keys must be deleted, as Redis
	// does for such "dirty" slots.
	DropSlots []int
	// Promote: myself just became a primary (failover won, or TAKEOVER):
	// replication must stop following the old primary and serve as one.
	Promote bool
	// PauseWrites, when non-zero, asks to pause client writes until that
	// unix ms (a replica started a manual failover with us); the shell then
	// reports the offset it paused at with WritesPaused. UnpauseWrites
	// ends such a pause early.
	PauseWrites   int64
	UnpauseWrites bool
	// AwaitOffset, when non-zero, asks a replica's shell to call
	// ReplApplied as soon as the replica has applied its primary's stream
	// up to that offset (a manual failover waits for it; MFTimeout at
	// most).
	AwaitOffset uint64
	// Log are lines for the server log (warning level), in the words
	// Redis uses for the same events.
	Log []string
	// Deliver: pub/sub messages from other nodes for the local subscribers
	// (pubsub.go), in arrival order.
	Deliver []Delivery
}

// Dial asks the owner to connect to a node's bus port.
type Dial struct {
	Link   LinkID
	NodeID string // the node as this state knows it (a random id while in handshake)
	Addr   string // ip:cport, ready for net.Dial
}

// Send asks the owner to write one frame on a link.
type Send struct {
	Link  LinkID
	Frame *busv1.Frame
}

// Any reports whether there is something to do.
func (e Effects) Any() bool {
	return e.Save || e.Publish || len(e.Dial) > 0 || len(e.Send) > 0 || len(e.Close) > 0 ||
		e.Replicate != "" || len(e.DropSlots) > 0 || e.Promote || e.PauseWrites != 0 || e.UnpauseWrites ||
		e.AwaitOffset != 0 || len(e.Deliver) > 0 || len(e.Log) > 0
}

// MsgType is a cluster bus message type, for the CLUSTER INFO counters.
type MsgType uint8

// Bus message types, in Redis's numbering.
const (
	MsgPing MsgType = iota
	MsgPong
	MsgMeet
	MsgFail
	MsgPublish
	MsgFailoverAuthRequest
	MsgFailoverAuthAck
	MsgUpdate
	MsgMFStart
	MsgModule
	MsgPublishShard
	msgTypeCount
)

var msgTypeNames = [msgTypeCount]string{
	MsgPing: "ping", MsgPong: "pong", MsgMeet: "meet", MsgFail: "fail", MsgPublish: "publish",
	MsgFailoverAuthRequest: "auth-req", MsgFailoverAuthAck: "auth-ack", MsgUpdate: "update",
	MsgMFStart: "mfstart", MsgModule: "module", MsgPublishShard: "publishshard",
}

// String is the name CLUSTER INFO uses for the type.
func (t MsgType) String() string {
	if t < msgTypeCount {
		return msgTypeNames[t]
	}
	return "unknown"
}

// Stats are the bus counters CLUSTER INFO reports.
type Stats struct {
	Sent, Received           [msgTypeCount]uint64
	LinksBufferLimitExceeded uint64
}

// State is one node's view of the cluster. It is not safe for concurrent
// use: one actor owns it.
type State struct {
	opts Options
	// forged counts the frames not taken from their link because they
	// named another node than the one the link speaks for (Forged).
	forged uint64
	myself *Node
	nodes  map[string]*Node
	sorted []*Node // every node, by id: the deterministic iteration order

	owner     [slots.NumSlots]*Node
	migrating map[int]*Node // slot → node this node is migrating it to
	importing map[int]*Node // slot → node this node is importing it from
	// importPong: a closed import's PONG waits for the next step
	// (setslot.go).
	importPong bool

	currentEpoch  uint64
	lastVoteEpoch uint64

	ok   bool // cluster_state:ok
	size int  // masters serving at least one slot

	announcedIP string // last cluster-announce-ip applied
	stats       Stats
	fx          Effects

	rng       *rand.Rand
	now       int64 // the latest time an entry point was given (unix ms)
	iteration uint64
	links     map[LinkID]*link
	lastLink  LinkID
	// banned is the FORGET ban list: node id → unix ms until which gossip
	// may not re-add it.
	banned map[string]int64
	// notClaiming are slots whose owner stopped claiming them: kept bound
	// (to avoid needless redirections) but up for grabs.
	notClaiming slots.Set
	replOffset  uint64
	// slotGen counts slot-ownership changes; hdrSlots caches the header
	// bitmap of hdrNode's slots at generation hdrGen.
	slotGen  uint64
	hdrGen   uint64
	hdrNode  *Node
	hdrSlots []byte

	// amongMinority is when this node last saw a minority of the
	// slot-serving primaries reachable (the rejoin delay counts from it).
	amongMinority int64
	// election is this replica's failover attempt; mf the manual failover
	// in progress.
	election election
	mf       manualFailover
	// replDownSince is since when this replica has had no data from its
	// primary (0: the link is up).
	replDownSince int64
	// handingOff: a failover on shutdown was asked of a replica
	// (handoff.go).
	handingOff bool
	// started is the first time an entry point was given (the quorum
	// rule's grace period counts from it: quorum.go).
	started int64
}

// New returns the state of a fresh node: a master with no slots that knows
// no other node, epochs 0. The new config must be saved and the table
// published.
func New(id, shardID string, opts Options) *State {
	s := newState(opts)
	me := &Node{ID: id, ShardID: shardID, Flags: FlagMyself | FlagMaster, Linked: true}
	s.addNode(me)
	s.myself = me
	s.seedRand()
	s.fx = Effects{Save: true, Publish: true}
	s.updateMyselfFlags()
	s.updateState()
	return s
}

func newState(opts Options) *State {
	return &State{opts: opts, nodes: map[string]*Node{}, migrating: map[int]*Node{}, importing: map[int]*Node{},
		links: map[LinkID]*link{}, banned: map[string]int64{}, rng: opts.Rand, mf: manualFailover{masterOffset: -1}}
}

// seedRand gives a state created without Options.Rand a generator of its
// own, derived from its id so that it stays deterministic.
func (s *State) seedRand() {
	if s.rng != nil {
		return
	}
	h := fnv.New64a()
	h.Write([]byte(s.myself.ID))
	seed := h.Sum64()
	s.rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// nodeTimeout is cluster-node-timeout in ms.
func (s *State) nodeTimeout() int64 {
	if s.opts.NodeTimeout <= 0 {
		return DefaultNodeTimeout
	}
	return s.opts.NodeTimeout
}

// tick records the latest time seen (for calls that take none).
func (s *State) tick(now int64) {
	if now > s.now {
		s.now = now
	}
	if s.started == 0 {
		s.started = now
	}
	s.sendImportPong()
}

// saveDurable asks for a save that must be durable before anything else of
// the step happens: this node's own epoch, vote or id changed.
func (s *State) saveDurable() {
	s.fx.Save = true
	s.fx.Sync = true
}

// logf adds a line for the server log.
func (s *State) logf(format string, args ...any) {
	s.fx.Log = append(s.fx.Log, fmt.Sprintf(format, args...))
}

// TakeEffects returns the pending effects and clears them.
func (s *State) TakeEffects() Effects {
	fx := s.fx
	s.fx = Effects{}
	return fx
}

// MyID is this node's id.
func (s *State) MyID() string { return s.myself.ID }

// MyShardID is this node's shard id.
func (s *State) MyShardID() string { return s.myself.ShardID }

// Myself returns a copy of this node's entry.
func (s *State) Myself() Node { return *s.myself }

// Lookup returns a copy of the entry of node id.
func (s *State) Lookup(id string) (Node, bool) {
	n, ok := s.nodes[id]
	if !ok {
		return Node{}, false
	}
	return *n, true
}

// NodeList returns a copy of every node entry, in id order.
func (s *State) NodeList() []Node {
	out := make([]Node, len(s.sorted))
	for i, n := range s.sorted {
		out[i] = *n
	}
	return out
}

// KnownNodes is the number of nodes in the table, this one included.
func (s *State) KnownNodes() int { return len(s.nodes) }

// CurrentEpoch is the cluster's current epoch as this node knows it.
func (s *State) CurrentEpoch() uint64 { return s.currentEpoch }

// LastVoteEpoch is the epoch of this node's last failover vote.
func (s *State) LastVoteEpoch() uint64 { return s.lastVoteEpoch }

// OK reports cluster_state:ok.
func (s *State) OK() bool { return s.ok }

// Size is the number of masters serving at least one slot.
func (s *State) Size() int { return s.size }

// Options returns the options in force.
func (s *State) Options() Options { return s.opts }

// Owner returns the id of the node serving slot ("" when unassigned).
func (s *State) Owner(slot int) string {
	if n := s.owner[slot]; n != nil {
		return n.ID
	}
	return ""
}

// Stats returns the bus message counters.
func (s *State) Stats() Stats { return s.stats }

// CountSent and CountReceived record a bus message for CLUSTER INFO
// (types Redis does not have, such as HANDOFF, are not counted).
func (s *State) CountSent(t MsgType) {
	if t < msgTypeCount {
		s.stats.Sent[t]++
	}
}

func (s *State) CountReceived(t MsgType) {
	if t < msgTypeCount {
		s.stats.Received[t]++
	}
}

// SetOptions applies changed directives (CONFIG SET); the cluster state is
// recomputed and the table republished.
func (s *State) SetOptions(o Options) {
	if o.Rand == nil {
		o.Rand = s.opts.Rand
	} else {
		s.rng = o.Rand
	}
	if o == s.opts {
		return
	}
	old := s.opts
	s.opts = o
	s.updateMyselfFlags()
	old.NodeTimeout, old.Rand = o.NodeTimeout, o.Rand
	if old != o {
		s.fx.Publish = true
		s.updateState()
	}
}

// SetAnnounce applies this node's announced address. An announce IP takes
// over myself's address; clearing it forgets the address so it is learned
// again from peers, as in Redis. Ports and hostname are always the
// announced ones. A change is saved and published.
func (s *State) SetAnnounce(a Announce) {
	me := s.myself
	old := *me
	if a.IP != s.announcedIP {
		s.announcedIP = a.IP
		me.IP = a.IP
	}
	me.Port, me.CPort, me.Hostname = a.Port, a.CPort, a.Hostname
	if me.IP != old.IP || me.Port != old.Port || me.CPort != old.CPort || me.Hostname != old.Hostname {
		s.fx.Save = true
		s.fx.Publish = true
	}
}

// addNode puts n in the table (replacing nothing: the id must be new).
func (s *State) addNode(n *Node) {
	s.nodes[n.ID] = n
	i := sort.Search(len(s.sorted), func(i int) bool { return s.sorted[i].ID >= n.ID })
	s.sorted = append(s.sorted, nil)
	copy(s.sorted[i+1:], s.sorted[i:])
	s.sorted[i] = n
}

// nodeOrCreate returns node id, adding a placeholder entry (no address, no
// flags) when it is unknown, as Redis does for ids it meets in nodes.conf.
func (s *State) nodeOrCreate(id string) *Node {
	if n, ok := s.nodes[id]; ok {
		return n
	}
	n := &Node{ID: id}
	s.addNode(n)
	return n
}

// addSlot makes n the owner of an unassigned slot.
func (s *State) addSlot(n *Node, slot int) bool {
	if s.owner[slot] != nil {
		return false
	}
	s.owner[slot] = n
	n.Slots.Add(slot)
	n.numSlots++
	s.slotGen++
	return true
}

// delSlot unassigns slot.
func (s *State) delSlot(slot int) bool {
	n := s.owner[slot]
	if n == nil {
		return false
	}
	n.Slots.Remove(slot)
	n.numSlots--
	s.owner[slot] = nil
	s.notClaiming.Remove(slot)
	s.slotGen++
	return true
}

// updateState recomputes cluster_state and cluster_size. The state is ok
// unless (with full coverage required) some slot is unassigned or served by
// a failed node, or fewer than a majority of the slot-serving masters are
// reachable (not PFAIL/FAIL, and answering our PINGs: quorum.go) — which
// includes a node that serves no slot and knows no master that does. A change of state republishes the table.
//
// A primary that saw a minority of the slot-serving primaries reachable
// stays fail for the rejoin delay (cluster-node-timeout, within 0.5–5 s)
// after the majority is back, as Redis does; Tick re-evaluates a failed
// state. Unlike Redis, a node that knows no slot-serving primary at all
// (an unconfigured node) does not count as in a minority, and there is no
// 2 s delay after start-up.
func (s *State) updateState() {
	ok := true
	if s.opts.RequireFullCoverage {
		for _, n := range s.owner {
			if n == nil || n.Failed() {
				ok = false
				break
			}
		}
	}
	size, reachable := 0, 0
	for _, n := range s.sorted {
		if n.IsMaster() && n.numSlots > 0 {
			size++
			if n.Flags&(FlagFail|FlagPFail) == 0 && s.quorumReachable(n) {
				reachable++
			}
		}
	}
	if reachable < size/2+1 {
		ok = false
		if size > 0 {
			s.amongMinority = s.now
		}
	}
	s.size = size
	if ok && !s.ok && s.myself.IsMaster() && s.started != 0 && s.now-s.started < s.opts.WritableDelay {
		return // just started: stay fail for a while (Options.WritableDelay)
	}
	if ok && !s.ok && s.myself.IsMaster() && s.amongMinority != 0 && s.now-s.amongMinority < s.rejoinDelay() {
		// A primary back from a minority partition waits before taking
		// writes again: the majority may have failed it over meanwhile.
		return
	}
	if ok != s.ok {
		s.ok = ok
		s.fx.Publish = true
	}
}

// master returns the primary of replica n, if known.
func (s *State) master(n *Node) *Node {
	if !n.IsReplica() || n.MasterID == "" {
		return nil
	}
	return s.nodes[n.MasterID]
}

// nodeEpoch is the epoch CLUSTER NODES prints: a replica shows its
// primary's configEpoch.
func (s *State) nodeEpoch(n *Node) uint64 {
	if m := s.master(n); m != nil {
		return m.ConfigEpoch
	}
	return n.ConfigEpoch
}

// replicas returns the replicas of master m, by id.
func (s *State) replicas(m *Node) []*Node {
	var out []*Node
	for _, n := range s.sorted {
		if n.IsReplica() && n.MasterID == m.ID {
			out = append(out, n)
		}
	}
	return out
}

// endpoint is the preferred endpoint of n; null reports unknown-endpoint
// mode, where CLUSTER SLOTS sends a null.
func (s *State) endpoint(n *Node) (ep string, null bool) {
	switch s.opts.PreferredEndpoint {
	case EndpointHostname:
		if n.Hostname != "" {
			return n.Hostname, false
		}
		return "?", false
	case EndpointUnknown:
		return "", true
	}
	return n.IP, false
}

// Table builds the routing snapshot for the event loops. Nodes[i].IP holds
// the node's preferred endpoint (what MOVED and ASK name); Hostname is the
// announced hostname.
func (s *State) Table() *slots.Table {
	t := &slots.Table{Master: -1} // every Owner entry is set below
	t.Cluster = true
	t.OK = s.ok
	t.AllowReadsWhenDown = s.opts.AllowReadsWhenDown
	idx := make(map[*Node]int, len(s.sorted))
	t.Nodes = make([]slots.Node, len(s.sorted))
	for i, n := range s.sorted {
		idx[n] = i
		ep, _ := s.endpoint(n)
		t.Nodes[i] = slots.Node{ID: n.ID, IP: ep, Port: n.Port, Hostname: n.Hostname}
	}
	t.Self = idx[s.myself]
	// One pass, one index lookup per run of slots (every SETSLOT of a
	// reshard publishes a table).
	var last *Node
	li := int16(slots.NoOwner)
	for slot, n := range s.owner {
		if n != last {
			last, li = n, slots.NoOwner
			if n != nil {
				li = int16(idx[n])
			}
		}
		t.Owner[slot] = li
	}
	if m := s.master(s.myself); m != nil {
		t.Master = idx[m]
	}
	if len(s.migrating) > 0 {
		t.Migrating = make(map[int]int, len(s.migrating))
		for slot, n := range s.migrating {
			t.Migrating[slot] = idx[n]
		}
	}
	if len(s.importing) > 0 {
		t.Importing = make(map[int]int, len(s.importing))
		for slot, n := range s.importing {
			t.Importing[slot] = idx[n]
		}
	}
	return t
}
