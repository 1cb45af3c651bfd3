package node

import (
	"time"

	"github.com/slotd/slotd/actors/cluster"
	"github.com/slotd/slotd/actors/repl"
	"github.com/slotd/slotd/netio"
)

// startRepl creates the replication engine (actors/repl) and hands it to
// the server: REPLICAOF, PSYNC, WAIT, ROLE and INFO replication go to it,
// and PUBLISH / SPUBLISH (standalone) reach the replicas through it. A
// replicaof directive takes effect once the data is loaded (node.go).
func startRepl(n *Node) func() {
	m := repl.New(repl.Options{Config: n.Cfg, Log: n.Log, Shards: n.Shards, Server: n.Server,
		// FAILOVER pauses writes until it ends (Redis: until LLONG_MAX).
		PauseWrites: func(settled func()) {
			n.Server.PauseWrites(time.Now().Add(100*365*24*time.Hour), settled)
		},
		UnpauseWrites: func() { n.Server.Unpause(netio.PauseByFailover) }})
	n.Repl = m
	n.Server.Repl = m
	if c, ok := n.Server.Cluster.(*cluster.Cluster); ok {
		m.OnSetSlot(c.ApplyReplicated) // a primary's SETSLOT, on its replicas
	}
	if n.Server.PublishHook == nil {
		n.Server.PublishHook = func(ch, msg []byte) { m.Publish(false, ch, msg) }
	}
	if n.Server.SPublishHook == nil {
		n.Server.SPublishHook = func(ch, msg []byte) { m.Publish(true, ch, msg) }
	}
	return m.Stop
}
