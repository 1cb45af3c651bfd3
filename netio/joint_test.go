package netio_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
	"github.com/slotd/slotd/slots"
)

// keysInShards returns one key per shard actor of an n-actor node (shard
// of a slot: slot % n), prefixed by p.
func keysInShards(t *testing.T, p string, n int) []string {
	t.Helper()
	keys := make([]string, n)
	found := 0
	for i := 0; found < n && i < 100000; i++ {
		k := p + strconv.Itoa(i)
		sh := slots.HashSlot([]byte(k)) % n
		if keys[sh] == "" {
			keys[sh] = k
			found++
		}
	}
	require.Equal(t, n, found)
	return keys
}

// hammer runs writers and readers until each reader has done rounds reads
// or the deadline passes; a reader's check returns a violation or "". It
// fails the test with the first violation.
func hammer(t *testing.T, n *nodetest.Node, writers, readers, rounds int,
	write func(c *redis.Client, w, i int) error, read func(c *redis.Client) (string, error)) {
	t.Helper()
	ctx := context.Background()
	var stop atomic.Bool
	var bad atomic.Pointer[string]
	var wg sync.WaitGroup
	deadline := time.Now().Add(10 * time.Second)
	for w := 0; w < writers; w++ {
		c := n.Client(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load() && time.Now().Before(deadline); i++ {
				if err := write(c, w, i); err != nil {
					msg := "writer: " + err.Error()
					bad.CompareAndSwap(nil, &msg)
					return
				}
			}
		}()
	}
	var rwg sync.WaitGroup
	for r := 0; r < readers; r++ {
		c := n.Client(t)
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			for i := 0; i < rounds && time.Now().Before(deadline) && bad.Load() == nil; i++ {
				msg, err := read(c)
				if err != nil {
					msg = "reader: " + err.Error()
				}
				if msg != "" {
					bad.CompareAndSwap(nil, &msg)
					return
				}
			}
		}()
	}
	rwg.Wait()
	stop.Store(true)
	wg.Wait()
	_ = ctx
	if m := bad.Load(); m != nil {
		t.Fatal(*m)
	}
}

// mgetSame reads keys with MGET and returns a violation naming what when
// they do not all hold the same value (or all miss).
func mgetSame(c *redis.Client, keys []string, what string) (string, error) {
	vals, err := c.MGet(context.Background(), keys...).Result()
	if err != nil {
		return "", err
	}
	for _, v := range vals[1:] {
		if v != vals[0] {
			return fmt.Sprintf("MGET saw %s: %v", what, vals), nil
		}
	}
	return "", nil
}

// A standalone node must behave as one redis-server: an MSET, DEL or
// transaction over keys of several shard actors is one atomic step. Four
// writers MSET the same value into one key of each of four shards (or DEL
// them all) while readers MGET / EXISTS them: every read sees one writer's
// value everywhere, or no key at all.
func TestCrossShardMultiKeyAtomic(t *testing.T) {
	n := nodetest.Start(t, "shard-actors", "4")
	keys := keysInShards(t, "k", 4)
	ctx := context.Background()
	hammer(t, n, 4, 4, 1000, func(c *redis.Client, w, i int) error {
		if i%5 == 4 {
			return c.Del(ctx, keys...).Err()
		}
		v := fmt.Sprintf("%d-%d", w, i)
		return c.MSet(ctx, keys[0], v, keys[1], v, keys[2], v, keys[3], v).Err()
	}, func(c *redis.Client) (string, error) {
		if msg, err := mgetSame(c, keys, "half of an MSET or DEL"); msg != "" || err != nil {
			return msg, err
		}
		ex, err := c.Exists(ctx, keys...).Result()
		if err != nil {
			return "", err
		}
		if ex != 0 && ex != 4 {
			return fmt.Sprintf("EXISTS saw %d of 4 keys", ex), nil
		}
		return "", nil
	})
}

// Transfers between keys of four shards inside MULTI/EXEC, and with
// WATCH (optimistic: read, then write both keys in a transaction that
// aborts if either changed), keep the total; readers see it inside
// MULTI/EXEC and with MGET.
func TestCrossShardTransactionAtomic(t *testing.T) {
	n := nodetest.Start(t, "shard-actors", "4")
	keys := keysInShards(t, "acct", 4)
	ctx := context.Background()
	c := n.Client(t)
	for _, k := range keys {
		require.NoError(t, c.Set(ctx, k, 100, 0).Err())
	}
	const total = 400
	var watched, aborted atomic.Int64
	hammer(t, n, 4, 4, 800, func(c *redis.Client, w, i int) error {
		from, to := keys[(w+i)%4], keys[(w+i+1+i%3)%4]
		if i%2 == 0 {
			_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.DecrBy(ctx, from, 3)
				p.IncrBy(ctx, to, 3)
				return nil
			})
			return err
		}
		err := c.Watch(ctx, func(tx *redis.Tx) error {
			vals, err := tx.MGet(ctx, from, to).Result()
			if err != nil {
				return err
			}
			a, _ := strconv.Atoi(vals[0].(string))
			b, _ := strconv.Atoi(vals[1].(string))
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Set(ctx, from, a-5, 0)
				p.Set(ctx, to, b+5, 0)
				return nil
			})
			return err
		}, from, to)
		watched.Add(1)
		if err == redis.TxFailedErr {
			aborted.Add(1)
			return nil
		}
		return err
	}, func(c *redis.Client) (string, error) {
		var gets []*redis.StringCmd
		_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
			gets = gets[:0]
			for _, k := range keys {
				gets = append(gets, p.Get(ctx, k))
			}
			return nil
		})
		if err != nil {
			return "", err
		}
		sum := 0
		for _, g := range gets {
			v, _ := strconv.Atoi(g.Val())
			sum += v
		}
		if sum != total {
			return fmt.Sprintf("MULTI/EXEC read a total of %d, not %d", sum, total), nil
		}
		vals, err := c.MGet(ctx, keys...).Result()
		if err != nil {
			return "", err
		}
		sum = 0
		for _, v := range vals {
			x, _ := strconv.Atoi(v.(string))
			sum += x
		}
		if sum != total {
			return fmt.Sprintf("MGET read a total of %d, not %d", sum, total), nil
		}
		return "", nil
	})
	sum := 0
	for _, k := range keys {
		v, err := c.Get(ctx, k).Int()
		require.NoError(t, err)
		sum += v
	}
	require.Equal(t, total, sum, "total at the end")
	t.Logf("%d WATCH transfers, %d aborted", watched.Load(), aborted.Load())
}

// A transaction over keys of two shards replies as Redis: queued
// commands' replies in order, a split MSET inside, and WATCH on keys of
// both shards aborting it when one changed (from another client, or
// pipelined by the same one before EXEC).
func TestCrossShardTransactionReplies(t *testing.T) {
	n := nodetest.Start(t, "shard-actors", "4")
	keys := keysInShards(t, "t", 4)
	a, b := keys[0], keys[1]
	ctx := context.Background()
	c := n.Client(t)
	other := n.Client(t)
	cmds, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, a, "1", 0)
		p.Incr(ctx, b)
		p.MSet(ctx, keys[2], "x", keys[3], "y")
		p.MGet(ctx, a, b, keys[2], keys[3])
		p.DBSize(ctx)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, "OK", cmds[0].(*redis.StatusCmd).Val())
	require.Equal(t, int64(1), cmds[1].(*redis.IntCmd).Val())
	require.Equal(t, []any{"1", "1", "x", "y"}, cmds[3].(*redis.SliceCmd).Val())
	require.Equal(t, int64(4), cmds[4].(*redis.IntCmd).Val())

	// WATCH a b; another client writes b; the transaction aborts.
	err = c.Watch(ctx, func(tx *redis.Tx) error {
		require.NoError(t, other.Set(ctx, b, "changed", 0).Err())
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, a, "2", 0)
			return nil
		})
		return err
	}, a, b)
	require.Equal(t, redis.TxFailedErr, err)
	require.Equal(t, "1", c.Get(ctx, a).Val())

	// The same client's write to a watched key in the same pipeline,
	// ahead of MULTI, aborts it too.
	p := c.Pipeline()
	p.Do(ctx, "WATCH", a, b)
	p.Set(ctx, b, "mine", 0)
	p.Do(ctx, "MULTI")
	p.Do(ctx, "SET", a, "3")
	exec := p.Do(ctx, "EXEC")
	_, _ = p.Exec(ctx)
	require.Equal(t, redis.Nil, exec.Err())
	require.Equal(t, "1", c.Get(ctx, a).Val())

	// Unwatched: it runs.
	p = c.Pipeline()
	p.Do(ctx, "WATCH", a, b)
	p.Do(ctx, "UNWATCH")
	p.Set(ctx, b, "again", 0)
	p.Do(ctx, "MULTI")
	p.Do(ctx, "SET", a, "4")
	exec = p.Do(ctx, "EXEC")
	_, err = p.Exec(ctx)
	require.NoError(t, err)
	require.Equal(t, []any{"OK"}, exec.Val())
	require.Equal(t, "4", c.Get(ctx, a).Val())
}

// Keyless commands over every shard are atomic too: DBSIZE and KEYS never
// count half of an MSET or FLUSHALL, and MGET never sees half a SWAPDB.
func TestCrossShardFanoutAtomic(t *testing.T) {
	n := nodetest.Start(t, "shard-actors", "4")
	keys := keysInShards(t, "f", 4)
	ctx := context.Background()
	c := n.Client(t)
	require.NoError(t, c.Do(ctx, "SELECT", "1").Err())
	for _, k := range keys {
		require.NoError(t, c.Set(ctx, k, "db1", 0).Err())
	}
	require.NoError(t, c.Do(ctx, "SELECT", "0").Err())
	hammer(t, n, 2, 4, 1000, func(c *redis.Client, w, i int) error {
		if w == 1 {
			return c.Do(ctx, "SWAPDB", 0, 1).Err()
		}
		if i%2 == 1 {
			// FLUSHDB of whichever db holds "db0" now, then rebuild it.
			if err := c.FlushDB(ctx).Err(); err != nil {
				return err
			}
		}
		return c.MSet(ctx, keys[0], "db0", keys[1], "db0", keys[2], "db0", keys[3], "db0").Err()
	}, func(c *redis.Client) (string, error) {
		if msg, err := mgetSame(c, keys, "half a SWAPDB, FLUSHDB or MSET"); msg != "" || err != nil {
			return msg, err
		}
		size, err := c.DBSize(ctx).Result()
		if err != nil {
			return "", err
		}
		if size != 0 && size != 4 {
			return fmt.Sprintf("DBSIZE counted %d keys", size), nil
		}
		ks, err := c.Keys(ctx, "*").Result()
		if err != nil {
			return "", err
		}
		if len(ks) != 0 && len(ks) != 4 {
			return fmt.Sprintf("KEYS listed %v", ks), nil
		}
		return "", nil
	})
}
