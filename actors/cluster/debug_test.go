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

// DEBUG CLUSTERLINK KILL closes a node's links; they come back by
// themselves. An SPUBLISH right after it in the same MULTI is lost for the
// node whose link was killed, as in Redis (the message goes out on the
// outbound link only), and the next one arrives.
func TestDebugClusterLinkKill(t *testing.T) {
	t.Parallel()
	primary, replica := primaryWithReplica(t, "enable-debug-command", "yes")
	pc, rc := primary.Client(t, 2), replica.Client(t, 2)
	rid := rc.ClusterMyID(ctx).Val()
	links := func() int { return len(pc.Do(ctx, "cluster", "links").Val().([]any)) }
	nodetest.Eventually(t, 10*time.Second, func() bool { return links() == 2 }, "one link each way")

	sub := rc.SSubscribe(ctx, "ch")
	defer sub.Close()
	_, err := sub.Receive(ctx)
	require.NoError(t, err)

	var kill, pub *redis.Cmd
	_, err = pc.TxPipelined(ctx, func(p redis.Pipeliner) error {
		kill = p.Do(ctx, "debug", "clusterlink", "kill", "to", rid)
		pub = p.Do(ctx, "spublish", "ch", "hello")
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, "OK", kill.Val())
	assert.Equal(t, int64(0), pub.Val(), "no subscriber on the primary")
	nodetest.Eventually(t, 10*time.Second, func() bool { return links() == 2 }, "links re-established")
	require.NoError(t, pc.Do(ctx, "spublish", "ch", "world").Err())
	msg, err := sub.ReceiveMessage(ctx)
	require.NoError(t, err)
	assert.Equal(t, "world", msg.Payload, "hello went nowhere: its link was gone")

	// The other directions, and the errors in Redis's order.
	for _, dir := range []string{"FROM", "all"} {
		require.Equal(t, "OK", pc.Do(ctx, "debug", "clusterlink", "kill", dir, rid).Val())
		nodetest.Eventually(t, 10*time.Second, func() bool { return links() == 2 }, "links back after "+dir)
	}
	assert.EqualError(t, pc.Do(ctx, "debug", "clusterlink", "kill", "sideways", "nope").Err(), "ERR Unknown node nope")
	assert.EqualError(t, pc.Do(ctx, "debug", "clusterlink", "kill", "sideways", rid).Err(),
		"ERR Unknown direction sideways")
	assert.EqualError(t, pc.Do(ctx, "debug", "clusterlink", "kill", "to").Err(),
		"ERR unknown subcommand or wrong number of arguments for 'clusterlink'. Try DEBUG HELP.")
	assert.EqualError(t, pc.Do(ctx, "debug", "clusterlink", "free", "to", rid).Err(),
		"ERR unknown subcommand or wrong number of arguments for 'clusterlink'. Try DEBUG HELP.")

	standalone := nodetest.Start(t, "enable-debug-command", "yes").Client(t)
	assert.EqualError(t, standalone.Do(ctx, "debug", "clusterlink", "kill", "to", rid).Err(),
		"ERR Debug option only available for cluster mode enabled setup!")
}
