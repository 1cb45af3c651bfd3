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

// TestStrings runs the string command tests against one node (several
// shard actors); each part uses its own keys.
func TestStrings(t *testing.T) {
	n := nodetest.Start(t, "shard-actors", "4")
	for _, part := range []struct {
		name string
		fn   func(*testing.T, *nodetest.Node)
	}{
		{"WithGoRedis", strTestWithGoRedis},
		{"TTL", strTestTTL},
		{"WrongType", strTestWrongType},
		{"CrossSlot", strTestCrossSlot},
	} {
		t.Run(part.name, func(t *testing.T) { part.fn(t, n) })
	}
}

// strTestWithGoRedis drives the commands through go-redis's typed API in
// both protocols.
func strTestWithGoRedis(t *testing.T, n *nodetest.Node) {
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		t.Run("RESP"+strconv.Itoa(proto), func(t *testing.T) {
			c := n.Client(t, proto)
			k := func(s string) string { return "{gr" + strconv.Itoa(proto) + "}" + s }

			_, err := c.Get(ctx, k("x")).Result()
			require.ErrorIs(t, err, redis.Nil)
			require.NoError(t, c.Set(ctx, k("x"), "1", 0).Err())
			v, err := c.IncrByFloat(ctx, k("x"), 0.25).Result()
			require.NoError(t, err)
			assert.Equal(t, 1.25, v)
			ok, err := c.SetNX(ctx, k("x"), "2", 0).Result()
			require.NoError(t, err)
			assert.False(t, ok)
			vals, err := c.MGet(ctx, k("x"), k("missing")).Result()
			require.NoError(t, err)
			assert.Equal(t, []any{"1.25", nil}, vals)
			require.NoError(t, c.MSet(ctx, k("a"), "ohmytext", k("b"), "mynewtext").Err())
			l, err := c.LCS(ctx, &redis.LCSQuery{Key1: k("a"), Key2: k("b"), Idx: true, WithMatchLen: true}).Result()
			require.NoError(t, err)
			assert.Equal(t, int64(6), l.Len)
			require.Len(t, l.Matches, 2)
			assert.Equal(t, redis.LCSMatchedPosition{Key1: redis.LCSPosition{Start: 4, End: 7},
				Key2: redis.LCSPosition{Start: 5, End: 8}, MatchLen: 4}, l.Matches[0])
			s, err := c.GetEx(ctx, k("a"), time.Minute).Result()
			require.NoError(t, err)
			assert.Equal(t, "ohmytext", s)
			prev, err := c.SetArgs(ctx, k("a"), "new", redis.SetArgs{Get: true, KeepTTL: true}).Result()
			require.NoError(t, err)
			assert.Equal(t, "ohmytext", prev)
			ln, err := c.SetRange(ctx, k("a"), 1, "EW").Result()
			require.NoError(t, err)
			assert.Equal(t, int64(3), ln)
			s, err = c.GetRange(ctx, k("a"), 0, -1).Result()
			require.NoError(t, err)
			assert.Equal(t, "nEW", s)
			err = c.Decr(ctx, k("a")).Err()
			require.EqualError(t, err, "ERR value is not an integer or out of range")
		})
	}
}

// strTestTTL checks which commands set, keep or clear a key's TTL.
func strTestTTL(t *testing.T, n *nodetest.Node) {
	c := respDial(t, n.Addr, 2)
	const hour = int64(3600 * 1000)
	ttl := func(key string) int64 { return strPTTL(t, n, key) }
	near := func(key string, want int64) {
		t.Helper()
		got := ttl(key)
		assert.True(t, got > want-60_000 && got <= want, "%s: pttl %d, want about %d", key, got, want)
	}

	c.Do("SET", "t", "v", "EX", "3600")
	near("t", hour)
	c.Do("SET", "t", "v", "PX", "7200000")
	near("t", 2*hour)
	c.Do("SET", "t", "w", "KEEPTTL")
	near("t", 2*hour)
	c.Do("SET", "t", "w")
	assert.Equal(t, int64(-1), ttl("t"), "plain SET clears the TTL")

	at := time.Now().Add(time.Hour).Unix()
	c.Do("SET", "t", "v", "EXAT", strconv.FormatInt(at, 10))
	near("t", hour)
	c.Do("SET", "t", "v", "PXAT", strconv.FormatInt(at*1000+hour, 10))
	near("t", 2*hour)

	c.Do("SETEX", "t", "3600", "v")
	near("t", hour)
	c.Do("GETSET", "t", "v")
	assert.Equal(t, int64(-1), ttl("t"), "GETSET clears the TTL")
	c.Do("PSETEX", "t", "3600000", "1")
	for _, cmd := range [][]string{{"INCR", "t"}, {"INCRBY", "t", "2"}, {"DECR", "t"}, {"DECRBY", "t", "1"},
		{"INCRBYFLOAT", "t", "1.5"}, {"APPEND", "t", "0"}, {"SETRANGE", "t", "0", "9"}} {
		c.Do(cmd...)
		near("t", hour)
	}
	assert.Equal(t, respBulk("9.50"), c.Do("GET", "t"))
	c.Do("MSET", "t", "v")
	assert.Equal(t, int64(-1), ttl("t"), "MSET clears the TTL")

	assert.Equal(t, respBulk("v"), c.Do("GETEX", "t", "EX", "3600"))
	near("t", hour)
	assert.Equal(t, respBulk("v"), c.Do("GETEX", "t"))
	near("t", hour)
	assert.Equal(t, respBulk("v"), c.Do("GETEX", "t", "PXAT", strconv.FormatInt(at*1000+hour, 10)))
	near("t", 2*hour)
	assert.Equal(t, respBulk("v"), c.Do("GETEX", "t", "PERSIST"))
	assert.Equal(t, int64(-1), ttl("t"))
	assert.Equal(t, respBulk("v"), c.Do("GETEX", "t", "EXAT", "1"))
	assert.Equal(t, int64(-2), ttl("t"), "GETEX with a past time deletes the key")

	// A short TTL really expires the key.
	c.Do("SET", "short", "v", "PX", "20")
	nodetest.Eventually(t, 5*time.Second, func() bool { return c.Do("GET", "short") == "$-1\r\n" },
		"key with a 20ms TTL never expired")
	assert.Equal(t, respInt(1), c.Do("SETNX", "short", "again"), "an expired key counts as missing")
}

// strTestWrongType runs every command against a key of another type.
func strTestWrongType(t *testing.T, n *nodetest.Node) {
	for _, proto := range []int{2, 3} {
		c := respDial(t, n.Addr, proto)
		tag := "{wt" + strconv.Itoa(proto) + "}"
		key, other := tag+"list", tag+"str"
		strPlantList(t, n, c, key)
		c.Do("SET", other, "abc")
		wrong := respErr("WRONGTYPE Operation against a key holding the wrong kind of value")
		for _, args := range [][]string{
			{"GET", key}, {"SET", key, "v", "GET"}, {"SET", key, "v", "NX", "GET"}, {"GETSET", key, "v"},
			{"GETDEL", key}, {"GETEX", key}, {"GETEX", key, "EX", "abc"}, {"INCR", key}, {"DECR", key},
			{"INCRBY", key, "1"}, {"DECRBY", key, "1"}, {"INCRBYFLOAT", key, "1"}, {"APPEND", key, "x"},
			{"STRLEN", key}, {"GETRANGE", key, "0", "1"}, {"SETRANGE", key, "0", "x"}, {"SETRANGE", key, "0", ""},
		} {
			assert.Equal(t, wrong, c.Do(args...), "%q", args)
		}
		lcsErr := respErr("ERR The specified keys must contain string values")
		assert.Equal(t, lcsErr, c.Do("LCS", key, other))
		assert.Equal(t, lcsErr, c.Do("LCS", other, key, "BADOPTION"))
		assert.Equal(t, "*2\r\n"+respNull(proto)+respBulk("abc"), c.Do("MGET", key, other),
			"MGET reports other types as nil")
		// Argument errors come before the type check.
		assert.Equal(t, respErr("ERR value is not an integer or out of range"), c.Do("INCRBY", key, "x"))
		assert.Equal(t, respErr("ERR syntax error"), c.Do("SET", key, "v", "BAD"))
		// The failed commands left the value alone; commands that replace
		// values of any type do so.
		assert.Equal(t, wrong, c.Do("GET", key))
		assert.Equal(t, respInt(0), c.Do("SETNX", key, "v"))
		assert.Equal(t, respInt(0), c.Do("MSETNX", key, "v"))
		assert.Equal(t, "+OK\r\n", c.Do("SET", key, "now a string"))
		assert.Equal(t, respBulk("now a string"), c.Do("GET", key))
		strPlantList(t, n, c, key)
		assert.Equal(t, "+OK\r\n", c.Do("MSET", key, "1"))
		assert.Equal(t, respInt(2), c.Do("INCR", key))
	}
}

// strTestCrossSlot checks multi-key commands across slots. Standalone
// nodes split MGET and MSET per slot (netio/split.go); MSETNX and LCS run
// over keys of several slots whole (netio/spread.go), as in Redis.
func strTestCrossSlot(t *testing.T, n *nodetest.Node) {
	c := respDial(t, n.Addr, 2)
	assert.Equal(t, ":1\r\n", c.Do("MSETNX", "a", "1", "b", "2"))
	assert.Equal(t, ":0\r\n", c.Do("MSETNX", "c", "3", "b", "2"))
	assert.Equal(t, "$0\r\n\r\n", c.Do("LCS", "a", "b"))
	assert.Equal(t, "$-1\r\n", c.Do("GET", "c"), "nothing was written")
	assert.Equal(t, "+OK\r\n", c.Do("MSET", "{x}a", "1", "{x}b", "2"))
	assert.Equal(t, "*2\r\n"+respBulk("1")+respBulk("2"), c.Do("MGET", "{x}a", "{x}b"))
	assert.Equal(t, "+OK\r\n", c.Do("MSET", "a", "1", "b", "2", "{x}a", "3"))
	assert.Equal(t, "*4\r\n"+respBulk("1")+respBulk("3")+"$-1\r\n"+respBulk("2"), c.Do("MGET", "a", "{x}a", "c", "b"))
}
