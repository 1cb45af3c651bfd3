package metrics

import (
	_ "embed"
	"encoding/json"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/slotd/slotd/actors/trace"
	"github.com/slotd/slotd/bus"
)

// The live cluster page (GET /) is one self-contained HTML file (no
// external assets: it works offline) that polls /cluster.json every
// second and draws the slot map (16384 cells coloured by owner), the nodes
// with role, epochs, flags and links, the replication figures and the
// node's recent cluster events from its trace ring (trace-actors cluster).
//
//go:embed page.html
var pageHTML []byte

// View is the document /cluster.json serves.
type View struct {
	Time         int64      `json:"time"` // unix ms
	Cluster      bool       `json:"cluster"`
	MyID         string     `json:"myId"`
	StateOK      bool       `json:"stateOk"`
	CurrentEpoch uint64     `json:"currentEpoch"`
	Nodes        []ViewNode `json:"nodes"`
	// Slots are the served slot ranges: [start, end, index in Nodes].
	Slots       [][3]int        `json:"slots"`
	Replication ViewReplication `json:"replication"`
	// Events are the recent cluster events and log lines of this node's
	// trace ring, oldest first (empty while trace-actors leaves the
	// cluster actor out).
	Events []ViewEvent `json:"events"`
}

// ViewNode is one node of the cluster as this node sees it.
type ViewNode struct {
	ID          string   `json:"id"`
	Addr        string   `json:"addr"`
	Role        string   `json:"role"` // primary or replica
	Primary     string   `json:"primary,omitempty"`
	Flags       []string `json:"flags"`
	ConfigEpoch uint64   `json:"configEpoch"`
	Slots       int      `json:"slots"`
	Linked      bool     `json:"linked"`
	Myself      bool     `json:"myself"`
}

// ViewReplication is this node's replication state.
type ViewReplication struct {
	Replica  bool          `json:"replica"`
	LinkUp   bool          `json:"linkUp"`
	Offset   int64         `json:"offset"`
	Replicas []ViewReplica `json:"replicas"`
}

// ViewReplica is one replica connected to this node.
type ViewReplica struct {
	Addr     string `json:"addr"`
	Offset   int64  `json:"offset"`
	LagBytes int64  `json:"lagBytes"`
	Online   bool   `json:"online"`
}

// ViewEvent is one trace record shown on the page.
type ViewEvent struct {
	Time    int64  `json:"time"`
	Message string `json:"message"`
}

// viewEvents bounds the events /cluster.json returns.
const viewEvents = 200

// NewHandler serves /metrics from reg, and the cluster page (/) and its
// data (/cluster.json) from src.
func NewHandler(reg http.Handler, src Sources) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", reg)
	mux.HandleFunc("/cluster.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(BuildView(src))
	})
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(pageHTML)
	})
	return mux
}

// BuildView reads the page's data from the node.
func BuildView(src Sources) View {
	v := View{Time: time.Now().UnixMilli(), Nodes: []ViewNode{}, Slots: [][3]int{}, Events: []ViewEvent{}}
	if src.Repl != nil {
		st := src.Repl.Status()
		v.Replication = ViewReplication{Replica: st.Replica, LinkUp: st.LinkUp, Offset: st.ReplOffset,
			Replicas: []ViewReplica{}}
		var mine int64
		for _, off := range src.Repl.Offsets() {
			mine += off
		}
		for _, rp := range src.Repl.Replicas() {
			v.Replication.Replicas = append(v.Replication.Replicas, ViewReplica{
				Addr: net.JoinHostPort(rp.IP, strconv.Itoa(rp.Port)), Offset: rp.Offset,
				LagBytes: max(mine-rp.Offset, 0), Online: rp.Online})
		}
	}
	for _, r := range trace.Recent(0) {
		if r.Kind == "cluster" && (strings.HasPrefix(r.Message, "event ") || strings.HasPrefix(r.Message, "log ")) {
			v.Events = append(v.Events, ViewEvent{Time: r.At.UnixMilli(), Message: r.Message})
		}
	}
	if len(v.Events) > viewEvents {
		v.Events = v.Events[len(v.Events)-viewEvents:]
	}
	if src.Cluster == nil {
		return v
	}
	cl := src.Cluster()
	if cl == nil {
		return v
	}
	s, ok := cl.Snapshot(ClusterTimeout)
	if !ok {
		return v
	}
	v.Cluster, v.MyID, v.StateOK, v.CurrentEpoch = true, s.MyID, s.OK, s.CurrentEpoch
	nodes := s.Nodes
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].ID < nodes[j].ID })
	for i, n := range nodes {
		vn := ViewNode{ID: n.ID, Addr: net.JoinHostPort(n.IP, strconv.Itoa(n.Port)), Role: "primary",
			Primary: n.MasterID, Flags: strings.Split(n.Flags.String(), ","), ConfigEpoch: n.ConfigEpoch, Slots: n.Slots.Count(),
			Linked: n.Linked, Myself: n.ID == s.MyID}
		if n.Flags&bus.FlagSlave != 0 {
			vn.Role = "replica"
		}
		v.Nodes = append(v.Nodes, vn)
		for _, r := range n.Slots.Ranges() {
			v.Slots = append(v.Slots, [3]int{r.Start, r.End, i})
		}
	}
	sort.Slice(v.Slots, func(i, j int) bool { return v.Slots[i][0] < v.Slots[j][0] })
	return v
}
