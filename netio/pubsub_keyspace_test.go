package netio_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// expectMessages reads the next messages of sub, "channel payload" each.
func expectMessages(t *testing.T, sub *redis.PubSub, want ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, w := range want {
		m, err := sub.ReceiveMessage(ctx)
		require.NoError(t, err, "waiting for %q", w)
		require.Equal(t, w, m.Channel+" "+m.Payload)
	}
}

// Keyspace notifications reach RESP2 and RESP3 pattern subscribers over
// TCP, in the order the commands fired them, and follow CONFIG SET.
func TestKeyspaceNotificationsGoRedis(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t, "notify-keyspace-events", "KEA")
	ctx := context.Background()
	w := n.Client(t)
	for _, proto := range []int{2, 3} {
		sub := n.Client(t, proto).PSubscribe(ctx, "__key*__:*", "marker")
		for range 2 {
			_, err := sub.Receive(ctx)
			require.NoError(t, err)
		}
		require.NoError(t, w.ConfigSet(ctx, "notify-keyspace-events", "KEA").Err())
		require.NoError(t, w.Set(ctx, "foo", "bar", 0).Err())
		require.NoError(t, w.Expire(ctx, "foo", time.Hour).Err())
		require.NoError(t, w.Del(ctx, "foo").Err())
		require.NoError(t, w.RPush(ctx, "l", "a").Err())
		require.NoError(t, w.LPop(ctx, "l").Err())
		expectMessages(t, sub,
			"__keyspace@0__:foo set", "__keyevent@0__:set foo",
			"__keyspace@0__:foo expire", "__keyevent@0__:expire foo",
			"__keyspace@0__:foo del", "__keyevent@0__:del foo",
			"__keyspace@0__:l rpush", "__keyevent@0__:rpush l",
			"__keyspace@0__:l lpop", "__keyevent@0__:lpop l",
			"__keyspace@0__:l del", "__keyevent@0__:del l")

		// Off: nothing until the marker; E$ only: the keyevent channel of
		// string commands.
		require.NoError(t, w.ConfigSet(ctx, "notify-keyspace-events", "").Err())
		require.NoError(t, w.Set(ctx, "foo", "bar", 0).Err())
		require.NoError(t, w.Publish(ctx, "marker", "1").Err())
		expectMessages(t, sub, "marker 1")
		require.NoError(t, w.ConfigSet(ctx, "notify-keyspace-events", "E$x").Err())
		require.NoError(t, w.Del(ctx, "foo").Err())
		require.NoError(t, w.Set(ctx, "foo", "bar", 50*time.Millisecond).Err())
		expectMessages(t, sub, "__keyevent@0__:set foo", "__keyevent@0__:expired foo") // active expiry
		require.NoError(t, sub.Close())
	}
}

// In cluster mode the events are published on the node that owns the key,
// to its own subscribers.
func TestKeyspaceNotificationsCluster(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t, "cluster-enabled", "yes", "notify-keyspace-events", "KEA")
	ctx := context.Background()
	w := n.Client(t)
	require.NoError(t, w.Do(ctx, "cluster", "addslotsrange", "0", "16383").Err())
	nodetest.Eventually(t, 5*time.Second, func() bool {
		info, _ := w.ClusterInfo(ctx).Result()
		return strings.Contains(info, "cluster_state:ok")
	}, "cluster_state:ok")
	sub := n.Client(t, 3).PSubscribe(ctx, "__keyevent@0__:*")
	_, err := sub.Receive(ctx)
	require.NoError(t, err)
	require.NoError(t, w.Set(ctx, "foo", "bar", 0).Err())
	require.NoError(t, w.Incr(ctx, "n").Err())
	expectMessages(t, sub, "__keyevent@0__:set foo", "__keyevent@0__:incrby n")
}
