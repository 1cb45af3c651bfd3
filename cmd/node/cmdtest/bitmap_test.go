package cmdtest_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// TestBitmaps checks the bitmap commands through go-redis in both
// protocols (values, nil, error texts) without needing a redis-server.
func TestBitmaps(t *testing.T) {
	n := nodetest.Start(t, "shard-actors", "4", "proto-max-bulk-len", "1mb")
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		t.Run("RESP"+strconv.Itoa(proto), func(t *testing.T) {
			c := n.Client(t, proto)
			k := func(s string) string { return "{bm" + strconv.Itoa(proto) + "}" + s }

			// SETBIT / GETBIT.
			assert.Equal(t, int64(0), c.SetBit(ctx, k("a"), 7, 1).Val())
			assert.Equal(t, int64(1), c.SetBit(ctx, k("a"), 7, 1).Val())
			assert.Equal(t, int64(1), c.GetBit(ctx, k("a"), 7).Val())
			assert.Equal(t, int64(0), c.GetBit(ctx, k("a"), 1000).Val())
			assert.Equal(t, int64(0), c.GetBit(ctx, k("none"), 3).Val())
			assert.Equal(t, int64(0), c.SetBit(ctx, k("a"), 17, 1).Val())
			assert.Equal(t, "\x01\x00\x40", c.Get(ctx, k("a")).Val())
			assert.EqualError(t, c.SetBit(ctx, k("a"), 8*1024*1024, 1).Err(),
				"ERR bit offset is not an integer or out of range")
			assert.EqualError(t, c.Do(ctx, "SETBIT", k("a"), "-1", "1").Err(),
				"ERR bit offset is not an integer or out of range")
			assert.EqualError(t, c.SetBit(ctx, k("a"), 1, 2).Err(), "ERR bit is not an integer or out of range")
			assert.EqualError(t, c.Do(ctx, "GETBIT", k("a"), "x").Err(),
				"ERR bit offset is not an integer or out of range")

			// BITCOUNT.
			require.NoError(t, c.Set(ctx, k("fb"), "foobar", 0).Err())
			assert.Equal(t, int64(26), c.BitCount(ctx, k("fb"), nil).Val())
			assert.Equal(t, int64(6), c.BitCount(ctx, k("fb"), &redis.BitCount{Start: 1, End: 1}).Val())
			assert.Equal(t, int64(17), c.BitCount(ctx, k("fb"),
				&redis.BitCount{Start: 5, End: 30, Unit: redis.BitCountIndexBit}).Val())
			assert.Equal(t, int64(0), c.BitCount(ctx, k("none"), nil).Val())
			assert.EqualError(t, c.Do(ctx, "BITCOUNT", k("fb"), "0").Err(), "ERR syntax error")
			assert.EqualError(t, c.Do(ctx, "BITCOUNT", k("fb"), "0", "1", "WORD").Err(), "ERR syntax error")
			assert.EqualError(t, c.Do(ctx, "BITCOUNT", k("fb"), "x", "1").Err(),
				"ERR value is not an integer or out of range")

			// BITPOS.
			require.NoError(t, c.Set(ctx, k("p"), "\xff\xf0\x00", 0).Err())
			assert.Equal(t, int64(12), c.BitPos(ctx, k("p"), 0).Val())
			require.NoError(t, c.Set(ctx, k("p"), "\x00\xff\xf0", 0).Err())
			assert.Equal(t, int64(8), c.BitPos(ctx, k("p"), 1, 0).Val())
			assert.Equal(t, int64(16), c.BitPos(ctx, k("p"), 1, 2, -1).Val())
			assert.Equal(t, int64(8), c.BitPosSpan(ctx, k("p"), 1, 7, 15, "bit").Val())
			require.NoError(t, c.Set(ctx, k("ones"), "\xff\xff", 0).Err())
			assert.Equal(t, int64(16), c.BitPos(ctx, k("ones"), 0).Val())
			assert.Equal(t, int64(-1), c.BitPos(ctx, k("ones"), 0, 0, -1).Val())
			assert.Equal(t, int64(-1), c.BitPos(ctx, k("none"), 1).Val())
			assert.Equal(t, int64(0), c.BitPos(ctx, k("none"), 0).Val())
			assert.EqualError(t, c.BitPos(ctx, k("p"), 2).Err(), "ERR The bit argument must be 1 or 0.")

			// BITOP.
			require.NoError(t, c.Set(ctx, k("x"), "\x0f\xf0ab", 0).Err())
			require.NoError(t, c.Set(ctx, k("y"), "\xff", 0).Err())
			assert.Equal(t, int64(4), c.BitOpAnd(ctx, k("d"), k("x"), k("y")).Val())
			assert.Equal(t, "\x0f\x00\x00\x00", c.Get(ctx, k("d")).Val())
			assert.Equal(t, int64(4), c.BitOpOr(ctx, k("d"), k("x"), k("y")).Val())
			assert.Equal(t, "\xff\xf0ab", c.Get(ctx, k("d")).Val())
			assert.Equal(t, int64(4), c.BitOpXor(ctx, k("d"), k("x"), k("y"), k("none")).Val())
			assert.Equal(t, "\xf0\xf0ab", c.Get(ctx, k("d")).Val())
			assert.Equal(t, int64(1), c.BitOpNot(ctx, k("d"), k("y")).Val())
			assert.Equal(t, "\x00", c.Get(ctx, k("d")).Val())
			require.NoError(t, c.Expire(ctx, k("d"), time.Hour).Err())
			assert.Equal(t, int64(4), c.BitOpOr(ctx, k("d"), k("x")).Val())
			assert.Equal(t, time.Duration(-1), c.TTL(ctx, k("d")).Val(), "BITOP replaces the TTL")
			assert.Equal(t, int64(0), c.BitOpOr(ctx, k("d"), k("none")).Val())
			assert.Equal(t, int64(0), c.Exists(ctx, k("d")).Val(), "an empty result deletes destkey")
			assert.EqualError(t, c.Do(ctx, "BITOP", "NOT", k("d"), k("x"), k("y")).Err(),
				"ERR BITOP NOT must be called with a single source key.")
			assert.EqualError(t, c.Do(ctx, "BITOP", "NAND", k("d"), k("x")).Err(), "ERR syntax error")
			// Standalone: a destination of another slot, as in Redis.
			require.NoError(t, c.Do(ctx, "BITOP", "AND", "{other}d", k("x")).Err())
			assert.Equal(t, c.Get(ctx, k("x")).Val(), c.Get(ctx, "{other}d").Val())

			// BITFIELD / BITFIELD_RO.
			vals, err := c.BitField(ctx, k("f"), "SET", "u8", 0, 255, "GET", "i8", 0, "INCRBY", "u4", "#1", 20).Result()
			require.NoError(t, err)
			assert.Equal(t, []int64{0, -1, 3}, vals, "u4 wraps: 15+20 = 3 (mod 16)")
			res, err := c.Do(ctx, "BITFIELD", k("f"), "OVERFLOW", "FAIL", "INCRBY", "u8", 0, 100,
				"OVERFLOW", "SAT", "INCRBY", "i8", 0, -1000).Slice()
			require.NoError(t, err)
			assert.Equal(t, []any{nil, int64(-128)}, res, "FAIL answers nil")
			vals, err = c.BitFieldRO(ctx, k("f"), "u8", 0, "i4", 4).Result()
			require.NoError(t, err)
			assert.Equal(t, []int64{128, 0}, vals)
			assert.EqualError(t, c.Do(ctx, "BITFIELD_RO", k("f"), "SET", "u8", 0, 1).Err(),
				"ERR BITFIELD_RO only supports the GET subcommand")
			assert.EqualError(t, c.Do(ctx, "BITFIELD", k("f"), "GET", "u64", 0).Err(),
				"ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.")
			assert.EqualError(t, c.Do(ctx, "BITFIELD", k("f"), "OVERFLOW", "X").Err(),
				"ERR Invalid OVERFLOW type specified")
			assert.EqualError(t, c.Do(ctx, "BITFIELD", k("f"), "GET", "u8").Err(), "ERR syntax error")
			assert.Empty(t, c.Do(ctx, "BITFIELD", k("none")).Val())

			// Wrong types.
			require.NoError(t, c.LPush(ctx, k("l"), "x").Err())
			for _, args := range [][]any{{"SETBIT", k("l"), 1, 1}, {"GETBIT", k("l"), 1}, {"BITCOUNT", k("l")},
				{"BITPOS", k("l"), 1}, {"BITOP", "OR", k("d"), k("l")}, {"BITFIELD", k("l"), "GET", "u8", 0},
				{"BITFIELD_RO", k("l"), "GET", "u8", 0}} {
				assert.EqualError(t, c.Do(ctx, args...).Err(),
					"WRONGTYPE Operation against a key holding the wrong kind of value", "%v", args)
			}
		})
	}
}

// TestBitmapWatch checks which bitmap writes dirty WATCHed keys: real
// changes do, no-op writes and BITOP's source keys do not.
func TestBitmapWatch(t *testing.T) {
	n := nodetest.Start(t, "shard-actors", "2")
	ctx := context.Background()
	c := n.Client(t)
	other := n.Client(t)
	require.NoError(t, c.Set(ctx, "{w}a", "\x01", 0).Err())
	assert.True(t, watchRun(t, c, "{w}a", func() { other.SetBit(ctx, "{w}a", 7, 1) }), "SETBIT of an equal bit")
	assert.True(t, watchRun(t, c, "{w}a", func() { other.BitOpOr(ctx, "{w}d", "{w}a") }), "BITOP source")
	assert.True(t, watchRun(t, c, "{w}a", func() { other.BitField(ctx, "{w}a", "SET", "u8", 0, 1) }), "same value")
	assert.False(t, watchRun(t, c, "{w}a", func() { other.SetBit(ctx, "{w}a", 0, 1) }), "SETBIT change")
	assert.False(t, watchRun(t, c, "{w}a", func() { other.SetBit(ctx, "{w}a", 100, 0) }), "SETBIT growing")
	assert.False(t, watchRun(t, c, "{w}d", func() { other.BitOpNot(ctx, "{w}d", "{w}a") }), "BITOP destkey")
	assert.False(t, watchRun(t, c, "{w}a", func() { other.BitField(ctx, "{w}a", "INCRBY", "u8", 0, 1) }), "BITFIELD")
}

// TestBitmapDefaultLimit checks the default offset limit: 2^32 bits, the
// default proto-max-bulk-len of 512MB.
func TestBitmapDefaultLimit(t *testing.T) {
	n := nodetest.Start(t, "shard-actors", "2")
	ctx := context.Background()
	c := n.Client(t, 2)
	const errOffset = "ERR bit offset is not an integer or out of range"
	assert.EqualError(t, c.SetBit(ctx, "k", 1<<32, 1).Err(), errOffset)
	assert.EqualError(t, c.GetBit(ctx, "k", 1<<32).Err(), errOffset)
	assert.Equal(t, int64(0), c.GetBit(ctx, "k", 1<<32-1).Val())
	assert.Equal(t, []int64{0}, c.BitFieldRO(ctx, "k", "u8", 1<<32-1).Val())
	assert.EqualError(t, c.Do(ctx, "BITFIELD", "k", "GET", "u8", "#536870912").Err(), errOffset)
	assert.Equal(t, int64(0), c.Exists(ctx, "k").Val())
}
