package cmdtest_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// TestHyperLogLog checks the HyperLogLog commands through go-redis in both
// protocols without needing a redis-server.
func TestHyperLogLog(t *testing.T) {
	n := nodetest.Start(t, "shard-actors", "4")
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		t.Run("RESP"+strconv.Itoa(proto), func(t *testing.T) {
			c := n.Client(t, proto)
			k := func(s string) string { return "{hl" + strconv.Itoa(proto) + "}" + s }

			assert.Equal(t, int64(1), c.PFAdd(ctx, k("a")).Val(), "creating the key counts as a change")
			assert.Equal(t, "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xff", c.Get(ctx, k("a")).Val())
			assert.Equal(t, "string", c.Type(ctx, k("a")).Val())
			assert.Equal(t, int64(0), c.PFCount(ctx, k("a")).Val())
			assert.Equal(t, int64(1), c.PFAdd(ctx, k("a"), "x", "y", "z").Val())
			assert.Equal(t, int64(0), c.PFAdd(ctx, k("a"), "x", "y").Val())
			assert.Equal(t, int64(3), c.PFCount(ctx, k("a")).Val())
			assert.Equal(t, int64(0), c.PFCount(ctx, k("none")).Val())
			assert.Equal(t, int64(1), c.PFAdd(ctx, k("b"), "z", "w").Val())
			assert.Equal(t, int64(4), c.PFCount(ctx, k("a"), k("b"), k("none")).Val())
			assert.Equal(t, "OK", c.PFMerge(ctx, k("m"), k("a"), k("b")).Val())
			assert.Equal(t, int64(4), c.PFCount(ctx, k("m")).Val())

			// Many elements: the sketch turns dense and stays accurate.
			var elems []any
			for i := 0; i < 20000; i++ {
				elems = append(elems, "e"+strconv.Itoa(i))
			}
			require.NoError(t, c.PFAdd(ctx, k("big"), elems...).Err())
			assert.Equal(t, "dense", c.Do(ctx, "PFDEBUG", "ENCODING", k("big")).Val())
			assert.Len(t, c.Get(ctx, k("big")).Val(), 12304)
			assert.InEpsilon(t, 20000, c.PFCount(ctx, k("big")).Val(), 0.03)

			// PFDEBUG.
			assert.Equal(t, "sparse", c.Do(ctx, "PFDEBUG", "ENCODING", k("b")).Val())
			dec, err := c.Do(ctx, "PFDEBUG", "DECODE", k("b")).Text()
			require.NoError(t, err)
			assert.Regexp(t, `^(Z:\d+ )?v:\d+,1 (Z:\d+ )?v:\d+,1( Z:\d+)?$`, dec)
			assert.Equal(t, int64(1), c.Do(ctx, "PFDEBUG", "TODENSE", k("b")).Val())
			assert.Equal(t, int64(0), c.Do(ctx, "PFDEBUG", "TODENSE", k("b")).Val())
			regs, err := c.Do(ctx, "PFDEBUG", "GETREG", k("b")).Slice()
			require.NoError(t, err)
			assert.Len(t, regs, 16384)
			assert.EqualError(t, c.Do(ctx, "PFDEBUG", "DECODE", k("b")).Err(), "ERR HLL encoding is not sparse")
			assert.EqualError(t, c.Do(ctx, "PFDEBUG", "GETREG", k("none")).Err(),
				"ERR The specified key does not exist")
			assert.EqualError(t, c.Do(ctx, "PFDEBUG", "FOO", k("b")).Err(), "ERR Unknown PFDEBUG subcommand 'FOO'")
			assert.Equal(t, int64(2), c.PFCount(ctx, k("b")).Val())

			// Errors.
			require.NoError(t, c.Set(ctx, k("s"), "not a sketch", 0).Err())
			require.NoError(t, c.LPush(ctx, k("l"), "x").Err())
			for _, args := range [][]any{{"PFADD", k("s"), "a"}, {"PFCOUNT", k("s")}, {"PFCOUNT", k("a"), k("s")},
				{"PFMERGE", k("a"), k("s")}, {"PFMERGE", k("s"), k("a")}, {"PFDEBUG", "ENCODING", k("s")}} {
				assert.EqualError(t, c.Do(ctx, args...).Err(), "WRONGTYPE Key is not a valid HyperLogLog string value.",
					"%v", args)
			}
			for _, args := range [][]any{{"PFADD", k("l"), "a"}, {"PFCOUNT", k("l")}, {"PFMERGE", k("a"), k("l")}} {
				assert.EqualError(t, c.Do(ctx, args...).Err(),
					"WRONGTYPE Operation against a key holding the wrong kind of value", "%v", args)
			}
			corrupt := "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x7f\xfe"
			require.NoError(t, c.Set(ctx, k("bad"), corrupt, 0).Err())
			for _, args := range [][]any{{"PFCOUNT", k("bad")}, {"PFCOUNT", k("bad"), k("a")},
				{"PFMERGE", k("a"), k("bad")}, {"PFDEBUG", "TODENSE", k("bad")}} {
				assert.EqualError(t, c.Do(ctx, args...).Err(), "INVALIDOBJ Corrupted HLL object detected", "%v", args)
			}
			// Standalone: keys of several slots, as in Redis.
			assert.Equal(t, c.PFCount(ctx, k("a")).Val(), c.PFCount(ctx, k("a"), "{other}b").Val())
		})
	}
}

// TestHyperLogLogSparseMaxBytes checks that CONFIG SET hll-sparse-max-bytes
// takes effect at once.
func TestHyperLogLogSparseMaxBytes(t *testing.T) {
	n := nodetest.Start(t, "shard-actors", "2")
	ctx := context.Background()
	c := n.Client(t)
	require.NoError(t, c.ConfigSet(ctx, "hll-sparse-max-bytes", "0").Err())
	require.NoError(t, c.PFAdd(ctx, "h", "a").Err())
	assert.Equal(t, "dense", c.Do(ctx, "PFDEBUG", "ENCODING", "h").Val(), "any growth promotes at 0")
	require.NoError(t, c.ConfigSet(ctx, "hll-sparse-max-bytes", "3000").Err())
	require.NoError(t, c.PFAdd(ctx, "h2", "a").Err())
	assert.Equal(t, "sparse", c.Do(ctx, "PFDEBUG", "ENCODING", "h2").Val())
}

// TestHyperLogLogWatch checks which HyperLogLog commands dirty WATCHed
// keys: PFCOUNT refreshing the cache does (as in Redis), a PFADD that
// changes nothing and PFMERGE's sources do not.
func TestHyperLogLogWatch(t *testing.T) {
	n := nodetest.Start(t, "shard-actors", "2")
	ctx := context.Background()
	c := n.Client(t)
	other := n.Client(t)
	require.NoError(t, c.PFAdd(ctx, "{w}h", "a", "b").Err())
	assert.False(t, watchRun(t, c, "{w}h", func() { other.PFCount(ctx, "{w}h") }), "PFCOUNT refreshing the cache")
	assert.True(t, watchRun(t, c, "{w}h", func() { other.PFCount(ctx, "{w}h") }), "PFCOUNT from the cache")
	assert.True(t, watchRun(t, c, "{w}h", func() { other.PFAdd(ctx, "{w}h", "a") }), "PFADD changing nothing")
	assert.True(t, watchRun(t, c, "{w}h", func() { other.PFMerge(ctx, "{w}d", "{w}h") }), "PFMERGE source")
	assert.False(t, watchRun(t, c, "{w}d", func() { other.PFMerge(ctx, "{w}d") }), "PFMERGE destkey")
	assert.False(t, watchRun(t, c, "{w}h", func() { other.PFAdd(ctx, "{w}h", "c") }), "PFADD change")
}
