package cmdtest_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// LATENCY over TCP: with latency-monitor-threshold set, a slow loop command
// (DEBUG SLEEP) and a slow keyed command run by a shard actor (SORT ALPHA
// of a long list) are "command" events in LATEST/HISTORY/GRAPH/DOCTOR, and
// RESET drops them; threshold 0 records nothing.
func TestLatencyMonitor(t *testing.T) {
	ctx := context.Background()
	n := shardsNode(t, "enable-debug-command", "yes")
	c := redis.NewClient(&redis.Options{Addr: n.Addr, Protocol: 3, PoolSize: 1})
	t.Cleanup(func() { _ = c.Close() })

	require.NoError(t, c.Do(ctx, "DEBUG", "SLEEP", "0.06").Err())
	assert.Empty(t, c.Do(ctx, "LATENCY", "LATEST").Val(), "threshold 0: monitoring off")
	assert.Contains(t, c.Do(ctx, "LATENCY", "DOCTOR").Val(), "latency-monitor-threshold")

	require.NoError(t, c.ConfigSet(ctx, "latency-monitor-threshold", "50").Err())
	require.NoError(t, c.Do(ctx, "DEBUG", "SLEEP", "0.06").Err())
	latest := c.Do(ctx, "LATENCY", "LATEST").Val().([]any)
	require.Len(t, latest, 1)
	row := latest[0].([]any)
	assert.Equal(t, "command", row[0])
	assert.GreaterOrEqual(t, row[2].(int64), int64(60))
	assert.Equal(t, row[2], row[3], "latest and all-time worst")
	hist := c.Do(ctx, "LATENCY", "HISTORY", "command").Val().([]any)
	require.Len(t, hist, 1)
	assert.Equal(t, row[1], hist[0].([]any)[0])
	assert.Empty(t, c.Do(ctx, "LATENCY", "HISTORY", "nope").Val())
	assert.Contains(t, c.Do(ctx, "LATENCY", "GRAPH", "command").Val(), "command - high ")
	assert.EqualError(t, c.Do(ctx, "LATENCY", "GRAPH", "nope").Err(), "ERR No samples available for event 'nope'")
	assert.Contains(t, c.Do(ctx, "LATENCY", "DOCTOR").Val(), "1. command: 1 latency spikes")
	assert.Equal(t, int64(0), c.Do(ctx, "LATENCY", "RESET", "nope").Val())
	assert.Equal(t, int64(1), c.Do(ctx, "LATENCY", "RESET").Val())
	assert.Empty(t, c.Do(ctx, "LATENCY", "LATEST").Val())

	// A shard actor's slow command reaches the same store.
	p := c.Pipeline()
	for i := 0; i < 20; i++ {
		args := []any{"RPUSH", "big"}
		for j := 0; j < 5000; j++ {
			args = append(args, strconv.Itoa(i*5000+j)+"-value")
		}
		p.Do(ctx, args...)
	}
	_, err := p.Exec(ctx)
	require.NoError(t, err)
	require.NoError(t, c.ConfigSet(ctx, "latency-monitor-threshold", "1").Err())
	require.NoError(t, c.Do(ctx, "SORT", "big", "ALPHA", "LIMIT", "0", "1").Err())
	found := false
	for _, r := range c.Do(ctx, "LATENCY", "LATEST").Val().([]any) {
		found = found || r.([]any)[0] == "command"
	}
	assert.True(t, found, "SORT of 100000 strings took at least 1 ms in its shard")
	assert.EqualError(t, c.Do(ctx, "LATENCY", "HELP", "x").Err(),
		"ERR wrong number of arguments for 'latency|help' command")
}

// Per-command latency histograms: LATENCY HISTOGRAM's shape (calls and
// cumulative histogram_usec per command, subcommands by full name, unknown
// names skipped), INFO latencystats at latency-tracking-info-percentiles,
// latency-tracking no, and CONFIG RESETSTAT.
func TestLatencyHistogram(t *testing.T) {
	ctx := context.Background()
	n := shardsNode(t)
	c := redis.NewClient(&redis.Options{Addr: n.Addr, Protocol: 2, PoolSize: 1})
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.ConfigResetStat(ctx).Err())
	for _, k := range []string{"a", "b", "c"} {
		require.NoError(t, c.Set(ctx, k, "v", 0).Err())
	}
	require.NoError(t, c.Do(ctx, "CLIENT", "ID").Err())
	h := c.Do(ctx, "LATENCY", "HISTOGRAM", "set", "client", "blabla").Val().([]any)
	require.Len(t, h, 4, "set and client|id")
	got := map[string][]any{}
	for i := 0; i < len(h); i += 2 {
		got[h[i].(string)] = h[i+1].([]any)
	}
	require.Contains(t, got, "set")
	require.Contains(t, got, "client|id")
	set := got["set"]
	assert.Equal(t, []any{"calls", int64(3), "histogram_usec"}, set[:3])
	buckets := set[3].([]any)
	valid := map[int64]bool{}
	for k, top := 0, int64(1032); k < 21; k, top = k+1, top*2 {
		valid[(top-1)/1000] = true // the top of each doubling from 1024 ns, in µs
	}
	prev := int64(0)
	for i := 0; i < len(buckets); i += 2 {
		assert.True(t, valid[buckets[i].(int64)], "bucket %v", buckets[i])
		assert.Greater(t, buckets[i+1].(int64), prev, "cumulative, only where the count grew")
		prev = buckets[i+1].(int64)
	}
	assert.Equal(t, int64(3), prev)

	info := c.Info(ctx, "latencystats").Val()
	assert.Regexp(t, `latency_percentiles_usec_set:p50=\d+\.\d{3},p99=\d+\.\d{3},p99\.9=\d+\.\d{3}\r\n`, info)
	assert.Contains(t, info, "latency_percentiles_usec_client|id:")
	require.NoError(t, c.ConfigSet(ctx, "latency-tracking-info-percentiles", "0 90").Err())
	assert.Regexp(t, `latency_percentiles_usec_set:p0=\d+\.\d{3},p90=\d+\.\d{3}\r\n`, c.Info(ctx, "latencystats").Val())

	require.NoError(t, c.ConfigSet(ctx, "latency-tracking", "no").Err())
	require.NoError(t, c.Set(ctx, "a", "v", 0).Err())
	assert.NotContains(t, c.Info(ctx, "latencystats").Val(), "latency_percentiles_usec")
	require.NoError(t, c.ConfigSet(ctx, "latency-tracking", "yes").Err())
	assert.Equal(t, int64(3), c.Do(ctx, "LATENCY", "HISTOGRAM", "set").Val().([]any)[1].([]any)[1])

	require.NoError(t, c.ConfigResetStat(ctx).Err())
	all := c.Do(ctx, "LATENCY", "HISTOGRAM").Val().([]any)
	require.Len(t, all, 2, "only CONFIG RESETSTAT itself, recorded after the reset")
	assert.Equal(t, "config|resetstat", all[0])
	assert.True(t, strings.HasPrefix(c.Info(ctx, "latencystats").Val(), "# Latencystats\r\n"))
}
