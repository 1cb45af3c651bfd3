package netio_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
	"github.com/slotd/slotd/slots"
)

func bulk(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }

// Reply bytes below were captured from redis-server 7.0.15.
func TestPubSubRESP2Shapes(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t)
	w := dialWire(t, n.Addr)
	require.Equal(t, "*3\r\n$11\r\nunsubscribe\r\n$-1\r\n:0\r\n", w.do("UNSUBSCRIBE"))
	require.Equal(t, "*3\r\n$12\r\npunsubscribe\r\n$-1\r\n:0\r\n", w.do("PUNSUBSCRIBE"))
	require.Equal(t, "*3\r\n$12\r\nsunsubscribe\r\n$-1\r\n:0\r\n", w.do("SUNSUBSCRIBE"))

	w.send("SUBSCRIBE", "a", "b")
	require.Equal(t, "*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n", w.read())
	require.Equal(t, "*3\r\n$9\r\nsubscribe\r\n$1\r\nb\r\n:2\r\n", w.read())
	require.Equal(t, "*3\r\n$10\r\npsubscribe\r\n$2\r\nx*\r\n:3\r\n", w.do("PSUBSCRIBE", "x*"))
	require.Equal(t, "*2\r\n$4\r\npong\r\n$0\r\n\r\n", w.do("PING"))
	require.Equal(t, "*2\r\n$4\r\npong\r\n$2\r\nhi\r\n", w.do("PING", "hi"))
	require.Equal(t, "-ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context\r\n",
		w.do("GET", "x"))
	require.Equal(t, "*3\r\n$10\r\nssubscribe\r\n$2\r\ns1\r\n:1\r\n", w.do("SSUBSCRIBE", "s1"))

	pub := n.Client(t)
	ctx := context.Background()
	require.EqualValues(t, 1, pub.Publish(ctx, "a", "hello").Val())
	require.Equal(t, "*3\r\n$7\r\nmessage\r\n$1\r\na\r\n$5\r\nhello\r\n", w.read())
	require.EqualValues(t, 1, pub.Publish(ctx, "xyz", "m").Val())
	require.Equal(t, "*4\r\n$8\r\npmessage\r\n$2\r\nx*\r\n$3\r\nxyz\r\n$1\r\nm\r\n", w.read())
	require.EqualValues(t, 1, pub.SPublish(ctx, "s1", "sm").Val())
	require.Equal(t, "*3\r\n$8\r\nsmessage\r\n$2\r\ns1\r\n$2\r\nsm\r\n", w.read())
	require.EqualValues(t, 0, pub.Publish(ctx, "nobody", "m").Val())

	require.Equal(t, []string{"a", "b"}, sorted(pub.PubSubChannels(ctx, "*").Val()))
	require.Equal(t, map[string]int64{"a": 1, "zz": 0}, pub.PubSubNumSub(ctx, "a", "zz").Val())
	require.EqualValues(t, 1, pub.PubSubNumPat(ctx).Val())
	require.Equal(t, []string{"s1"}, pub.PubSubShardChannels(ctx, "*").Val())
	require.Equal(t, map[string]int64{"s1": 1}, pub.PubSubShardNumSub(ctx, "s1").Val())
	list := pub.ClientList(ctx).Val()
	require.Contains(t, list, "flags=P db=0 sub=2 psub=1 ssub=1")

	w.send("UNSUBSCRIBE")
	// Redis walks its dict; the order of the two replies is not defined.
	got := []string{w.read(), w.read()}
	require.True(t, strings.HasSuffix(got[0], ":2\r\n"), got[0])
	require.True(t, strings.HasSuffix(got[1], ":1\r\n"), got[1])
	require.Equal(t, "*3\r\n$12\r\npunsubscribe\r\n$2\r\nx*\r\n:0\r\n", w.do("PUNSUBSCRIBE"))
	require.Equal(t, "*3\r\n$12\r\nsunsubscribe\r\n$2\r\ns1\r\n:0\r\n", w.do("SUNSUBSCRIBE"))
	require.Equal(t, "$-1\r\n", w.do("GET", "x"))
	require.Equal(t, "+PONG\r\n", w.do("PING"))
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestPubSubRESP3Shapes(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t)
	w := dialWire(t, n.Addr)
	w.do("HELLO", "3")
	require.Equal(t, ">3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n", w.do("SUBSCRIBE", "a"))
	require.Equal(t, "_\r\n", w.do("GET", "x"))
	w.send("UNSUBSCRIBE", "a", "zz")
	require.Equal(t, ">3\r\n$11\r\nunsubscribe\r\n$1\r\na\r\n:0\r\n", w.read())
	require.Equal(t, ">3\r\n$11\r\nunsubscribe\r\n$2\r\nzz\r\n:0\r\n", w.read())
	w.send("SSUBSCRIBE", "a", "b")
	require.Equal(t, ">3\r\n$10\r\nssubscribe\r\n$1\r\na\r\n:1\r\n", w.read())
	require.Equal(t, ">3\r\n$10\r\nssubscribe\r\n$1\r\nb\r\n:2\r\n", w.read())
	require.Equal(t, "*4\r\n$1\r\na\r\n:0\r\n$1\r\nb\r\n:0\r\n", w.do("PUBSUB", "NUMSUB", "a", "b"))
	require.Equal(t, ":0\r\n", w.do("PUBSUB", "NUMPAT"))
	require.Equal(t, "+PONG\r\n", w.do("PING"))
	// The publisher's own copy comes before the count, as in Redis.
	require.Equal(t, ">3\r\n$8\r\nsmessage\r\n$1\r\na\r\n$1\r\nm\r\n", w.do("SPUBLISH", "a", "m"))
	require.Equal(t, ":1\r\n", w.read())
	require.Equal(t, "-ERR unknown subcommand 'foo'. Try PUBSUB HELP.\r\n", w.do("PUBSUB", "foo"))
	require.Equal(t, "+RESET\r\n", w.do("RESET"))
	require.Equal(t, "*0\r\n", w.do("PUBSUB", "SHARDCHANNELS"))
}

// A push never lands inside a pipelined reply sequence, and messages from
// one publisher arrive in order, with go-redis in both protocols.
func TestPubSubGoRedisOrdered(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t)
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		sub := n.Client(t, proto).Subscribe(ctx, "ch")
		_, err := sub.Receive(ctx)
		require.NoError(t, err)
		psub := n.Client(t, proto).PSubscribe(ctx, "c*")
		_, err = psub.Receive(ctx)
		require.NoError(t, err)
		pub := n.Client(t)
		const N = 2000
		go func() {
			p := pub.Pipeline()
			for i := 0; i < N; i++ {
				p.Publish(ctx, "ch", strconv.Itoa(i))
				if i%100 == 99 {
					_, _ = p.Exec(ctx)
				}
			}
		}()
		for _, s := range []*redis.PubSub{sub, psub} {
			for i := 0; i < N; i++ {
				m, err := s.ReceiveMessage(ctx)
				require.NoError(t, err)
				require.Equal(t, "ch", m.Channel)
				require.Equal(t, strconv.Itoa(i), m.Payload, "proto %d", proto)
			}
		}
		require.NoError(t, sub.Close())
		require.NoError(t, psub.Close())
	}
}

// A subscriber that never reads is disconnected at the pubsub hard limit.
func TestPubSubSlowSubscriberDisconnected(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t, "client-output-buffer-limit", "pubsub 256kb 0 0")
	w := dialWire(t, n.Addr)
	require.Equal(t, "*3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n", w.do("SUBSCRIBE", "c"))
	pub := n.Client(t)
	ctx := context.Background()
	msg := strings.Repeat("x", 16<<10)
	// The subscriber never reads: once the socket buffers fill, the server
	// must drop it rather than buffer without bound.
	nodetest.Eventually(t, 20*time.Second, func() bool {
		p := pub.Pipeline()
		for i := 0; i < 64; i++ {
			p.Publish(ctx, "c", msg)
		}
		_, _ = p.Exec(ctx)
		return pub.PubSubNumSub(ctx, "c").Val()["c"] == 0
	}, "slow subscriber not disconnected")
	require.NotContains(t, pub.ClientList(ctx).Val(), "sub=1")
}

func TestSubscribedClientCloseCleansUp(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t)
	ctx := context.Background()
	sub := n.Client(t).Subscribe(ctx, "gone")
	_, err := sub.Receive(ctx)
	require.NoError(t, err)
	c := n.Client(t)
	require.Equal(t, map[string]int64{"gone": 1}, c.PubSubNumSub(ctx, "gone").Val())
	require.NoError(t, sub.Close())
	nodetest.Eventually(t, 5*time.Second, func() bool { return c.PubSubNumSub(ctx, "gone").Val()["gone"] == 0 }, "not cleaned")
	info := c.Info(ctx, "stats").Val()
	require.Contains(t, info, "pubsub_channels:0")
}

// Sharded pub/sub in cluster mode: channels route like keys, and losing a
// slot unsubscribes its channels' subscribers with a sunsubscribe push.
func TestShardPubSubClusterSlots(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t, "cluster-enabled", "yes", "cluster-require-full-coverage", "no")
	ctx := context.Background()
	admin := n.Client(t, 2)
	// "a" is in slot 15495, "b" in 3300, "{a}x" shares a's slot.
	require.NoError(t, admin.ClusterAddSlotsRange(ctx, 15000, 16000).Err())
	nodetest.Eventually(t, 10*time.Second, func() bool {
		return strings.Contains(admin.ClusterInfo(ctx).Val(), "cluster_state:ok")
	}, "cluster_state:ok after ADDSLOTSRANGE")
	w := dialWire(t, n.Addr)
	require.Equal(t, "-CLUSTERDOWN Hash slot not served\r\n", w.do("SSUBSCRIBE", "b"))
	require.Equal(t, "-CROSSSLOT Keys in request don't hash to the same slot\r\n", w.do("SSUBSCRIBE", "a", "b"))
	require.Equal(t, "-CLUSTERDOWN Hash slot not served\r\n", w.do("SPUBLISH", "b", "m"))
	w.send("SSUBSCRIBE", "a", "{a}x")
	require.Equal(t, "*3\r\n$10\r\nssubscribe\r\n$1\r\na\r\n:1\r\n", w.read())
	require.Equal(t, "*3\r\n$10\r\nssubscribe\r\n$4\r\n{a}x\r\n:2\r\n", w.read())
	w3 := dialWire(t, n.Addr)
	w3.do("HELLO", "3")
	require.Equal(t, ">3\r\n$10\r\nssubscribe\r\n$1\r\na\r\n:1\r\n", w3.do("SSUBSCRIBE", "a"))
	require.EqualValues(t, 2, admin.SPublish(ctx, "a", "m1").Val())
	require.Equal(t, "*3\r\n$8\r\nsmessage\r\n$1\r\na\r\n$2\r\nm1\r\n", w.read())
	require.Equal(t, ">3\r\n$8\r\nsmessage\r\n$1\r\na\r\n$2\r\nm1\r\n", w3.read())

	require.NoError(t, admin.ClusterDelSlots(ctx, 15495).Err())
	// Channels of one client go in name order.
	got := []string{w.read(), w.read()}
	require.Equal(t, "*3\r\n$12\r\nsunsubscribe\r\n$1\r\na\r\n:1\r\n", got[0])
	require.Equal(t, "*3\r\n$12\r\nsunsubscribe\r\n$4\r\n{a}x\r\n:0\r\n", got[1])
	require.Equal(t, ">3\r\n$12\r\nsunsubscribe\r\n$1\r\na\r\n:0\r\n", w3.read())
	// In subscribed mode, cluster redirections come first (as in Redis).
	servedKey := ""
	for i := 0; servedKey == ""; i++ {
		if sl := slots.HashSlotString("k" + strconv.Itoa(i)); sl >= 15000 && sl <= 16000 && sl != 15495 {
			servedKey = "k" + strconv.Itoa(i)
		}
	}
	require.Equal(t, "*3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n", w.do("SUBSCRIBE", "c"))
	require.Equal(t, "-CLUSTERDOWN Hash slot not served\r\n", w.do("GET", "b"))
	require.Equal(t, "-ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context\r\n",
		w.do("GET", servedKey))
	require.Equal(t, "*3\r\n$11\r\nunsubscribe\r\n$1\r\nc\r\n:0\r\n", w.do("UNSUBSCRIBE"))
	// Out of subscribed mode again.
	require.Equal(t, "+PONG\r\n", w.do("PING"))
	require.Empty(t, admin.PubSubShardChannels(ctx, "*").Val())
}

func TestPublishFromScript(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t)
	w := dialWire(t, n.Addr)
	require.Equal(t, "*3\r\n$9\r\nsubscribe\r\n$1\r\nx\r\n:1\r\n", w.do("SUBSCRIBE", "x"))
	c := n.Client(t)
	ctx := context.Background()
	require.EqualValues(t, 1, c.Eval(ctx, "return redis.call('publish','x','y')", nil).Val())
	require.Equal(t, "*3\r\n$7\r\nmessage\r\n$1\r\nx\r\n$1\r\ny\r\n", w.read())
	require.EqualValues(t, 0, c.Eval(ctx, "return redis.call('spublish',KEYS[1],'y')", []string{"x"}).Val())
}
