package node

import (
	"strings"

	"github.com/slotd/slotd/actors/cluster"
	"github.com/slotd/slotd/actors/shard"
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
	shards := n.Server.Shards()
	c, err := cluster.Start(cluster.Options{
		Config:   n.Cfg,
		Log:      n.Log,
		System:   n.System,
		Table:    n.Server.Table,
		DBEmpty:  func() bool { return shards.NextNonEmpty(0) < 0 },
		SlotKeys: shards.SlotKeys,
		Paused:   n.Server.PausedFor,
		DropSlots: func(lost []int) {
			for _, slot := range lost {
				shards.Do(shards.Of(slot), func(s *shard.Shard) { s.DropSlot(slot) })
			}
		},
		BusAddrs: busAddrs(n.Cfg.String("bind"), cluster.BusPort(n.Cfg)),
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
	n.Server.PublishHook = c.Publish
	return c.Stop, nil
}

// busAddrs are the client listen addresses with the bus port.
func busAddrs(bind string, port int) []string {
	var out []string
	for _, a := range netio.ListenAddrs(bind, port) {
		out = append(out, strings.TrimPrefix(a, "tcp://"))
	}
	return out
}
