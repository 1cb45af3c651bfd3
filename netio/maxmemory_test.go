package netio_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// maxmemory over TCP: noeviction refuses writes past the limit with Redis's
// -OOM while reads go on; allkeys-lru then evicts (INFO evicted_keys) and
// keeps the dataset near the limit; CONFIG RESETSTAT clears the count.
func TestMaxmemoryOverTCP(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t, "maxmemory", "1mb")
	c := n.Client(t)
	ctx := context.Background()
	big := strings.Repeat("x", 100_000)
	oom := 0
	for i := range 30 {
		err := c.Set(ctx, "big:"+strconv.Itoa(i), big, 0).Err()
		if err != nil {
			require.EqualError(t, err, "OOM command not allowed when used memory > 'maxmemory'.")
			oom++
		}
	}
	require.Greater(t, oom, 15)
	require.Equal(t, big, c.Get(ctx, "big:0").Val())
	mem := c.Info(ctx, "memory").Val()
	require.LessOrEqual(t, infoInt(t, mem, "used_memory_dataset"), int64(1<<20+120_000))
	require.Equal(t, int64(1<<20), infoInt(t, mem, "maxmemory"))

	require.NoError(t, c.ConfigSet(ctx, "maxmemory-policy", "allkeys-lru").Err())
	for i := range 30 {
		require.NoError(t, c.Set(ctx, "lru:"+strconv.Itoa(i), big, 0).Err())
	}
	require.Positive(t, infoInt(t, c.Info(ctx, "stats").Val(), "evicted_keys"))
	require.Less(t, c.DBSize(ctx).Val(), int64(30-oom+30))
	require.Equal(t, big, c.Get(ctx, "lru:29").Val(), "the newest key evicted")
	require.LessOrEqual(t, infoInt(t, c.Info(ctx, "memory").Val(), "used_memory_dataset"), int64(1<<20+120_000))
	require.NoError(t, c.ConfigResetStat(ctx).Err())
	require.Zero(t, infoInt(t, c.Info(ctx, "stats").Val(), "evicted_keys"))
}
