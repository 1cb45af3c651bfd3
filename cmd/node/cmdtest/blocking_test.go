package cmdtest_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

func TestBlockingPopServedByLaterPush(t *testing.T) {
	n := nodetest.Start(t, "shard-actors", "4")
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		waiter := n.Client(t, proto)
		pusher := n.Client(t, proto)
		res := make(chan []string, 1)
		go func() {
			v, err := waiter.BLPop(ctx, 10*time.Second, "{bq}a", "{bq}b").Result()
			if err != nil {
				v = []string{"error", err.Error()}
			}
			res <- v
		}()
		// The waiter is parked once INFO counts it.
		nodetest.Eventually(t, 5*time.Second, func() bool {
			return nodetest.InfoField(t, pusher, "clients", "blocked_clients") == "1"
		}, "client never blocked (proto "+strconv.Itoa(proto)+"): "+nodetest.InfoField(t, pusher, "clients", "blocked_clients"))
		require.NoError(t, pusher.RPush(ctx, "{bq}b", "x", "y").Err())
		require.Equal(t, []string{"{bq}b", "x"}, <-res)
		require.Equal(t, []string{"y"}, pusher.LRange(ctx, "{bq}b", 0, -1).Val())
		require.NoError(t, pusher.Del(ctx, "{bq}b").Err())
	}
}

func TestBlockingTimeoutAndPipelinedOrder(t *testing.T) {
	n := nodetest.Start(t)
	ctx := context.Background()
	c := n.Client(t, 2)
	start := time.Now()
	err := c.Do(ctx, "BRPOP", "bq:none", "0.2").Err()
	require.ErrorIs(t, err, redis.Nil)
	require.GreaterOrEqual(t, time.Since(start), 150*time.Millisecond)

	// Commands pipelined after a blocking command run after it is served.
	other := n.Client(t, 2)
	p := c.Pipeline()
	pop := p.BLPop(ctx, 10*time.Second, "bq:p")
	after := p.LLen(ctx, "bq:p")
	done := make(chan error, 1)
	go func() { _, err := p.Exec(ctx); done <- err }()
	nodetest.Eventually(t, 5*time.Second, func() bool {
		return nodetest.InfoField(t, other, "clients", "blocked_clients") == "1"
	}, "client never blocked")
	require.NoError(t, other.RPush(ctx, "bq:p", "1", "2").Err())
	require.NoError(t, <-done)
	require.Equal(t, []string{"bq:p", "1"}, pop.Val())
	require.Equal(t, int64(1), after.Val())

	// Inside MULTI a blocking command answers at once.
	cmds, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.BLPop(ctx, 0, "bq:never")
		return nil
	})
	require.ErrorIs(t, err, redis.Nil)
	require.Len(t, cmds, 1)

	// Errors.
	require.EqualError(t, c.Do(ctx, "BLPOP", "k", "-1").Err(), "ERR timeout is negative")
	require.EqualError(t, c.Do(ctx, "BLPOP", "k", "abc").Err(), "ERR timeout is not a float or out of range")
}

func TestBlockingMoveAndDisconnect(t *testing.T) {
	n := nodetest.Start(t)
	ctx := context.Background()
	c := n.Client(t)
	// A client that disconnects while blocked does not consume later pushes.
	gone := redis.NewClient(&redis.Options{Addr: n.Addr, MaxRetries: -1})
	go func() { gone.BLPop(ctx, 0, "{m}src") }()
	nodetest.Eventually(t, 5*time.Second, func() bool {
		return nodetest.InfoField(t, c, "clients", "blocked_clients") == "1"
	}, "client never blocked")
	require.NoError(t, gone.Close())
	nodetest.Eventually(t, 5*time.Second, func() bool {
		return nodetest.InfoField(t, c, "clients", "blocked_clients") == "0"
	}, "blocked client not released on disconnect")

	res := make(chan string, 1)
	waiter := n.Client(t)
	go func() { res <- waiter.BLMove(ctx, "{m}src", "{m}dst", "RIGHT", "LEFT", 10*time.Second).Val() }()
	nodetest.Eventually(t, 5*time.Second, func() bool {
		return nodetest.InfoField(t, c, "clients", "blocked_clients") == "1"
	}, "client never blocked")
	require.NoError(t, c.LPush(ctx, "{m}src", "v").Err())
	require.Equal(t, "v", <-res)
	require.Equal(t, []string{"v"}, c.LRange(ctx, "{m}dst", 0, -1).Val())
	require.Equal(t, int64(0), c.Exists(ctx, "{m}src").Val())
}

func TestBlockingZPopServedByZAdd(t *testing.T) {
	n := nodetest.Start(t, "shard-actors", "2")
	ctx := context.Background()
	c := n.Client(t)
	res := make(chan *redis.ZWithKey, 1)
	waiter := n.Client(t)
	go func() { res <- waiter.BZPopMax(ctx, 10*time.Second, "{z}a", "{z}b").Val() }()
	nodetest.Eventually(t, 5*time.Second, func() bool {
		return nodetest.InfoField(t, c, "clients", "blocked_clients") == "1"
	}, "client never blocked")
	require.NoError(t, c.ZAdd(ctx, "{z}b", redis.Z{Score: 1, Member: "low"}, redis.Z{Score: 5, Member: "high"}).Err())
	got := <-res
	require.Equal(t, "{z}b", got.Key)
	require.Equal(t, "high", got.Member)
	require.Equal(t, float64(5), got.Score)
}

// A positive timeout too small for a double still times out (Redis reads it
// as a long double), instead of blocking forever like 0 would.
func TestBlockingTinyTimeoutTimesOut(t *testing.T) {
	n := nodetest.Start(t)
	c := n.Client(t, 2)
	err := c.Do(context.Background(), "BLPOP", "bq:tiny", "1e-400").Err()
	require.ErrorIs(t, err, redis.Nil)
}

// TestBlockingTimeoutParsingLikeRedis: timeouts are read as Redis 7.0
// reads them (long double, ceil to ms, no range check), checked side by
// side with redis-server: the same error or the same immediate time-out;
// a timeout that blocks there blocks here too, shown by serving it.
func TestBlockingTimeoutParsingLikeRedis(t *testing.T) {
	n := nodetest.Start(t)
	ref := redis.NewClient(&redis.Options{Addr: nodetest.StartRedis(t)})
	t.Cleanup(func() { _ = ref.Close() })
	ctx := context.Background()
	c := n.Client(t, 2)
	errText := func(err error) string {
		if err == nil {
			return "<nil>"
		}
		return err.Error()
	}
	for _, tm := range []string{"1e400", "inf", "-inf", "+Infinity", "-1e400", "1e5000", "1e-5000", "nan",
		"9223372036854775.808", "1e18", "-1", "abc", " 1", "1e-400", "0.0001", "0x0.0001p-4"} {
		want := errText(ref.Do(ctx, "BLPOP", "bq:none", tm).Err())
		require.Equal(t, want, errText(c.Do(ctx, "BLPOP", "bq:none", tm).Err()), "timeout %q", tm)
	}
	for _, tm := range []string{"-0.0001", "0x10", "9223372036854775.807", "9.2e15", "-0"} {
		other := n.Client(t, 2)
		done := make(chan error, 1)
		go func() { done <- c.Do(ctx, "BLPOP", "bq:later", tm).Err() }()
		nodetest.Eventually(t, 5*time.Second, func() bool {
			return nodetest.InfoField(t, other, "clients", "blocked_clients") == "1"
		}, "BLPOP with timeout "+tm+" did not block")
		require.NoError(t, other.RPush(ctx, "bq:later", "x").Err())
		require.NoError(t, <-done, "timeout %q", tm)
	}
}
