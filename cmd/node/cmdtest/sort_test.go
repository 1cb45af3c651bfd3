package cmdtest_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
	"github.com/slotd/slotd/slots"
)

const sortNonLocal = "ERR SORT BY/GET pattern reached a key served by another shard actor (use a hash tag, or shard-actors 1)"

// A standalone node spreads its slots over shard actors: SORT reaches the
// pattern keys and the STORE destination in any slot of the sorted key's
// actor (it runs there, as one command); a pattern key of another actor
// fails the command, a destination of another actor is CROSSSLOT. In
// cluster mode any other slot is CROSSSLOT and BY/GET patterns are refused,
// as in Redis Cluster 7.0.
func TestSortAcrossActors(t *testing.T) {
	ctx := context.Background()
	n := nodetest.Start(t, "shard-actors", "4")
	c := n.Client(t)
	src := scrKey("src", 1, 4, -1)
	srcSlot := slots.HashSlot([]byte(src))
	// Two elements whose weight keys are in actor 1, in other slots.
	var local []string
	for _, e := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m"} {
		sl := slots.HashSlot([]byte("w_" + e))
		if sl%4 == 1 && sl != srcSlot && len(local) < 2 {
			local = append(local, e)
		}
	}
	require.Len(t, local, 2)
	require.NoError(t, c.RPush(ctx, src, local[0], local[1]).Err())
	require.NoError(t, c.MSet(ctx, "w_"+local[0], "2", "w_"+local[1], "1").Err())
	assert.Equal(t, []any{local[1], local[0]}, c.Do(ctx, "SORT", src, "BY", "w_*").Val())
	assert.Equal(t, []any{"1", "2"}, c.Do(ctx, "SORT", src, "BY", "w_*", "GET", "w_*").Val())

	dst := scrKey("dst", 1, 4, srcSlot)
	assert.Equal(t, int64(2), c.Do(ctx, "SORT", src, "ALPHA", "STORE", dst).Val())
	assert.Equal(t, []string{local[0], local[1]}, c.LRange(ctx, dst, 0, -1).Val())
	far := scrKey("far", 2, 4, -1)
	assert.EqualError(t, c.Do(ctx, "SORT", src, "ALPHA", "STORE", far).Err(),
		"CROSSSLOT Keys in request don't hash to the same slot")
	// Inside MULTI too.
	pipe := c.TxPipeline()
	st := pipe.Do(ctx, "SORT", src, "ALPHA", "DESC", "STORE", dst)
	_, err := pipe.Exec(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(2), st.Val())
	assert.Equal(t, []string{local[1], local[0]}, c.LRange(ctx, dst, 0, -1).Val())

	// An element whose weight key lives in another actor.
	farEle := scrKey("w_", 3, 4, -1)[2:]
	require.NoError(t, c.RPush(ctx, src, farEle).Err())
	assert.EqualError(t, c.Do(ctx, "SORT", src, "BY", "w_*").Err(), sortNonLocal)
	assert.EqualError(t, c.Do(ctx, "SORT", src, "ALPHA", "GET", "w_*").Err(), sortNonLocal)
	assert.Equal(t, []any{local[0], local[1], farEle}, c.Do(ctx, "SORT", src, "BY", "nosort", "GET", "#").Val(),
		"no pattern key, no limit")

	cl := nodetest.Start(t, "cluster-enabled", "yes", "shard-actors", "4")
	cc := cl.Client(t)
	require.NoError(t, cc.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", "0", "16383").Err())
	nodetest.Eventually(t, 5*time.Second, func() bool {
		return cc.Do(ctx, "SORT", src).Err() == nil
	}, "slots served")
	assert.EqualError(t, cc.Do(ctx, "SORT", src, "STORE", dst).Err(),
		"CROSSSLOT Keys in request don't hash to the same slot")
	assert.EqualError(t, cc.Do(ctx, "SORT", src, "BY", "w_*").Err(), "ERR BY option of SORT denied in Cluster mode.")
	assert.EqualError(t, cc.Do(ctx, "SORT", src, "BY", "nosort", "GET", "#").Err(),
		"ERR GET option of SORT denied in Cluster mode.")
	assert.Equal(t, []any{}, cc.Do(ctx, "SORT", src, "BY", "nosort").Val())
}

// SORT and SORT_RO side by side with redis-server, byte for byte, in both
// protocols (every key carries the hash tag, so any shard-actors count
// reaches them all).
func TestSortSameAsRedis(t *testing.T) {
	script := [][]string{
		{"RPUSH", "{t}l", "3", "1", "2", "10", "-5", "1.5"},
		{"SORT", "{t}l"}, {"SORT", "{t}l", "DESC"}, {"SORT", "{t}l", "ALPHA"},
		{"SORT", "{t}l", "ALPHA", "DESC", "LIMIT", "1", "2"}, {"SORT", "{t}l", "LIMIT", "-1", "2"},
		{"SORT", "{t}l", "LIMIT", "2", "100"}, {"SORT", "{t}l", "LIMIT", "10", "1"}, {"SORT", "{t}l", "LIMIT", "0", "0"},
		{"SORT", "{t}l", "LIMIT", "a", "1"}, {"SORT", "{t}l", "LIMIT", "1"}, {"SORT", "{t}l", "GET"}, {"SORT", "{t}l", "BY"},
		{"SORT", "{t}l", "BY", "nosort"}, {"SORT", "{t}l", "BY", "nosort", "DESC", "LIMIT", "1", "2"},
		{"MSET", "{t}w_3", "30", "{t}w_1", "10", "{t}w_2", "20", "{t}w_10", "5", "{t}w_-5", "100"},
		{"SORT", "{t}l", "BY", "{t}w_*"}, {"SORT", "{t}l", "BY", "{t}w_*", "GET", "#", "GET", "{t}w_*"},
		{"SORT", "{t}l", "BY", "{t}w_*", "DESC", "GET", "{t}w_*", "GET", "{t}nokey", "GET", "#"},
		{"HSET", "{t}h_1", "f", "9"}, {"HSET", "{t}h_3", "f", "1"},
		{"SORT", "{t}l", "BY", "{t}h_*->f"}, {"SORT", "{t}l", "BY", "{t}h_*->f", "ALPHA", "LIMIT", "4", "2"},
		{"SORT", "{t}l", "BY", "{t}h_*->", "GET", "{t}h_*->f"},
		{"SORT", "{t}l", "STORE", "{t}dst"}, {"LRANGE", "{t}dst", "0", "-1"},
		{"SORT", "{t}l", "BY", "{t}w_*", "GET", "{t}w_*", "STORE", "{t}dst2"}, {"LRANGE", "{t}dst2", "0", "-1"},
		{"SET", "{t}dst", "x", "EX", "100"}, {"SORT", "{t}l", "LIMIT", "0", "2", "STORE", "{t}dst"},
		{"TTL", "{t}dst"}, {"OBJECT", "ENCODING", "{t}dst"},
		{"SORT", "{t}nokey", "STORE", "{t}dst"}, {"EXISTS", "{t}dst"},
		{"SORT_RO", "{t}l", "STORE", "{t}x"}, {"SORT_RO", "{t}l", "BY", "{t}w_*", "GET", "#"},
		{"SADD", "{t}s", "b", "a", "c", "1"}, {"SORT", "{t}s"}, {"SORT", "{t}s", "ALPHA"},
		{"SORT", "{t}s", "BY", "nosort", "STORE", "{t}sd"}, {"LRANGE", "{t}sd", "0", "-1"},
		{"EVAL", "return redis.call('sort', KEYS[1], 'by', 'nosort')", "1", "{t}s"},
		{"SET", "{t}str", "x"}, {"SORT", "{t}str"}, {"SORT", "{t}l", "foo"},
		{"ZADD", "{t}z", "1", "a", "5", "b", "2", "c", "10", "d", "3", "e"},
		{"SORT", "{t}z", "BY", "nosort"}, {"SORT", "{t}z", "BY", "nosort", "DESC", "LIMIT", "1", "2"},
		{"SORT", "{t}z", "BY", "nosort", "LIMIT", "5", "10"}, {"SORT", "{t}z", "BY", "nosort", "LIMIT", "-10", "100"},
		{"SORT", "{t}z", "ALPHA", "DESC"}, {"OBJECT", "ENCODING", "{t}z"},
		{"RPUSH", "{t}e", "", " 1", "0x1A", "inf", "-inf"}, {"SORT", "{t}e"},
		{"RPUSH", "{t}e", "1 "}, {"SORT", "{t}e"},
		{"COMMAND", "GETKEYS", "SORT", "abc", "STORE", "invalid", "STORE", "def"},
		{"COMMAND", "GETKEYS", "SORT_RO", "abc", "STORE", "def"},
	}
	sameAsRedis(t, "{t}", script)
}
