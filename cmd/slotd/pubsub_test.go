package main

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/slots"
)

// TestClusterPubSub: PUBLISH on one node reaches subscribers on the others
// over the cluster bus, in order; sharded pub/sub routes like keys; a
// rueidis cluster client's cached reads see other clients' writes.
func TestClusterPubSub(t *testing.T) {
	needTools(t, "redis-cli")
	t.Parallel()
	base := freePorts(t, 3)
	var procs []*proc
	var addrs []string
	for i := 0; i < 3; i++ {
		p := startProc(t, base+i, t.TempDir())
		procs = append(procs, p)
		addrs = append(addrs, p.addr())
	}
	out, err := run(t, 60*time.Second, "redis-cli", append(append([]string{"--cluster", "create"}, addrs...),
		"--cluster-yes")...)
	require.NoError(t, err, out)
	waitClusterOK(t, 30*time.Second, procs...)

	t.Run("publish across nodes in order", func(t *testing.T) {
		for _, proto := range []int{2, 3} {
			a, b, c := procs[0].client(proto), procs[1].client(proto), procs[2].client(proto)
			sub := a.Subscribe(bg, "news")
			_, err := sub.Receive(bg)
			require.NoError(t, err)
			psub := b.PSubscribe(bg, "new*")
			_, err = psub.Receive(bg)
			require.NoError(t, err)
			// PUBLISH answers with the local receivers only, as Redis Cluster.
			require.EqualValues(t, 0, c.Publish(bg, "news", "warm-up").Val())
			for _, s := range []*redis.PubSub{sub, psub} {
				m, err := s.ReceiveMessage(bg)
				require.NoError(t, err)
				require.Equal(t, "warm-up", m.Payload)
			}
			const n = 10000
			go func() {
				p := c.Pipeline()
				for i := 0; i < n; i++ {
					p.Publish(bg, "news", strconv.Itoa(i))
					if i%500 == 499 {
						_, _ = p.Exec(bg)
					}
				}
			}()
			for _, s := range []*redis.PubSub{sub, psub} {
				for i := 0; i < n; i++ {
					m, err := s.ReceiveMessage(bg)
					require.NoError(t, err)
					require.Equal(t, "news", m.Channel)
					require.Equal(t, strconv.Itoa(i), m.Payload, "proto %d", proto)
				}
			}
			_ = sub.Close()
			_ = psub.Close()
			_ = a.Close()
			_ = b.Close()
			_ = c.Close()
		}
	})

	t.Run("sharded pub/sub", func(t *testing.T) {
		cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ReadTimeout: 10 * time.Second})
		defer cc.Close()
		sub := cc.SSubscribe(bg, "{s}ch")
		_, err := sub.Receive(bg)
		require.NoError(t, err)
		require.EqualValues(t, 1, cc.SPublish(bg, "{s}ch", "hello").Val())
		m, err := sub.ReceiveMessage(bg)
		require.NoError(t, err)
		require.Equal(t, "hello", m.Payload)
		_ = sub.Close()

		// A node that does not own the slot redirects; CROSSSLOT for two slots.
		slot := slots.HashSlotString("{s}ch")
		var notOwner *proc
		for _, p := range procs {
			cli := p.client(2)
			err := cli.Do(bg, "SPUBLISH", "{s}ch", "x").Err()
			if err != nil {
				require.True(t, strings.HasPrefix(err.Error(), "MOVED "+strconv.Itoa(slot)+" "), err.Error())
				notOwner = p
			}
			require.EqualError(t, cli.Do(bg, "SSUBSCRIBE", "a", "b").Err(), "CROSSSLOT Keys in request don't hash to the same slot")
			_ = cli.Close()
		}
		require.NotNil(t, notOwner)
	})

	t.Run("rueidis client-side caching", func(t *testing.T) {
		rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: addrs})
		require.NoError(t, err)
		defer rc.Close()
		cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ReadTimeout: 10 * time.Second})
		defer cc.Close()
		for i := 0; i < 20; i++ {
			key := "cache:" + strconv.Itoa(i)
			require.NoError(t, cc.Set(bg, key, "v1", 0).Err())
			get := func() (string, bool) {
				r := rc.DoCache(bg, rc.B().Get().Key(key).Cache(), time.Minute)
				v, err := r.ToString()
				require.NoError(t, err)
				return v, r.IsCacheHit()
			}
			v, _ := get()
			require.Equal(t, "v1", v)
			v, hit := get()
			require.Equal(t, "v1", v)
			require.True(t, hit)
			require.NoError(t, cc.Set(bg, key, "v2", 0).Err())
			eventually(t, 5*time.Second, func() bool { v, _ := get(); return v == "v2" }, "stale cached "+key)
		}
	})
}
