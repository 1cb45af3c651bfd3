package slots

import (
	"strconv"
	"sync/atomic"
)

// NoOwner marks an unassigned slot in Table.Owner.
const NoOwner = -1

// Node is what the routing snapshot needs to know about a node to redirect a
// client to it.
type Node struct {
	ID       string
	IP       string
	Port     int
	Hostname string
}

// Endpoint is "ip:port" as written in MOVED/ASK replies.
func (n *Node) Endpoint() string { return n.IP + ":" + strconv.Itoa(n.Port) }

// Table is the immutable routing snapshot the event loops consult before
// dispatching a keyed command. It is never modified after Publish; a new
// state is a new Table swapped in atomically.
type Table struct {
	Cluster bool // cluster-enabled: redirects and CLUSTERDOWN apply
	OK      bool // cluster_state:ok
	Self    int  // index of this node in Nodes
	Owner   [NumSlots]int16
	Nodes   []Node
	// Migrating/Importing map slot → peer node index for this node's open
	// slots (nil when none).
	Migrating map[int]int
	Importing map[int]int
	// AllowReadsWhenDown mirrors cluster-allow-reads-when-down.
	AllowReadsWhenDown bool
	// Replica: this node is a replica of Nodes[Master] (reads with READONLY).
	Master int
}

// NewTable returns a table with every slot unassigned.
func NewTable() *Table {
	t := &Table{Master: -1}
	for i := range t.Owner {
		t.Owner[i] = NoOwner
	}
	return t
}

// Clone returns a mutable copy used to build the next snapshot.
func (t *Table) Clone() *Table {
	n := *t
	n.Nodes = append([]Node(nil), t.Nodes...)
	if t.Migrating != nil {
		n.Migrating = make(map[int]int, len(t.Migrating))
		for k, v := range t.Migrating {
			n.Migrating[k] = v
		}
	}
	if t.Importing != nil {
		n.Importing = make(map[int]int, len(t.Importing))
		for k, v := range t.Importing {
			n.Importing[k] = v
		}
	}
	return &n
}

// Holder publishes Tables to the event loops without locks.
type Holder struct{ p atomic.Pointer[Table] }

// Load returns the current snapshot.
func (h *Holder) Load() *Table { return h.p.Load() }

// Publish swaps in a new snapshot; t must not be modified afterwards.
func (h *Holder) Publish(t *Table) { h.p.Store(t) }
