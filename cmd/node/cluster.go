package node

import (
	"strings"
	"sync"
	"time"

	"github.com/slotd/slotd/actors/cluster"
	"github.com/slotd/slotd/bus"
	"github.com/slotd/slotd/netio"
	"github.com/slotd/slotd/slots"
)

// startCluster starts the cluster actor of a cluster-enabled node: it loads
// (or creates) nodes.conf, publishes the first routing table into the
// holder the server routes with (n.Server.Table, created by Start before
// the server), opens the cluster bus on the bind addresses with the bus
// port (cluster-port, else port+10000; the cluster-announce-* directives
// change only what the node announces), and becomes n.Server.Cluster.
func startCluster(n *Node) (func(), error) {
	shards := n.Shards
	c, err := cluster.Start(cluster.Options{
		Config:   n.Cfg,
		Log:      n.Log,
		System:   n.System,
		Table:    n.Server.Table,
		DBEmpty:  func() bool { return shards.NextNonEmpty(0) < 0 },
		SlotKeys: shards.SlotKeys,
		Paused:   n.Server.PausedFor,
		Lease:    n.Server.SetWriteLease,
		Fatal:    n.fatal,
		DropSlots: func(lost []int) {
			for _, slot := range lost {
				shards.DropSlotLogged(slot)
			}
		},
		BusAddrs: busAddrs(n.Cfg.String("bind"), cluster.BusPort(n.Cfg)),
		Repl:     n.clusterRepl,
		Deliver: func(d bus.Delivery) {
			if d.Shard {
				n.Server.DeliverSPublish(d.Channel, d.Message)
			} else {
				n.Server.DeliverPublish(d.Channel, d.Message)
			}
		},
		OnTable: func(t *slots.Table) {
			n.Server.ShardSlotsLost(t)
			shards.RedirectBlocked()
		},
	})
	if err != nil {
		return nil, err
	}
	n.Server.Cluster = c
	n.cluster = c
	n.startReplica = c.StartedAsReplica()
	n.Server.PublishHook = c.Publish
	n.Server.SPublishHook = c.SPublish
	return c.Stop, nil
}

// clusterRepl connects the cluster actor to the replication engine. Role
// changes the actor asks for before the node has loaded its data (a node
// restarted as a replica) wait until start-up is done: replication must
// start from the loaded dataset, so that a partial resync can continue it.
type clusterRepl struct {
	n       *Node
	mu      sync.Mutex
	ready   bool
	pending func()
}

// role runs a role change now, or keeps the latest one for start.
func (r *clusterRepl) role(fn func()) {
	r.mu.Lock()
	if !r.ready {
		r.pending = fn
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	fn()
}

// start runs the role change asked for during start-up.
func (r *clusterRepl) start() {
	r.mu.Lock()
	r.ready = true
	fn := r.pending
	r.pending = nil
	r.mu.Unlock()
	if fn != nil {
		fn()
	}
}

func (r *clusterRepl) Follow(host string, port int) {
	r.role(func() { r.n.Repl.StartReplicaOf(host, port) })
}

// Promote calls done once client writes are replicated (at once while the
// node is still starting: clients cannot write yet).
func (r *clusterRepl) Promote(done func()) {
	r.mu.Lock()
	ready := r.ready
	r.mu.Unlock()
	if !ready {
		r.role(r.n.Repl.BecomePrimary)
		done()
		return
	}
	r.n.Repl.Promote(done)
}

func (r *clusterRepl) WhenApplied(target int64, until time.Time, done func(offset int64)) {
	if r.n.Repl != nil {
		r.n.Repl.WhenApplied(target, until, done)
	}
}

// ReplicateSetSlot streams a primary's CLUSTER SETSLOT to its replicas
// (cluster.SetSlotReplicator).
func (r *clusterRepl) ReplicateSetSlot(args [][]byte, timeout time.Duration, done func(acked bool)) bool {
	if r.n.Repl == nil {
		return false
	}
	return r.n.Repl.ReplicateSetSlot(args, timeout, done)
}

func (r *clusterRepl) Offset() int64 {
	if r.n.Repl == nil {
		return 0
	}
	return r.n.Repl.ReplOffset()
}

func (r *clusterRepl) DataSince() int64 {
	if r.n.Repl == nil {
		return 0
	}
	st := r.n.Repl.Status()
	switch {
	case !st.Replica:
		return 0
	case st.LinkUp && !st.LastIO.IsZero():
		return st.LastIO.UnixMilli()
	case !st.LinkUp && !st.DownSince.IsZero():
		return st.DownSince.UnixMilli()
	}
	return 0
}

func (r *clusterRepl) PauseWrites(until time.Time, done func(offset int64)) {
	r.n.Server.PauseWrites(until, func() { done(r.Offset()) })
}

func (r *clusterRepl) UnpauseWrites() { r.n.Server.Unpause(netio.PauseByFailover) }

// busAddrs are the client listen addresses with the bus port.
func busAddrs(bind string, port int) []string {
	var out []string
	for _, a := range netio.ListenAddrs(bind, port) {
		out = append(out, strings.TrimPrefix(a, "tcp://"))
	}
	return out
}
