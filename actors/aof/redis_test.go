package aof_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// An AOF directory written by redis-server 7 loads into slotd (and is
// rewritten in slotd's per-shard layout), with an RDB or a RESP base.
func TestLoadsRedisServerAOF(t *testing.T) {
	for _, preamble := range []string{"yes", "no"} {
		t.Run("preamble-"+preamble, func(t *testing.T) {
			dir := t.TempDir()
			addr := nodetest.StartRedis(t, "--appendonly", "yes", "--dir", dir, "--aof-use-rdb-preamble", preamble)
			rc := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
			defer rc.Close()
			require.NoError(t, rc.Set(ctx, "gone", "x", 0).Err())
			require.NoError(t, rc.FlushAll(ctx).Err())
			require.NoError(t, rc.Set(ctx, "base", "1", 0).Err())
			require.NoError(t, rc.BgRewriteAOF(ctx).Err())
			nodetest.Eventually(t, 10*time.Second, func() bool {
				v := rc.Info(ctx, "persistence").Val()
				return strings.Contains(v, "aof_rewrite_in_progress:0") && strings.Contains(v, "aof_rewrite_scheduled:0")
			}, "redis rewrite done")
			require.NoError(t, rc.Incr(ctx, "n").Err())
			require.NoError(t, rc.Set(ctx, "ttl", "v", time.Hour).Err())
			require.NoError(t, rc.HSet(ctx, "h", "f", "v").Err())
			pipe := rc.TxPipeline()
			pipe.RPush(ctx, "l", "a", "b")
			pipe.LPop(ctx, "l")
			_, err := pipe.Exec(ctx)
			require.NoError(t, err)
			_ = rc.Shutdown(ctx).Err() // flushes the AOF; the connection drops

			n := nodetest.Start(t, "dir", dir, "appendonly", "yes")
			c := n.Client(t)
			assert.Equal(t, []any{"1", "1", "v", nil}, c.MGet(ctx, "base", "n", "ttl", "gone").Val())
			assert.InDelta(t, float64(time.Hour), float64(c.PTTL(ctx, "ttl").Val()), float64(time.Minute))
			assert.Equal(t, "v", c.HGet(ctx, "h", "f").Val())
			assert.Equal(t, []string{"b"}, c.LRange(ctx, "l", 0, -1).Val())
			m, _ := filepath.Glob(filepath.Join(dir, "appendonlydir", "*.s0.base.rdb"))
			assert.Len(t, m, 1, "rewritten in slotd's layout")
		})
	}
}
