package netio_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

func TestMultiExecBasics(t *testing.T) {
	n := nodetest.Start(t, "shard-actors", "4")
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		c := n.Client(t, proto)
		cmds, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "{u}a", "1", 0)
			p.Get(ctx, "{u}a")
			p.Ping(ctx)
			p.Get(ctx, "{u}missing")
			return nil
		})
		require.ErrorIs(t, err, redis.Nil) // the missing key's reply
		require.Len(t, cmds, 4)
		require.Equal(t, "1", cmds[1].(*redis.StringCmd).Val())
		require.Equal(t, "PONG", cmds[2].(*redis.StatusCmd).Val())

		// Queue-time errors abort the whole transaction.
		conn := c.Conn()
		require.Equal(t, "OK", conn.Do(ctx, "MULTI").Val())
		require.EqualError(t, conn.Do(ctx, "NOSUCHCMD").Err(), "ERR unknown command 'NOSUCHCMD', with args beginning with: ")
		require.Equal(t, "QUEUED", conn.Do(ctx, "SET", "{u}a", "2").Val())
		require.EqualError(t, conn.Do(ctx, "EXEC").Err(), "EXECABORT Transaction discarded because of previous errors.")
		require.Equal(t, "1", conn.Get(ctx, "{u}a").Val())
		require.EqualError(t, conn.Do(ctx, "EXEC").Err(), "ERR EXEC without MULTI")
		r := conn.Do(ctx, "DISCARD")
		require.EqualError(t, r.Err(), "ERR DISCARD without MULTI", "%#v", r.Val())
		require.Equal(t, "OK", conn.Do(ctx, "MULTI").Val())
		require.EqualError(t, conn.Do(ctx, "MULTI").Err(), "ERR MULTI calls can not be nested")
		require.EqualError(t, conn.Do(ctx, "WATCH", "x").Err(), "ERR WATCH inside MULTI is not allowed")
		require.Equal(t, "OK", conn.Do(ctx, "DISCARD").Val())
		// A refused EXEC itself discards the transaction, naming why.
		require.Equal(t, "OK", conn.Do(ctx, "MULTI").Val())
		require.Equal(t, "QUEUED", conn.Do(ctx, "SET", "{u}a", "3").Val())
		require.EqualError(t, conn.Do(ctx, "EXEC", "x").Err(),
			"EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' command")
		require.EqualError(t, conn.Do(ctx, "EXEC").Err(), "ERR EXEC without MULTI")
		require.Equal(t, "1", conn.Get(ctx, "{u}a").Val())
		require.NoError(t, conn.Close())
	}
}

func TestWatchAbortsOnChange(t *testing.T) {
	n := nodetest.Start(t, "shard-actors", "4")
	ctx := context.Background()
	c := n.Client(t)
	other := n.Client(t)
	require.NoError(t, c.Set(ctx, "{w}k", "1", 0).Err())

	conn := c.Conn()
	defer conn.Close()
	require.Equal(t, "OK", conn.Do(ctx, "WATCH", "{w}k").Val())
	require.NoError(t, other.Set(ctx, "{w}k", "2", 0).Err())
	require.Equal(t, "OK", conn.Do(ctx, "MULTI").Val())
	require.Equal(t, "QUEUED", conn.Do(ctx, "SET", "{w}k", "3").Val())
	res, err := conn.Do(ctx, "EXEC").Result()
	require.ErrorIs(t, err, redis.Nil)
	require.Nil(t, res)
	require.Equal(t, "2", c.Get(ctx, "{w}k").Val())

	// Untouched watch: EXEC runs.
	require.Equal(t, "OK", conn.Do(ctx, "WATCH", "{w}k").Val())
	require.Equal(t, "OK", conn.Do(ctx, "MULTI").Val())
	require.Equal(t, "QUEUED", conn.Do(ctx, "SET", "{w}k", "4").Val())
	res, err = conn.Do(ctx, "EXEC").Result()
	require.NoError(t, err)
	require.Equal(t, []any{"OK"}, res)

	// UNWATCH forgets.
	require.Equal(t, "OK", conn.Do(ctx, "WATCH", "{w}k").Val())
	require.Equal(t, "OK", conn.Do(ctx, "UNWATCH").Val())
	require.NoError(t, other.Set(ctx, "{w}k", "5", 0).Err())
	require.Equal(t, "OK", conn.Do(ctx, "MULTI").Val())
	require.Equal(t, "QUEUED", conn.Do(ctx, "GET", "{w}k").Val())
	res, err = conn.Do(ctx, "EXEC").Result()
	require.NoError(t, err)
	require.Equal(t, []any{"5"}, res)
}

// WATCH, a write to the watched key and a keyless transaction sent in one
// pipeline: the transaction aborts, as on Redis (own writes count).
func TestWatchPipelinedOwnWriteAborts(t *testing.T) {
	n := nodetest.Start(t, "shard-actors", "4")
	ctx := context.Background()
	c := n.Client(t, 2)
	conn := c.Conn()
	defer conn.Close()
	p := conn.Pipeline()
	p.Do(ctx, "WATCH", "{w}a")
	p.Do(ctx, "SET", "{w}a", "1")
	p.Do(ctx, "MULTI")
	p.Do(ctx, "PING")
	exec := p.Do(ctx, "EXEC")
	_, _ = p.Exec(ctx)
	require.ErrorIs(t, exec.Err(), redis.Nil)

	// A no-op write (PERSIST of a missing key) does not abort.
	require.Equal(t, "OK", conn.Do(ctx, "WATCH", "{w}missing").Val())
	require.Equal(t, int64(0), conn.Do(ctx, "PERSIST", "{w}missing").Val())
	require.Equal(t, "OK", conn.Do(ctx, "MULTI").Val())
	require.Equal(t, "QUEUED", conn.Do(ctx, "PING").Val())
	res, err := conn.Do(ctx, "EXEC").Result()
	require.NoError(t, err)
	require.Equal(t, []any{"PONG"}, res)
}

// Loop commands that change what shards read (the script cache) keep their
// place in a pipeline.
func TestPipelineOrderAroundScriptCache(t *testing.T) {
	n := nodetest.Start(t, "shard-actors", "4")
	ctx := context.Background()
	c := n.Client(t, 2)
	p := c.Pipeline()
	p.Do(ctx, "SCRIPT", "FLUSH")
	p.Do(ctx, "EVAL", "return 1", "1", "{k}a")
	exists := p.Do(ctx, "SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db")
	p.Do(ctx, "SET", "{k}b", "x")
	get := p.Get(ctx, "{k}b")
	_, err := p.Exec(ctx)
	require.NoError(t, err)
	require.Equal(t, []any{int64(1)}, exists.Val())
	require.Equal(t, "x", get.Val())
}
