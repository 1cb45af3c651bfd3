package bus

import (
	"strings"

	"github.com/slotd/slotd/slots"
)

// IDLen is the length of a node id and of a shard id.
const IDLen = 40

// ValidID reports whether id is usable as a node or shard id: exactly 40
// characters from [0-9a-z]. Generated ids are lowercase hex; Redis's
// loader accepts the wider alphabet, so this does too.
func ValidID(id string) bool {
	if len(id) != IDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'z') {
			return false
		}
	}
	return true
}

// Flags are a node's CLUSTER NODES flags.
type Flags uint16

// Node flags, in the order CLUSTER NODES prints them.
const (
	FlagMyself Flags = 1 << iota
	FlagMaster
	FlagSlave
	FlagPFail
	FlagFail
	FlagHandshake
	FlagNoAddr
	FlagNoFailover
)

var flagNames = [...]struct {
	f    Flags
	name string
}{
	{FlagMyself, "myself"},
	{FlagMaster, "master"},
	{FlagSlave, "slave"},
	{FlagPFail, "fail?"},
	{FlagFail, "fail"},
	{FlagHandshake, "handshake"},
	{FlagNoAddr, "noaddr"},
	{FlagNoFailover, "nofailover"},
}

// String is the comma-separated flag list of CLUSTER NODES, or "noflags".
func (f Flags) String() string {
	var b strings.Builder
	for _, fn := range flagNames {
		if f&fn.f == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(fn.name)
	}
	if b.Len() == 0 {
		return "noflags"
	}
	return b.String()
}

// ParseFlags parses a CLUSTER NODES flag list (case-insensitive, "noflags"
// allowed). ok is false on an unknown flag.
func ParseFlags(s string) (f Flags, ok bool) {
	for _, name := range strings.Split(s, ",") {
		found := false
		if strings.EqualFold(name, "noflags") {
			continue
		}
		for _, fn := range flagNames {
			if strings.EqualFold(name, fn.name) {
				f |= fn.f
				found = true
				break
			}
		}
		if !found {
			return 0, false
		}
	}
	return f, true
}

// Node is one entry of the node table.
type Node struct {
	ID       string
	ShardID  string
	IP       string // "" until the node learns its address (MEET) or announces one
	Port     int
	CPort    int
	Hostname string
	Flags    Flags
	// MasterID is the id of the primary a replica follows ("" for masters
	// and for replicas whose primary is unknown).
	MasterID string
	// PingSent and PongRecv are unix ms of the pending PING and of the last
	// PONG (0: none), as printed by CLUSTER NODES.
	PingSent    int64
	PongRecv    int64
	ConfigEpoch uint64
	// Linked reports a connected bus link (myself always counts as
	// connected).
	Linked bool
	// Slots are the slots this node serves (masters only).
	Slots slots.Set
	// numSlots caches Slots.Count().
	numSlots int

	link     *link // outbound bus link (nil: none, dial on the next Tick)
	inLink   *link // inbound bus link, once a frame on it named this node
	ctime    int64 // when the entry was created (handshake timeout)
	dataRecv int64 // last frame of any type received from it
	// pongAt is when our own PING to it was last answered (PongRecv may
	// also be raised by gossip): the quorum rule's evidence (quorum.go);
	// pingAt is when we last sent it a PING.
	pongAt, pingAt int64
	failTime       int64 // when it was flagged FAIL
	// meet: send MEET rather than PING on a new connection, until the node
	// answers (CLUSTER MEET, or a peer that seems not to know us).
	meet     bool
	meetSent int64 // when the last MEET went out
	// inFreed is when the inbound link went away (or the entry was
	// created): a node that does not connect to us for long is sent a MEET.
	inFreed int64
	// reports are the failure reports other primaries gossiped about it.
	reports []failReport
	// replOffset is the replication offset its last frame announced.
	replOffset uint64
	// votedTime is when this node last voted for a replica of this
	// primary (no second vote for its replicas within 2 × node timeout).
	votedTime int64
	// migrateTo marks a primary that has or had replicas (or took over
	// from one that had): a replica migration target when orphaned.
	migrateTo bool
	// orphanedTime is since when this primary has had no working replica.
	orphanedTime int64
}

// failReport is one primary's claim, at time, that a node is failing.
type failReport struct {
	from *Node
	time int64
}

// Is reports whether every flag in f is set.
func (n *Node) Is(f Flags) bool { return n.Flags&f == f }

// IsMaster reports the master flag.
func (n *Node) IsMaster() bool { return n.Flags&FlagMaster != 0 }

// IsReplica reports the slave flag.
func (n *Node) IsReplica() bool { return n.Flags&FlagSlave != 0 }

// Failed reports the fail flag.
func (n *Node) Failed() bool { return n.Flags&FlagFail != 0 }

// NumSlots is the number of slots the node serves.
func (n *Node) NumSlots() int { return n.numSlots }
