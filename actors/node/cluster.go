package node

import (
	"github.com/slotd/slotd/actors/cluster"
)

// startCluster starts the cluster actor of a cluster-enabled node: it loads
// (or creates) nodes.conf, publishes the first routing table into the
// holder the server routes with (n.Server.Table, created by Start before
// the server), and becomes n.Server.Cluster. The cluster bus port is not
// opened yet: the node knows only itself.
func startCluster(n *Node) (func(), error) {
	shards := n.Server.Shards()
	c, err := cluster.Start(cluster.Options{
		Config:  n.Cfg,
		Log:     n.Log,
		System:  n.System,
		Table:   n.Server.Table,
		DBEmpty: func() bool { return shards.NextNonEmpty(0) < 0 },
	})
	if err != nil {
		return nil, err
	}
	n.Server.Cluster = c
	return c.Stop, nil
}
