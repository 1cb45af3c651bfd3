package netio_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// Outside cluster mode, multi-key commands over keys of different slots work
// as on a standalone redis-server; replies keep the key order.
func TestStandaloneCrossSlotMultiKey(t *testing.T) {
	n := nodetest.Start(t, "shard-actors", "4")
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		c := n.Client(t, proto)
		require.NoError(t, c.FlushAll(ctx).Err())
		require.NoError(t, c.MSet(ctx, "a", "1", "b", "2", "c", "3", "{a}x", "4").Err())
		vals, err := c.MGet(ctx, "c", "nope", "a", "b", "{a}x", "a").Result()
		require.NoError(t, err)
		require.Equal(t, []any{"3", nil, "1", "2", "4", "1"}, vals)
		require.Equal(t, int64(4), c.Exists(ctx, "a", "b", "b", "zz", "c").Val())
		require.Equal(t, int64(2), c.Touch(ctx, "a", "c", "zz").Val())
		require.Equal(t, int64(3), c.Del(ctx, "a", "b", "zz", "c").Val())
		require.Equal(t, int64(1), c.Unlink(ctx, "{a}x", "a").Val())
		require.Equal(t, int64(0), c.DBSize(ctx).Val())
		// Commands that read and write keys of several shards run whole
		// (spread.go).
		require.True(t, c.MSetNX(ctx, "a", "1", "b", "2").Val())
		require.False(t, c.MSetNX(ctx, "c", "3", "b", "2").Val())
		require.NoError(t, c.Rename(ctx, "a", "c").Err())
		require.Equal(t, []any{nil, "2", "1"}, c.MGet(ctx, "a", "b", "c").Val())
		require.NoError(t, c.FlushAll(ctx).Err())
	}
}

// In cluster mode the same commands answer CROSSSLOT, as Redis Cluster does.
func TestClusterCrossSlotRefused(t *testing.T) {
	n := nodetest.Start(t, "cluster-enabled", "yes")
	c := n.Client(t)
	ctx := context.Background()
	err := c.MGet(ctx, "a", "b").Err()
	require.EqualError(t, err, "CLUSTERDOWN Hash slot not served")
	require.NoError(t, c.ClusterAddSlotsRange(ctx, 0, 16383).Err())
	err = c.MGet(ctx, "a", "b").Err()
	require.EqualError(t, err, "CROSSSLOT Keys in request don't hash to the same slot")
}
