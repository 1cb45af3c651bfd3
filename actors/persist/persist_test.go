package persist_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/difftest"
	"github.com/slotd/slotd/cmd/node/nodetest"
)

var ctx = context.Background()

// fill writes keys of every type and encoding (small and big, compressible
// strings, integer strings, expiries) through c.
func fill(t *testing.T, c *redis.Client) {
	t.Helper()
	p := c.Pipeline()
	p.Set(ctx, "s:small", "hello", 0)
	p.Set(ctx, "s:int", "-1234567", 0)
	p.Set(ctx, "s:bigint", "12345678901234", 0)
	p.Set(ctx, "s:long", strings.Repeat("abc", 200), 0)
	p.Set(ctx, "s:bin", "\x00\xff\r\n", 0)
	p.Set(ctx, "s:ttl", "v", time.Hour)
	p.RPush(ctx, "l:small", "a", "1", "b", "-5")
	for i := range 3000 {
		p.RPush(ctx, "l:big", fmt.Sprintf("element-%d", i))
	}
	p.HSet(ctx, "h:small", "f", "v", "n", "7")
	for i := range 300 {
		p.HSet(ctx, "h:big", fmt.Sprintf("f%d", i), strings.Repeat("x", i%80))
	}
	p.SAdd(ctx, "set:int", 1, 2, 3, -9)
	p.SAdd(ctx, "set:str", "a", "b", "c")
	for i := range 1000 {
		p.SAdd(ctx, "set:big", i)
	}
	p.ZAdd(ctx, "z:small", redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2.5, Member: "b"})
	for i := range 300 {
		p.ZAdd(ctx, "z:big", redis.Z{Score: float64(i) / 3, Member: fmt.Sprintf("m%d", i)})
	}
	p.PFAdd(ctx, "hll", "a", "b", "c")
	p.Expire(ctx, "h:small", time.Hour)
	// Streams: several nodes, deleted entries, groups with pending entries
	// and consumers with and without them, an empty stream with a group.
	for i := range 700 {
		p.XAdd(ctx, &redis.XAddArgs{Stream: "x:big", ID: fmt.Sprintf("%d-%d", 1000+i/3, i%3),
			Values: []any{"field", i, "other", strings.Repeat("v", i%50)}})
	}
	p.XDel(ctx, "x:big", "1000-1", "1100-0", "1233-0")
	p.XGroupCreate(ctx, "x:big", "g1", "0")
	p.XGroupCreate(ctx, "x:big", "g2", "1200-0")
	p.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g1", Consumer: "alice", Streams: []string{"x:big", ">"}, Count: 30})
	p.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g1", Consumer: "bob", Streams: []string{"x:big", ">"}, Count: 5})
	p.XAck(ctx, "x:big", "g1", "1001-0", "1002-2")
	p.XGroupCreateConsumer(ctx, "x:big", "g2", "idle")
	p.XDel(ctx, "x:big", "1003-0") // pending but deleted
	p.XAdd(ctx, &redis.XAddArgs{Stream: "x:small", ID: "5-1", Values: []any{"a", "1"}})
	p.XGroupCreateMkStream(ctx, "x:empty", "g", "$")
	p.XAdd(ctx, &redis.XAddArgs{Stream: "x:trimmed", ID: "7-0", MaxLen: 0, Values: []any{"a", "b"}})
	_, err := p.Exec(ctx)
	require.NoError(t, err)
	for i := range 500 {
		require.NoError(t, c.Set(ctx, fmt.Sprintf("k:%d", i), i, 0).Err())
	}
}

// sameData checks both servers hold the same keys with the same values
// (DEBUG DIGEST-VALUE, which both implement) and TTLs.
func sameData(t *testing.T, want, got *redis.Client) {
	t.Helper()
	keys, err := want.Keys(ctx, "*").Result()
	require.NoError(t, err)
	require.NotEmpty(t, keys)
	n, err := got.DBSize(ctx).Result()
	require.NoError(t, err)
	assert.Equal(t, int64(len(keys)), n)
	for _, k := range keys {
		a, err := want.Do(ctx, "DEBUG", "DIGEST-VALUE", k).Result()
		require.NoError(t, err)
		b, err := got.Do(ctx, "DEBUG", "DIGEST-VALUE", k).Result()
		require.NoError(t, err)
		assert.Equal(t, a, b, "value of %s", k)
		if want.Type(ctx, k).Val() == "stream" {
			// The digest covers the entries; the rest (groups, pending
			// entries, bookkeeping) shows in XINFO, compared in RESP2.
			info := func(c *redis.Client) any {
				c2 := redis.NewClient(&redis.Options{Addr: c.Options().Addr, Protocol: 2})
				defer c2.Close()
				return c2.Do(ctx, "XINFO", "STREAM", k, "FULL").Val()
			}
			assert.Equal(t, info(want), info(got), "stream %s", k)
		}
		ta, tb := want.PTTL(ctx, k).Val(), got.PTTL(ctx, k).Val()
		if ta < 0 {
			assert.Equal(t, ta, tb, "ttl of %s", k)
		} else {
			assert.InDelta(t, float64(ta), float64(tb), float64(10*time.Second), "ttl of %s", k)
		}
	}
}

func redisAt(t *testing.T, dir string) *redis.Client {
	addr := difftest.StartRedis(t, "--dir", dir, "--dbfilename", "dump.rdb", "--enable-debug-command", "yes")
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestSlotdSnapshotLoadsInRedis(t *testing.T) {
	n := nodetest.Start(t, "enable-debug-command", "yes")
	c := n.Client(t)
	fill(t, c)
	require.Equal(t, "OK", c.Save(ctx).Val())
	r := redisAt(t, n.Dir)
	sameData(t, c, r)
	assert.Equal(t, c.Do(ctx, "DEBUG", "DIGEST").Val(), r.Do(ctx, "DEBUG", "DIGEST").Val())
	// The encodings Redis gives the loaded values are the ones slotd had.
	for _, k := range []string{"l:big", "h:small", "h:big", "set:int", "set:big", "z:small", "z:big", "s:int", "x:big"} {
		assert.Equal(t, c.ObjectEncoding(ctx, k).Val(), r.ObjectEncoding(ctx, k).Val(), k)
	}
}

func TestRedisSnapshotLoadsInSlotd(t *testing.T) {
	dir := t.TempDir()
	r := redisAt(t, dir)
	fill(t, r)
	require.Equal(t, "OK", r.Save(ctx).Val())
	n := nodetest.Start(t, "enable-debug-command", "yes", "dir", dir)
	for _, proto := range []int{2, 3} {
		c := n.Client(t, proto)
		sameData(t, r, c)
		assert.Equal(t, r.Do(ctx, "DEBUG", "DIGEST").Val(), c.Do(ctx, "DEBUG", "DIGEST").Val())
	}
}

func TestRestartKeepsDataAndExpiredKeysAreDropped(t *testing.T) {
	n := nodetest.Start(t, "enable-debug-command", "yes")
	c := n.Client(t)
	fill(t, c)
	digest := c.Do(ctx, "DEBUG", "DIGEST").Val()
	goneAt := time.Now().Add(300 * time.Millisecond)
	require.NoError(t, c.Set(ctx, "gone", "x", 300*time.Millisecond).Err())
	require.Equal(t, "OK", c.Save(ctx).Val())
	n.Stop()
	// Let "gone" expire on disk before the restart.
	nodetest.Eventually(t, 5*time.Second, func() bool { return time.Now().After(goneAt) }, "gone expired")
	n2 := nodetest.Start(t, "enable-debug-command", "yes", "dir", n.Dir)
	c2 := n2.Client(t)
	assert.Equal(t, int64(0), c2.Exists(ctx, "gone").Val())
	assert.Equal(t, int64(len(keysOf(t, c2))), c2.DBSize(ctx).Val())
	assert.Equal(t, digest, c2.Do(ctx, "DEBUG", "DIGEST").Val())
	info := c2.Info(ctx, "persistence").Val()
	assert.Contains(t, info, "rdb_last_load_keys_loaded:")
}

func keysOf(t *testing.T, c *redis.Client) []string {
	k, err := c.Keys(ctx, "*").Result()
	require.NoError(t, err)
	return k
}

// A node that starts as a replica keeps the keys of its snapshot whose
// expiry has passed (its primary deletes them), as a Redis replica does;
// a primary drops them.
func TestReplicaLoadsExpiredKeys(t *testing.T) {
	n := nodetest.Start(t)
	c := n.Client(t)
	require.NoError(t, c.Set(ctx, "short", "x", 200*time.Millisecond).Err())
	require.NoError(t, c.Set(ctx, "long", "x", 0).Err())
	require.Equal(t, "OK", c.Save(ctx).Val())
	n.Stop()
	deadline := time.Now().Add(200 * time.Millisecond)
	nodetest.Eventually(t, 5*time.Second, func() bool { return time.Now().After(deadline) }, "short expired")

	// The primary it follows is not there: the data stays as loaded.
	r := nodetest.Start(t, "dir", n.Dir, "replicaof", "127.0.0.1 "+strconv.Itoa(nodetest.FreePort(t)))
	assert.Equal(t, int64(2), r.Client(t).DBSize(ctx).Val())
	r.Stop()

	p := nodetest.Start(t, "dir", n.Dir)
	assert.Equal(t, int64(1), p.Client(t).DBSize(ctx).Val())
}
