package cluster

import (
	"time"

	"github.com/slotd/slotd/bus"
)

// Snapshot is the cluster actor's state as an observer (the metrics
// endpoint) sees it, copied on the actor between two steps.
type Snapshot struct {
	MyID         string
	OK           bool // cluster_state ok
	CurrentEpoch uint64
	MyEpoch      uint64 // the config epoch of myself, or of my primary as a replica
	Size         int    // primaries serving at least one slot
	Nodes        []bus.Node
	Links        []LinkSnapshot
	Stats        bus.Stats
}

// LinkSnapshot is one bus link with its peer actor's counters.
type LinkSnapshot struct {
	bus.LinkInfo
	Connected      bool
	Sent, Received int64 // bytes on the current connection
}

// snapshotReq asks the actor for a Snapshot.
type snapshotReq struct{ reply chan<- Snapshot }

// Snapshot returns the actor's state, or false when the actor does not
// answer within timeout (stopped, or held by DEBUG SLEEP).
func (c *Cluster) Snapshot(timeout time.Duration) (Snapshot, bool) {
	ch := make(chan Snapshot, 1)
	c.root.Send(c.pid, snapshotReq{reply: ch})
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case s := <-ch:
		return s, true
	case <-t.C:
		return Snapshot{}, false
	}
}

func (a *clusterActor) snapshot(now int64) Snapshot {
	me := a.st.Myself()
	s := Snapshot{MyID: me.ID, OK: a.st.OK(), CurrentEpoch: a.st.CurrentEpoch(), MyEpoch: me.ConfigEpoch,
		Size: a.st.Size(), Nodes: a.st.NodeList(), Stats: a.st.Stats()}
	if me.MasterID != "" {
		if p, ok := a.st.Lookup(me.MasterID); ok {
			s.MyEpoch = p.ConfigEpoch
		}
	}
	for _, l := range a.st.Links(now) {
		ls := LinkSnapshot{LinkInfo: l}
		if h := a.links[l.Link]; h != nil {
			ls.Connected = h.Connected()
			ls.Sent, ls.Received = h.Bytes()
		}
		s.Links = append(s.Links, ls)
	}
	return s
}
