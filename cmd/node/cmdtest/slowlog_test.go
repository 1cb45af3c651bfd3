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

// SLOWLOG's entries as Redis makes them: id, unix time, µs, the arguments
// (32 at most, 128 bytes each, saying what was cut), client address and
// name; keyed commands (run by shard actors) and loop commands alike,
// EXEC not itself, secrets redacted; max length and reset.
func TestSlowlog(t *testing.T) {
	ctx := context.Background()
	n := shardsNode(t)
	c := redis.NewClient(&redis.Options{Addr: n.Addr, Protocol: 2, PoolSize: 1, ClientName: "slowpoke"})
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.ConfigSet(ctx, "slowlog-log-slower-than", "0").Err())
	require.NoError(t, c.Do(ctx, "SLOWLOG", "RESET").Err())
	args := []any{"RPUSH", "l"}
	for i := 0; i < 40; i++ {
		args = append(args, strconv.Itoa(i))
	}
	require.NoError(t, c.Do(ctx, args...).Err())
	require.NoError(t, c.Set(ctx, "k", strings.Repeat("x", 200), 0).Err())
	require.NoError(t, c.Do(ctx, "CONFIG", "SET", "masterauth", "secret").Err())
	_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error { p.Incr(ctx, "ctr"); return nil })
	require.NoError(t, err)
	require.NoError(t, c.ConfigSet(ctx, "slowlog-log-slower-than", "-1").Err())

	logs, err := c.SlowLogGet(ctx, -1).Result()
	require.NoError(t, err)
	var got [][]string
	for _, e := range logs {
		got = append(got, e.Args)
		assert.Equal(t, "slowpoke", e.ClientName)
		assert.True(t, strings.HasPrefix(e.ClientAddr, "127.0.0.1:"), e.ClientAddr)
		assert.InDelta(t, float64(logs[0].Time.Unix()), float64(e.Time.Unix()), 5)
	}
	want32 := append([]string{"RPUSH", "l"}, make([]string, 30)...)
	for i := 0; i < 29; i++ {
		want32[2+i] = strconv.Itoa(i)
	}
	want32[31] = "... (11 more arguments)"
	find := func(first string) []string {
		for _, a := range got {
			if a[0] == first {
				return a
			}
		}
		return nil
	}
	// The CONFIG SET that turned the log off is not in it, as in Redis.
	assert.Equal(t, []string{"incr", "ctr"}, got[0], "EXEC is not logged, its commands are")
	assert.Equal(t, []string{"multi"}, got[1])
	assert.Nil(t, find("exec"))
	assert.Equal(t, []string{"CONFIG", "SET", "masterauth", "(redacted)"}, find("CONFIG"))
	assert.Equal(t, []string{"set", "k", strings.Repeat("x", 128) + "... (72 more bytes)"}, find("set"))
	assert.Equal(t, want32, find("RPUSH"))
	assert.Greater(t, logs[0].ID, logs[1].ID)

	require.NoError(t, c.ConfigSet(ctx, "slowlog-max-len", "2").Err())
	require.NoError(t, c.ConfigSet(ctx, "slowlog-log-slower-than", "0").Err())
	assert.Equal(t, int64(2), c.Do(ctx, "SLOWLOG", "LEN").Val())
	assert.Len(t, c.SlowLogGet(ctx, 1).Val(), 1)
	assert.Equal(t, "OK", c.Do(ctx, "SLOWLOG", "RESET").Val())
	assert.EqualError(t, c.Do(ctx, "SLOWLOG", "GET", "-2").Err(), "ERR count should be greater than or equal to -1")
}

// A pipeline's fast commands (and SETs with small arguments) are timed as
// a run (engine.exec) while any other command is timed by itself: a slow
// script between two runs of GETs and SETs is the slowlog's one entry, and
// commandstats counts every call.
func TestSlowCommandAmongPipelinedFastOnes(t *testing.T) {
	ctx := context.Background()
	n := shardsNode(t)
	c := redis.NewClient(&redis.Options{Addr: n.Addr, Protocol: 2, PoolSize: 1})
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.Set(ctx, "{t}a", "v", 0).Err())
	require.NoError(t, c.ConfigSet(ctx, "slowlog-log-slower-than", "10000").Err())
	require.NoError(t, c.Do(ctx, "SLOWLOG", "RESET").Err())
	require.NoError(t, c.ConfigResetStat(ctx).Err())
	busy := "local n = 0 for i = 1, 3000000 do n = n + i end return redis.call('GET', KEYS[1])"
	_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := 0; i < 60; i++ {
			p.Get(ctx, "{t}a")
			p.Set(ctx, "{t}s", i, 0)
		}
		p.Set(ctx, "{t}big", strings.Repeat("x", 100<<10), 0) // timed by itself
		p.Eval(ctx, busy, []string{"{t}b"})
		for i := 0; i < 60; i++ {
			p.Get(ctx, "{t}a")
		}
		return nil
	})
	require.ErrorIs(t, err, redis.Nil) // the script's GET of {t}b
	logs, err := c.SlowLogGet(ctx, -1).Result()
	require.NoError(t, err)
	require.Len(t, logs, 1, "%v", logs)
	assert.Equal(t, "eval", strings.ToLower(logs[0].Args[0]))
	assert.GreaterOrEqual(t, logs[0].Duration.Microseconds(), int64(10000))
	stats, err := c.Info(ctx, "commandstats").Result()
	require.NoError(t, err)
	assert.Contains(t, stats, "cmdstat_get:calls=120,")
	assert.Contains(t, stats, "cmdstat_eval:calls=1,")
	assert.Contains(t, stats, "cmdstat_set:calls=61,")
	h, err := c.Do(ctx, "LATENCY", "HISTOGRAM", "get").Slice()
	require.NoError(t, err)
	require.Len(t, h, 2)
	assert.Equal(t, "get", h[0])
	assert.Equal(t, []any{"calls", int64(120)}, h[1].([]any)[:2], "every GET in latencystats")
}
