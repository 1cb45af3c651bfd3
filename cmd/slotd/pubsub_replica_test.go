package main

import (
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/slots"
)

// TestClusterShardPubSubReplicas: in a 3+3 cluster a go-redis ReadOnly
// cluster client subscribes to a shard channel on the slot's replica and
// receives what is SPUBLISHed through the primary, in order; an SPUBLISH
// on the replica reaches the primary's subscribers too, as Redis 7.0
// propagates it to the whole shard.
func TestClusterShardPubSubReplicas(t *testing.T) {
	needTools(t, "redis-cli")
	t.Parallel()
	_, addrs := createWithReplicas(t, 3, "--cluster-node-timeout", "2000")
	// The client learns the slot map from whichever node it asks first:
	// wait until every node lists each range's replica.
	for _, a := range addrs {
		c := clientFor(a)
		eventually(t, 20*time.Second, func() bool {
			ranges, err := c.ClusterSlots(bg).Result()
			if err != nil || len(ranges) != 3 {
				return false
			}
			for _, r := range ranges {
				if len(r.Nodes) != 2 {
					return false
				}
			}
			return true
		}, "CLUSTER SLOTS of "+a+" lists every replica")
		_ = c.Close()
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ReadOnly: true, ReadTimeout: 10 * time.Second})
	t.Cleanup(func() { _ = cc.Close() })

	const ch = "{s}news"
	slot := slots.HashSlotString(ch)
	var primaryAddr, replicaAddr string
	for _, r := range cc.ClusterSlots(bg).Val() {
		if r.Start <= slot && slot <= r.End && len(r.Nodes) == 2 {
			primaryAddr, replicaAddr = r.Nodes[0].Addr, r.Nodes[1].Addr
		}
	}
	require.NotEmpty(t, replicaAddr, "slot %d has a replica", slot)
	prim, rep := clientFor(primaryAddr), clientFor(replicaAddr)
	t.Cleanup(func() { _ = prim.Close(); _ = rep.Close() })

	sub := cc.SSubscribe(bg, ch)
	t.Cleanup(func() { _ = sub.Close() })
	_, err := sub.Receive(bg)
	require.NoError(t, err)
	require.Equal(t, map[string]int64{ch: 1}, rep.PubSubShardNumSub(bg, ch).Val(), "subscribed on the replica")
	require.Equal(t, map[string]int64{ch: 0}, prim.PubSubShardNumSub(bg, ch).Val())

	const n = 1000
	go func() {
		p := cc.Pipeline()
		for i := 0; i < n; i++ {
			p.SPublish(bg, ch, strconv.Itoa(i))
		}
		_, _ = p.Exec(bg)
	}()
	for i := 0; i < n; i++ {
		m, err := sub.ReceiveMessage(bg)
		require.NoError(t, err)
		require.Equal(t, ch, m.Channel)
		require.Equal(t, strconv.Itoa(i), m.Payload)
	}

	psub := prim.SSubscribe(bg, ch)
	t.Cleanup(func() { _ = psub.Close() })
	_, err = psub.Receive(bg)
	require.NoError(t, err)
	// Answered with the replica's own receivers, delivered shard-wide.
	require.EqualValues(t, 1, rep.SPublish(bg, ch, "from-replica").Val())
	for _, s := range []*redis.PubSub{sub, psub} {
		m, err := s.ReceiveMessage(bg)
		require.NoError(t, err)
		require.Equal(t, "from-replica", m.Payload)
	}
}
