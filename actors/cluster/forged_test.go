package cluster_test

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/bus"
	"github.com/slotd/slotd/cmd/node/nodetest"
	busv1 "github.com/slotd/slotd/proto/slotd/bus/v1"
	"github.com/slotd/slotd/slots"
)

// shardSlots is CLUSTER SHARDS as node id → slot ranges.
func shardSlots(t *testing.T, c *redis.Client) map[string][]redis.SlotRange {
	t.Helper()
	shards, err := c.ClusterShards(ctx).Result()
	require.NoError(t, err)
	out := map[string][]redis.SlotRange{}
	for _, sh := range shards {
		for _, n := range sh.Nodes {
			if n.Role == "master" {
				out[n.ID] = sh.Slots
			}
		}
	}
	return out
}

// One forged PING on a primary's bus port, claiming to be another primary
// of the cluster with a higher configEpoch and every slot, changes
// nothing: the real peer's link speaks for it (issue #20: this packet
// turned the primary into a replica with no keys).
func TestForgedPingOverTCPChangesNothing(t *testing.T) {
	nodes := formCluster(t, 3)
	c0 := nodes[0].Client(t, 2)
	victimID := nodes[1].Client(t, 2).ClusterMyID(ctx).Val()
	nodetest.Eventually(t, 20*time.Second, func() bool {
		links, err := c0.Do(ctx, "cluster", "links").Slice()
		if err != nil {
			return false
		}
		for _, l := range links {
			m, ok := l.(map[any]any)
			if !ok {
				if kv, ok2 := l.([]any); ok2 {
					m = map[any]any{}
					for i := 0; i+1 < len(kv); i += 2 {
						m[kv[i]] = kv[i+1]
					}
				}
			}
			if m["direction"] == "from" && m["node"] == victimID {
				return true
			}
		}
		return false
	}, "node 1's own link to node 0 is bound")
	before := shardSlots(t, c0)
	require.Len(t, before, 3)

	conn, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(nodes[0].Port+bus.PortIncr))
	require.NoError(t, err)
	defer conn.Close()
	var all slots.Set
	all.AddRange(0, slots.NumSlots-1)
	f := &busv1.Frame{Header: &busv1.Header{Type: busv1.Type_TYPE_PING, Version: bus.ProtoVersion, Sender: victimID,
		CurrentEpoch: 100, ConfigEpoch: 100, Slots: bus.SlotBitmap(&all), Port: uint32(nodes[1].Port),
		Cport: uint32(nodes[1].Port + bus.PortIncr), Flags: uint32(busv1.NodeFlag_NODE_FLAG_PRIMARY), StateOk: true}}
	b, err := bus.AppendFrame(nil, f)
	require.NoError(t, err)
	_, err = conn.Write(b)
	require.NoError(t, err)
	// The PING is answered (as any PING is), so it was processed.
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	pong, err := bus.NewDecoder(conn, 0).Next()
	require.NoError(t, err)
	assert.Equal(t, busv1.Type_TYPE_PONG, pong.GetHeader().GetType())

	assert.Equal(t, before, shardSlots(t, c0), "CLUSTER SHARDS unchanged")
	nodesText := c0.ClusterNodes(ctx).Val()
	for _, line := range strings.Split(nodesText, "\n") {
		if strings.HasPrefix(line, victimID) {
			assert.NotContains(t, line, " 100 ", "the forged configEpoch is not taken")
		}
	}
	assert.Contains(t, c0.ClusterInfo(ctx).Val(), "cluster_state:ok")
}
