package cmdtest_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

var mctx = context.Background()

// MIGRATE between two standalone nodes (RESTORE, not RESTORE-ASKING),
// keys in one slot (slotd refuses MIGRATE KEYS across slots with CROSSSLOT
// even outside cluster mode), pipelined with other commands: the batch resumes after the MIGRATE in
// order, and commands on the migrated keys never see them half-moved.
func TestMigratePipelineAndAtomicity(t *testing.T) {
	t.Parallel()
	src, dst := nodetest.Start(t, "shard-actors", "1"), nodetest.Start(t)
	for _, proto := range []int{2, 3} {
		cs, cd := src.Client(t, proto), dst.Client(t, proto)
		port := strconv.Itoa(dst.Port)
		require.NoError(t, cs.MSet(mctx, "{m}a", "1", "{m}b", "2", "{m}c", "3").Err())
		require.NoError(t, cs.Expire(mctx, "{m}a", time.Hour).Err())

		pipe := cs.Pipeline()
		pre := pipe.Get(mctx, "{m}a")
		mig := pipe.Do(mctx, "migrate", "127.0.0.1", port, "", 0, 5000, "replace", "keys", "{m}a", "{m}b", "{m}nope")
		after := pipe.Exists(mctx, "{m}a", "{m}b", "{m}c")
		set := pipe.Set(mctx, "{m}a", "local", 0)
		_, err := pipe.Exec(mctx)
		require.NoError(t, err)
		assert.Equal(t, "1", pre.Val())
		assert.Equal(t, "OK", mig.Val())
		assert.Equal(t, int64(1), after.Val(), "a and b left, c stays")
		assert.Equal(t, "OK", set.Val())
		assert.Equal(t, []any{"1", "2"}, cd.MGet(mctx, "{m}a", "{m}b").Val())
		ttl := cd.TTL(mctx, "{m}a").Val()
		assert.True(t, ttl > 59*time.Minute, "ttl %v", ttl)
		assert.Equal(t, "local", cs.Get(mctx, "{m}a").Val())
		require.NoError(t, cd.FlushAll(mctx).Err())
		require.NoError(t, cs.FlushAll(mctx).Err())
	}

	// Concurrent writers to keys being migrated one by one: every
	// increment lands exactly once, here or there.
	cs, cd := src.Client(t, 2), dst.Client(t, 2)
	port := strconv.Itoa(dst.Port)
	const keys, incrs = 50, 40
	for k := 0; k < keys; k++ {
		require.NoError(t, cs.Set(mctx, "n"+strconv.Itoa(k), 0, 0).Err())
	}
	var wg sync.WaitGroup
	for k := 0; k < keys; k++ {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			c := redis.NewClient(&redis.Options{Addr: src.Addr, PoolSize: 1})
			defer c.Close()
			for i := 0; i < incrs; i++ {
				// Where the key went, the source no longer has it: INCR
				// there would start from 0, so follow the key instead.
				key := "n" + strconv.Itoa(k)
				if n, _ := c.Exists(mctx, key).Result(); n == 1 {
					if err := c.Watch(mctx, func(tx *redis.Tx) error {
						if tx.Exists(mctx, key).Val() == 0 {
							return redis.TxFailedErr
						}
						_, err := tx.TxPipelined(mctx, func(p redis.Pipeliner) error {
							p.Incr(mctx, key)
							return nil
						})
						return err
					}, key); err == nil {
						continue
					}
				}
				assert.NoError(t, cd.Incr(mctx, key).Err())
			}
		}(k)
	}
	for k := 0; k < keys; k++ {
		require.Equal(t, "OK", cs.Do(mctx, "migrate", "127.0.0.1", port, "n"+strconv.Itoa(k), 0, 5000).Val())
	}
	wg.Wait()
	for k := 0; k < keys; k++ {
		assert.Equal(t, strconv.Itoa(incrs), cd.Get(mctx, "n"+strconv.Itoa(k)).Val(), "key n%d", k)
	}
	assert.Zero(t, cs.DBSize(mctx).Val())
}

func TestMigrateErrors(t *testing.T) {
	t.Parallel()
	src := nodetest.Start(t)
	c := src.Client(t)
	require.NoError(t, c.Set(mctx, "k", "v", 0).Err())
	free := strconv.Itoa(nodetest.FreePort(t))
	assert.EqualError(t, c.Do(mctx, "migrate", "127.0.0.1", free, "k", 0, 100).Err(),
		"IOERR error or timeout writing to target instance")
	assert.Equal(t, "NOKEY", c.Do(mctx, "migrate", "127.0.0.1", free, "nokey", 0, 100).Val())
	assert.EqualError(t, c.Do(mctx, "migrate", "127.0.0.1", free, "k", 0, 100, "auth").Err(), "ERR syntax error")
	assert.EqualError(t, c.Do(mctx, "migrate", "127.0.0.1", free, "k", 0, 100, "auth2", "u").Err(), "ERR syntax error")
	assert.EqualError(t, c.Do(mctx, "migrate", "127.0.0.1", free, "k", "x", "x").Err(),
		"ERR value is not an integer or out of range")
	assert.Equal(t, "v", c.Get(mctx, "k").Val(), "nothing moved")
}
