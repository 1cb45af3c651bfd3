package repl_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSortStoreReplicated: SORT ... STORE reaches the replica as its
// result (the replica may spread slots over a different number of shard
// actors), and an empty result deletes the destination there too. On the
// primary, the destination and BY keys live in other slots of the sorted
// key's actor (shard-actors 1), as in redis-server.
func TestSortStoreReplicated(t *testing.T) {
	p := start(t, 1)
	r := start(t, 3)
	replicate(t, r, p)
	pc, rc := p.Client(t), r.Client(t)
	require.NoError(t, pc.RPush(ctx, "tosort", "3", "1", "2").Err())
	require.NoError(t, pc.MSet(ctx, "weight_1", "30", "weight_2", "20", "weight_3", "10").Err())
	n, err := pc.Do(ctx, "SORT", "tosort", "BY", "weight_*", "GET", "#", "GET", "weight_*", "STORE", "sort-res").Int64()
	require.NoError(t, err)
	assert.Equal(t, int64(6), n)
	require.Equal(t, int64(1), pc.Wait(ctx, 1, 0).Val())
	want := []string{"3", "10", "2", "20", "1", "30"}
	assert.Equal(t, want, pc.LRange(ctx, "sort-res", 0, -1).Val())
	assert.Equal(t, want, rc.LRange(ctx, "sort-res", 0, -1).Val())

	require.NoError(t, pc.Do(ctx, "SORT", "nokey", "STORE", "sort-res").Err())
	require.Equal(t, int64(1), pc.Wait(ctx, 1, 0).Val())
	assert.Equal(t, int64(0), rc.Exists(ctx, "sort-res").Val())
	// The replica refuses SORT (a write command); SORT_RO answers.
	assert.EqualError(t, rc.Do(ctx, "SORT", "tosort").Err(), "READONLY You can't write against a read only replica.")
	assert.Equal(t, []any{"1", "2", "3"}, rc.Do(ctx, "SORT_RO", "tosort").Val())
}
