package cmdtest_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/cmd/node/nodetest"
	"github.com/slotd/slotd/slots"
)

// WATCH records do not outlive the client's watch: an UNWATCH, DISCARD or
// RESET in the same read as the WATCH (whose batch has not reached the
// shard yet), and an EXEC over keys of several shards, leave none behind
// in any shard.
func TestWatchLeavesNoRecords(t *testing.T) {
	n := nodetest.Start(t, "shard-actors", "4")
	ctx := context.Background()
	c := n.Client(t)
	var keys []string // one per shard
	seen := map[int]bool{}
	for i := 0; len(keys) < 4; i++ {
		k := "w" + strconv.Itoa(i)
		if sh := slots.HashSlotString(k) % 4; !seen[sh] {
			seen[sh] = true
			keys = append(keys, k)
		}
	}
	records := func() int {
		total := 0
		for _, k := range keys {
			inShard(t, n, k, func(s *engine.Shard, _ int) { total += s.WatchRecords() })
		}
		return total
	}
	for _, tail := range [][]string{{"UNWATCH"}, {"MULTI", "DISCARD"}, {"RESET"}} {
		p := c.Pipeline()
		p.Do(ctx, "WATCH", keys[0], keys[1])
		for _, cmd := range tail {
			p.Do(ctx, cmd)
		}
		_, err := p.Exec(ctx)
		require.NoError(t, err)
		require.Zero(t, records(), "records left after WATCH then %v in one read", tail)
	}
	// A transaction over two shards watching keys of a third.
	p := c.Pipeline()
	p.Do(ctx, "WATCH", keys[2], keys[3])
	p.Do(ctx, "MULTI")
	p.Set(ctx, keys[0], "1", 0)
	p.Set(ctx, keys[1], "1", 0)
	exec := p.Do(ctx, "EXEC")
	_, err := p.Exec(ctx)
	require.NoError(t, err)
	require.Equal(t, []any{"OK", "OK"}, exec.Val())
	require.Zero(t, records(), "records left after a cross-shard EXEC")
	// And one aborted by a write to a watched key.
	require.NoError(t, c.Watch(ctx, func(tx *redis.Tx) error {
		require.NoError(t, n.Client(t).Set(ctx, keys[3], "x", 0).Err())
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, keys[0], "2", 0)
			return nil
		})
		require.Equal(t, redis.TxFailedErr, err)
		return nil
	}, keys[2], keys[3]))
	require.Equal(t, "1", c.Get(ctx, keys[0]).Val())
	require.Zero(t, records(), "records left after an aborted EXEC")
}
