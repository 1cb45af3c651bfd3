package cluster_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// flagsOf returns the flags field of node id's line in CLUSTER NODES.
func flagsOf(t *testing.T, c *redis.Client, id string) string {
	t.Helper()
	text, err := c.ClusterNodes(ctx).Result()
	require.NoError(t, err)
	for _, l := range strings.Split(text, "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[0] == id {
			return f[2]
		}
	}
	return ""
}

// Dropping every PONG a node receives makes it suspect its peer (PFAIL);
// lifting the filter clears the suspicion.
func TestDropClusterPacketFilter(t *testing.T) {
	t.Parallel()
	nodes := formCluster(t, 2, "cluster-node-timeout", "600", "enable-debug-command", "yes")
	a, b := nodes[0].Client(t, 2), nodes[1].Client(t, 2)
	idB := b.ClusterMyID(ctx).Val()
	assert.EqualError(t, a.Do(ctx, "DEBUG", "DROP-CLUSTER-PACKET-FILTER", "x").Err(),
		"ERR value is not an integer or out of range")
	require.Equal(t, "OK", a.Do(ctx, "DEBUG", "DROP-CLUSTER-PACKET-FILTER", "1").Val())
	// PONGs stop counting while PINGs still arrive.
	stat := func(name string) int {
		v, _ := strconv.Atoi(infoField(a.ClusterInfo(ctx).Val(), name))
		return v
	}
	pongs, pings := stat("cluster_stats_messages_pong_received"), stat("cluster_stats_messages_ping_received")
	nodetest.Eventually(t, 10*time.Second, func() bool {
		return stat("cluster_stats_messages_ping_received") >= pings+3
	}, "PINGs keep arriving")
	assert.Equal(t, pongs, stat("cluster_stats_messages_pong_received"))
	// A node still sends data (its PINGs), so one dropped type does not
	// make it suspect (as in Redis); dropping everything (-2) does.
	require.Equal(t, "OK", a.Do(ctx, "DEBUG", "DROP-CLUSTER-PACKET-FILTER", "-2").Val())
	nodetest.Eventually(t, 10*time.Second, func() bool { return strings.Contains(flagsOf(t, a, idB), "fail") },
		"A suspects B once it hears nothing")
	require.Equal(t, "OK", a.Do(ctx, "DEBUG", "DROP-CLUSTER-PACKET-FILTER", "-1").Val())
	nodetest.Eventually(t, 10*time.Second, func() bool { return flagsOf(t, a, idB) == "master" },
		"A trusts B again")

	// Closing the link on a drop: the link goes down and comes back.
	require.Equal(t, "OK", a.Do(ctx, "DEBUG", "CLOSE-CLUSTER-LINK-ON-PACKET-DROP", "1").Val())
	require.Equal(t, "OK", a.Do(ctx, "DEBUG", "DROP-CLUSTER-PACKET-FILTER", "0").Val())
	nodetest.Eventually(t, 10*time.Second, func() bool {
		return strings.Contains(a.Do(ctx, "CLUSTER", "INFO").String(), "cluster_stats_messages_ping_received")
	}, "node alive")
	require.Equal(t, "OK", a.Do(ctx, "DEBUG", "DROP-CLUSTER-PACKET-FILTER", "-1").Val())
	require.Equal(t, "OK", a.Do(ctx, "DEBUG", "CLOSE-CLUSTER-LINK-ON-PACKET-DROP", "0").Val())
	waitOK(t, nodes...)
}

// DEBUG SLEEP freezes the bus too: the other node stops getting PONGs and
// suspects the sleeper, then trusts it again when it wakes.
func TestDebugSleepFreezesTheBus(t *testing.T) {
	t.Parallel()
	nodes := formCluster(t, 2, "cluster-node-timeout", "500", "enable-debug-command", "yes")
	a, b := nodes[0].Client(t, 2), nodes[1].Client(t, 2)
	idA := a.ClusterMyID(ctx).Val()
	sleeper := nodes[0].Client(t, 2)
	done := make(chan error, 1)
	go func() { done <- sleeper.Do(ctx, "DEBUG", "SLEEP", "2").Err() }()
	nodetest.Eventually(t, 10*time.Second, func() bool { return strings.Contains(flagsOf(t, b, idA), "fail") },
		"B suspects the sleeping node")
	require.NoError(t, <-done)
	nodetest.Eventually(t, 10*time.Second, func() bool { return flagsOf(t, b, idA) == "master" },
		"B trusts the node again after it wakes")
}
