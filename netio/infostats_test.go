package netio_test

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// statLines returns the lines of an INFO section with the per-call time
// fields (usec, usec_per_call) blanked, for comparing two servers.
func statLines(t *testing.T, c *redis.Client, section string) []string {
	t.Helper()
	txt, err := c.Info(context.Background(), section).Result()
	require.NoError(t, err)
	usec := regexp.MustCompile(`usec=\d+,usec_per_call=[\d.]+`)
	var out []string
	for _, l := range strings.Split(txt, "\r\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, usec.ReplaceAllString(l, "usec=_"))
		}
	}
	return out
}

// INFO commandstats and errorstats count what Redis counts: calls, calls
// refused before running (rejected: arity, a redirect) and calls that
// replied with an error (failed), per command; error replies per error
// code; CONFIG RESETSTAT clears them.
func TestCommandAndErrorStatsLikeRedis(t *testing.T) {
	ctx := context.Background()
	ref := redis.NewClient(&redis.Options{Addr: nodetest.StartRedis(t), Protocol: 2})
	defer ref.Close()
	n := nodetest.Start(t)
	ours := n.Client(t, 2)
	for _, c := range []*redis.Client{ref, ours} {
		require.NoError(t, c.ConfigResetStat(ctx).Err())
		c.Set(ctx, "k", "v", 0)
		c.Get(ctx, "k")
		c.Get(ctx, "k")
		c.LPush(ctx, "k", "x")             // WRONGTYPE: failed
		c.Do(ctx, "GET", "a", "b")         // arity: rejected
		c.Do(ctx, "NOSUCHCOMMAND")         // no command: ERR only
		c.Do(ctx, "CONFIG", "GET", "port") // a subcommand
		c.Do(ctx, "INCR", "k")             // ERR not an integer: failed
	}
	assert.Equal(t, statLines(t, ref, "errorstats"), statLines(t, ours, "errorstats"))
	want := statLines(t, ref, "commandstats")
	got := statLines(t, ours, "commandstats")
	for _, name := range []string{"set", "get", "lpush", "incr", "config|get"} {
		assert.Contains(t, got, findStat(want, name), name)
	}
	assert.Equal(t, "4", nodetest.InfoField(t, ours, "stats", "total_error_replies"))
	require.NoError(t, ours.ConfigResetStat(ctx).Err())
	assert.Empty(t, statLines(t, ours, "errorstats"))
	assert.Equal(t, "0", nodetest.InfoField(t, ours, "stats", "total_error_replies"))
}

func findStat(lines []string, name string) string {
	for _, l := range lines {
		if strings.HasPrefix(l, "cmdstat_"+name+":") {
			return l
		}
	}
	return "cmdstat_" + name + " (not in Redis's list)"
}

// A call refused by the cluster routing (here CLUSTERDOWN for a slot no
// node serves; a MOVED redirect takes the same path, Redis's 18-info) is
// a rejected call of the command and an errorstat of its code.
func TestRoutingRefusalCountsAsRejected(t *testing.T) {
	ctx := context.Background()
	n := nodetest.Start(t, "cluster-enabled", "yes")
	c := n.Client(t, 2)
	require.NoError(t, c.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", "0", "100").Err())
	// "key" hashes to slot 12539, which no node serves.
	err := c.Set(ctx, "key", "b", 0).Err()
	require.Error(t, err)
	code := strings.Fields(err.Error())[0]
	assert.Contains(t, statLines(t, c, "errorstats"), "errorstat_"+code+":count=1")
	assert.Contains(t, statLines(t, c, "commandstats"),
		"cmdstat_set:calls=0,usec=_,rejected_calls=1,failed_calls=0")
}

// A blocked command counts once, when it is served — woken by a write, by
// its timeout, or failed because its group went away — not when it
// blocks (Redis updates its statistics on unblock), beside redis-server.
func TestBlockedCommandCountsOnceWhenServed(t *testing.T) {
	ctx := context.Background()
	ref := redis.NewClient(&redis.Options{Addr: nodetest.StartRedis(t), Protocol: 2})
	defer ref.Close()
	n := nodetest.Start(t)
	ours := n.Client(t, 2)
	for _, c := range []*redis.Client{ref, ours} {
		require.NoError(t, c.ConfigResetStat(ctx).Err())
		other := redis.NewClient(&redis.Options{Addr: c.Options().Addr, Protocol: 2})
		done := make(chan error, 1)
		go func() { done <- other.BLPop(ctx, 0, "q").Err() }()
		waitBlocked(t, c, 1)
		c.RPush(ctx, "q", "x")
		require.NoError(t, <-done)
		require.Equal(t, redis.Nil, other.BLPop(ctx, 10*time.Millisecond, "q").Err()) // times out
		require.NoError(t, c.XGroupCreateMkStream(ctx, "s", "g", "$").Err())
		go func() {
			done <- other.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{"s", ">"}, Block: 0}).Err()
		}()
		waitBlocked(t, c, 1)
		require.NoError(t, c.XGroupDestroy(ctx, "s", "g").Err())
		require.ErrorContains(t, <-done, "NOGROUP")
		other.Close()
	}
	want, got := statLines(t, ref, "commandstats"), statLines(t, ours, "commandstats")
	for _, name := range []string{"blpop", "xreadgroup"} {
		assert.Contains(t, got, findStat(want, name), name)
	}
	assert.Contains(t, got, "cmdstat_blpop:calls=2,usec=_,rejected_calls=0,failed_calls=0")
	assert.Contains(t, got, "cmdstat_xreadgroup:calls=1,usec=_,rejected_calls=0,failed_calls=1")
}

// waitBlocked waits until n clients are blocked.
func waitBlocked(t *testing.T, c *redis.Client, n int) {
	t.Helper()
	want := strconv.Itoa(n)
	nodetest.Eventually(t, 5*time.Second, func() bool {
		return nodetest.InfoField(t, c, "clients", "blocked_clients") == want
	}, "no blocked client")
}
