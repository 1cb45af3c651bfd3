package netio_test

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// maxmemory over TCP: noeviction refuses writes past the limit with Redis's
// -OOM while reads go on; allkeys-lru then evicts (INFO evicted_keys) and
// keeps the dataset near the limit; CONFIG RESETSTAT clears the count.
func TestMaxmemoryOverTCP(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t, "maxmemory", "1mb")
	c := n.Client(t)
	ctx := context.Background()
	big := strings.Repeat("x", 100_000)
	oom := 0
	for i := range 30 {
		err := c.Set(ctx, "big:"+strconv.Itoa(i), big, 0).Err()
		if err != nil {
			require.EqualError(t, err, "OOM command not allowed when used memory > 'maxmemory'.")
			oom++
		}
	}
	require.Greater(t, oom, 15)
	require.Equal(t, big, c.Get(ctx, "big:0").Val())
	mem := c.Info(ctx, "memory").Val()
	require.LessOrEqual(t, infoInt(t, mem, "used_memory_dataset"), int64(1<<20+120_000))
	require.Equal(t, int64(1<<20), infoInt(t, mem, "maxmemory"))

	require.NoError(t, c.ConfigSet(ctx, "maxmemory-policy", "allkeys-lru").Err())
	for i := range 30 {
		require.NoError(t, c.Set(ctx, "lru:"+strconv.Itoa(i), big, 0).Err())
	}
	require.Positive(t, infoInt(t, c.Info(ctx, "stats").Val(), "evicted_keys"))
	require.Less(t, c.DBSize(ctx).Val(), int64(30-oom+30))
	require.Equal(t, big, c.Get(ctx, "lru:29").Val(), "the newest key evicted")
	require.LessOrEqual(t, infoInt(t, c.Info(ctx, "memory").Val(), "used_memory_dataset"), int64(1<<20+120_000))
	require.NoError(t, c.ConfigResetStat(ctx).Err())
	require.Zero(t, infoInt(t, c.Info(ctx, "stats").Val(), "evicted_keys"))
}

// Over maxmemory with nothing to evict, as Redis 7.0: a command queued in
// MULTI is refused and EXEC aborts; an EXEC whose queue holds a denyoom
// command aborts naming the OOM; EXEC of reads and DISCARD go on. Scripts:
// one declaring flags without no-writes/allow-oom is refused before it
// runs; one without a shebang may read, and its first denyoom command is
// refused (pcall sees the error table) unless it already wrote.
func TestMaxmemoryOOMForTransactionsAndScripts(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t)
	ctx := context.Background()
	admin := n.Client(t)
	c := n.Client(t, 2)
	conn := c.Conn()
	defer conn.Close()
	const oom = "OOM command not allowed when used memory > 'maxmemory'."
	require.NoError(t, c.Set(ctx, "x", "123", 0).Err())
	setMax := func(v string) { require.NoError(t, admin.ConfigSet(ctx, "maxmemory", v).Err()) }
	do := func(args ...any) (any, error) { return conn.Do(ctx, args...).Result() }

	// Queued before the limit is hit, EXEC is refused for its SET.
	_, err := do("MULTI")
	require.NoError(t, err)
	_, _ = do("SET", "x", "1")
	_, _ = do("GET", "x")
	setMax("1")
	_, err = do("EXEC")
	require.EqualError(t, err, "EXECABORT Transaction discarded because of: "+oom)
	v, err := do("PING") // no longer in MULTI
	require.NoError(t, err)
	require.Equal(t, "PONG", v)

	// Reads only, queued under the limit: EXEC runs.
	setMax("0")
	_, _ = do("MULTI")
	_, _ = do("GET", "x")
	setMax("1")
	v, err = do("EXEC")
	require.NoError(t, err)
	require.Equal(t, []any{"123"}, v)

	// Queueing over the limit: refused, EXEC aborts; DISCARD works.
	_, _ = do("MULTI")
	_, err = do("GET", "x")
	require.EqualError(t, err, oom)
	_, err = do("EXEC")
	require.EqualError(t, err, "EXECABORT Transaction discarded because of previous errors.")
	_, _ = do("MULTI")
	_, err = do("SET", "x", "2")
	require.EqualError(t, err, oom)
	_, err = do("DISCARD")
	require.NoError(t, err)

	// Scripts.
	_, err = do("EVAL", "redis.call('set', KEYS[1], 1) return 1", 1, "x")
	require.Error(t, err)
	require.True(t, strings.HasPrefix(err.Error(), oom+" script: "), err.Error())
	v, err = do("EVAL", "return redis.call('get', KEYS[1])", 1, "x")
	require.NoError(t, err)
	require.Equal(t, "123", v)
	v, err = do("EVAL", "local e = redis.pcall('set', KEYS[1], 1) return e['err']", 1, "x")
	require.NoError(t, err)
	require.Equal(t, oom, v)
	_, err = do("EVAL", "#!lua flags=\nreturn 1", 0)
	require.EqualError(t, err, oom)
	v, err = do("EVAL", "#!lua flags=allow-oom\nredis.call('set', KEYS[1], 'a') return 1", 1, "x")
	require.NoError(t, err)
	require.Equal(t, int64(1), v)
	v, err = do("EVAL_RO", "#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])", 1, "x")
	require.NoError(t, err)
	require.Equal(t, "a", v)
	// A write that is not denyoom first (DEL): the script may go on.
	v, err = do("EVAL", "redis.call('del', '{x}none') redis.call('set', KEYS[1], 'b') return 1", 1, "x")
	require.NoError(t, err)
	require.Equal(t, int64(1), v)

	setMax("0")
	_, _ = do("MULTI")
	_, _ = do("SET", "x", "3")
	v, err = do("EXEC")
	require.NoError(t, err)
	require.Equal(t, []any{"OK"}, v)
}

// INFO memory splits the clients' buffers as Redis 7.0: a replica that
// stops reading holds its feed in mem_clients_slaves, reported again as
// mem_not_counted_for_evict (maxmemory leaves it out: no eviction for it),
// not in mem_clients_normal; it is gone once the replica is killed.
func TestReplicaBuffersInInfoMemory(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t)
	ctx := context.Background()
	c := n.Client(t)
	// A replica that asks for the feed and then never reads.
	rc, err := net.Dial("tcp", n.Addr)
	require.NoError(t, err)
	defer rc.Close()
	_, err = rc.Write([]byte("REPLCONF listening-port 1\r\nREPLCONF capa slotd\r\nPSYNC ? -1\r\n"))
	require.NoError(t, err)
	nodetest.Eventually(t, 5*time.Second, func() bool {
		return infoInt(t, c.Info(ctx, "replication").Val(), "connected_slaves") == 1
	}, "the replica is not attached")

	require.NoError(t, c.ConfigSet(ctx, "maxmemory-policy", "allkeys-random").Err())
	big := strings.Repeat("x", 100_000)
	for i := range 300 { // 30 MB through the feed, more than the kernel's socket buffers
		require.NoError(t, c.Set(ctx, "k", big+strconv.Itoa(i), 0).Err())
	}
	var mem string
	nodetest.Eventually(t, 5*time.Second, func() bool {
		mem = c.Info(ctx, "memory").Val()
		return infoInt(t, mem, "mem_clients_slaves") > 2<<20
	}, "the replica's feed is not in mem_clients_slaves")
	slaves := infoInt(t, mem, "mem_clients_slaves")
	require.InDelta(t, slaves, infoInt(t, mem, "mem_not_counted_for_evict"), 64<<10)
	require.Less(t, infoInt(t, mem, "mem_clients_normal"), int64(1<<20))
	// Not counted for eviction: a limit just above the dataset evicts nothing.
	require.NoError(t, c.ConfigSet(ctx, "maxmemory", strconv.FormatInt(infoInt(t, mem, "used_memory_dataset")+(1<<20), 10)).Err())
	require.NoError(t, c.Set(ctx, "k2", "v", 0).Err())
	require.Equal(t, int64(0), infoInt(t, c.Info(ctx, "stats").Val(), "evicted_keys"))
	require.NoError(t, c.ConfigSet(ctx, "maxmemory", "0").Err())

	require.NoError(t, c.Do(ctx, "CLIENT", "KILL", "TYPE", "replica").Err())
	nodetest.Eventually(t, 5*time.Second, func() bool {
		return infoInt(t, c.Info(ctx, "memory").Val(), "mem_clients_slaves") == 0
	}, "mem_clients_slaves stays after the replica is killed")
}
