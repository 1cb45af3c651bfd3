package repl_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// TestWait: WAIT counts the replicas that acknowledged the writes made
// before it.
func TestWait(t *testing.T) {
	p := start(t, 3)
	pc := p.Client(t)
	// No replica: WAIT 0 answers at once, WAIT 1 at the timeout.
	assert.Equal(t, int64(0), pc.Wait(ctx, 0, 0).Val())
	t0 := time.Now()
	assert.Equal(t, int64(0), pc.Wait(ctx, 1, 50*time.Millisecond).Val())
	assert.GreaterOrEqual(t, time.Since(t0), 50*time.Millisecond)

	r := start(t, 2)
	replicate(t, r, p)
	for i := 0; i < 20; i++ {
		require.NoError(t, pc.Set(ctx, "k"+strconv.Itoa(i), i, 0).Err())
		// Timeout 0 waits as long as needed.
		assert.Equal(t, int64(1), pc.Wait(ctx, 1, 0).Val())
		assert.Equal(t, strconv.Itoa(i), r.Client(t).Get(ctx, "k"+strconv.Itoa(i)).Val())
	}
	// In the same pipeline as the write.
	pipe := pc.Pipeline()
	pipe.Incr(ctx, "ctr")
	w := pipe.Do(ctx, "WAIT", 1, 0)
	_, err := pipe.Exec(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(1), w.Val())
	assert.Equal(t, "1", r.Client(t).Get(ctx, "ctr").Val())
	// More replicas than there are: the count at the timeout.
	t0 = time.Now()
	assert.Equal(t, int64(1), pc.Wait(ctx, 2, 100*time.Millisecond).Val())
	assert.GreaterOrEqual(t, time.Since(t0), 100*time.Millisecond)
	// Inside MULTI WAIT does not block.
	var mw *redis.Cmd
	_, err = pc.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "tx", "1", 0)
		mw = p.Do(ctx, "WAIT", 5, 0)
		return nil
	})
	require.NoError(t, err)
	assert.LessOrEqual(t, mw.Val().(int64), int64(1))

	// Errors (Redis's texts), and RESP2 as well as RESP3.
	for _, c := range []*redis.Client{p.Client(t, 2), pc} {
		assert.EqualError(t, c.Do(ctx, "WAIT", "x", "0").Err(), "ERR value is not an integer or out of range")
		assert.EqualError(t, c.Do(ctx, "WAIT", "1", "x").Err(), "ERR timeout is not an integer or out of range")
		assert.EqualError(t, c.Do(ctx, "WAIT", "1", "-1").Err(), "ERR timeout is negative")
		assert.EqualError(t, c.Do(ctx, "WAIT", "1").Err(), "ERR wrong number of arguments for 'wait' command")
	}
	assert.EqualError(t, r.Client(t).Do(ctx, "WAIT", "1", "0").Err(),
		"ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is "+
			"configured to be writable (which is not the default) writes to replicas are just local and are not propagated.")
}

// TestReplicaRules: what a replica refuses, and how it describes itself.
func TestReplicaRules(t *testing.T) {
	p := start(t, 2)
	r := start(t, 2)
	require.NoError(t, p.Client(t).Set(ctx, "k", "v", 0).Err())
	// A transaction queued while r was a primary is refused at EXEC.
	tx := r.Client(t).Conn()
	defer tx.Close()
	require.NoError(t, tx.Do(ctx, "MULTI").Err())
	require.Equal(t, "QUEUED", tx.Do(ctx, "SET", "k", "x").Val())
	replicate(t, r, p)
	const readOnly = "READONLY You can't write against a read only replica."
	assert.EqualError(t, tx.Do(ctx, "EXEC").Err(), "EXECABORT Transaction discarded because of: "+readOnly)
	assert.EqualError(t, tx.Do(ctx, "EXEC").Err(), "ERR EXEC without MULTI")
	for _, proto := range []int{2, 3} {
		rc := r.Client(t, proto)
		assert.Equal(t, "v", rc.Get(ctx, "k").Val())
		assert.EqualError(t, rc.Set(ctx, "k", "x", 0).Err(), readOnly)
		assert.EqualError(t, rc.FlushAll(ctx).Err(), readOnly)
		assert.EqualError(t, rc.Eval(ctx, "return redis.call('SET', KEYS[1], 'x')", []string{"k"}).Err(),
			readOnly+" script: bd6f3018b28bbdb36260f19d3c44afed740db987, on @user_script:1.")
		assert.EqualError(t, rc.Eval(ctx, "return redis.pcall('SET', KEYS[1], 'x')", []string{"k"}).Err(), readOnly)
		assert.Equal(t, "v", rc.Eval(ctx, "return redis.call('GET', KEYS[1])", []string{"k"}).Val())
		// Refused when queued: the transaction aborts.
		_, err := rc.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Get(ctx, "k")
			p.Set(ctx, "k", "x", 0)
			return nil
		})
		assert.EqualError(t, err, "EXECABORT Transaction discarded because of previous errors.")
		role, err := rc.Do(ctx, "ROLE").Slice()
		require.NoError(t, err)
		require.Len(t, role, 5)
		assert.Equal(t, []any{"slave", "127.0.0.1", int64(p.Port), "connected"}, role[:4])
	}
	hello, err := r.Client(t, 2).Do(ctx, "HELLO", "3").Result()
	require.NoError(t, err)
	assert.Equal(t, "replica", hello.(map[any]any)["role"])

	rc := r.Client(t, 2)
	assert.EqualError(t, rc.Do(ctx, "REPLICAOF", "127.0.0.1", "x").Err(), "ERR Invalid master port")
	assert.EqualError(t, rc.Do(ctx, "REPLICAOF", "127.0.0.1", "70000").Err(), "ERR Invalid master port")
	assert.EqualError(t, rc.Do(ctx, "REPLICAOF", "no").Err(), "ERR wrong number of arguments for 'replicaof' command")
	assert.Equal(t, "OK Already connected to specified master",
		rc.Do(ctx, "REPLICAOF", "127.0.0.1", p.Port).Val())

	// The primary lists its replica.
	pc := p.Client(t, 2)
	nodetest.Eventually(t, 5*time.Second, func() bool {
		return strings.HasPrefix(info(t, pc, "replication", "slave0"), "ip=127.0.0.1,port="+strconv.Itoa(r.Port)+",state=online,")
	}, "slave0 line")
	role, err := pc.Do(ctx, "ROLE").Slice()
	require.NoError(t, err)
	require.Len(t, role, 3)
	assert.Equal(t, "master", role[0])
	replicas := role[2].([]any)
	require.Len(t, replicas, 1)
	assert.Equal(t, []any{"127.0.0.1", strconv.Itoa(r.Port)}, replicas[0].([]any)[:2])

	// A writable replica takes writes locally.
	require.NoError(t, rc.ConfigSet(ctx, "replica-read-only", "no").Err())
	assert.NoError(t, rc.Set(ctx, "local", "1", 0).Err())
	require.NoError(t, rc.ConfigSet(ctx, "replica-read-only", "yes").Err())

	// NO ONE: writable again, history kept as replid2.
	assert.Equal(t, "OK", rc.Do(ctx, "REPLICAOF", "NO", "ONE").Val())
	assert.Equal(t, "OK", rc.Do(ctx, "REPLICAOF", "NO", "ONE").Val())
	assert.NoError(t, rc.Set(ctx, "k", "mine", 0).Err())
	assert.Equal(t, "master", info(t, rc, "replication", "role"))
}

// TestReplicaStaleData: replica-serve-stale-data no refuses commands
// without the stale flag while the link is down; ROLE and INFO still work.
func TestReplicaStaleData(t *testing.T) {
	r := start(t, 2, "replica-serve-stale-data", "no")
	rc := r.Client(t, 2)
	dead := nodetest.FreePort(t)
	require.Equal(t, "OK", rc.Do(ctx, "REPLICAOF", "127.0.0.1", dead).Val())
	const down = "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."
	assert.EqualError(t, rc.Get(ctx, "k").Err(), down)
	assert.EqualError(t, rc.Do(ctx, "DBSIZE").Err(), down)
	assert.Equal(t, "slave", info(t, rc, "replication", "role"))
	assert.Equal(t, "down", info(t, rc, "replication", "master_link_status"))
	assert.Equal(t, "-1", info(t, rc, "replication", "master_last_io_seconds_ago"))
	role, err := rc.Do(ctx, "ROLE").Slice()
	require.NoError(t, err)
	assert.Contains(t, []any{"connect", "connecting"}, role[3])
	assert.Equal(t, int64(-1), role[4])
	require.NoError(t, rc.ConfigSet(ctx, "replica-serve-stale-data", "yes").Err())
	assert.Equal(t, redis.Nil, rc.Get(ctx, "k").Err())
}

// TestExpiryDrivenByPrimary: on a replica a key past its TTL reads as
// missing but stays until the primary's DEL.
func TestExpiryDrivenByPrimary(t *testing.T) {
	p := start(t, 2)
	r := start(t, 2)
	replicate(t, r, p)
	pc, rc := p.Client(t, 2), r.Client(t, 2)
	require.Equal(t, "OK", pc.Do(ctx, "DEBUG", "SET-ACTIVE-EXPIRE", "0").Val())
	require.NoError(t, pc.Set(ctx, "k", "v", 100*time.Millisecond).Err())
	require.NoError(t, pc.Set(ctx, "keep", "v", 0).Err())
	require.Equal(t, int64(2), pc.Wait(ctx, 1, 0).Val()+1)
	pexp := pc.PExpireTime(ctx, "k").Val()
	assert.Equal(t, pexp, rc.PExpireTime(ctx, "k").Val(), "the replica has the absolute expiry")
	nodetest.Eventually(t, 5*time.Second, func() bool {
		return rc.Get(ctx, "k").Err() == redis.Nil
	}, "key reads as missing on the replica")
	assert.Equal(t, time.Duration(-2), rc.PTTL(ctx, "k").Val())
	assert.Equal(t, int64(2), rc.DBSize(ctx).Val(), "the replica does not delete it")
	assert.Equal(t, int64(2), pc.DBSize(ctx).Val())
	// The primary expires it on access and streams DEL.
	assert.Equal(t, redis.Nil, pc.Get(ctx, "k").Err())
	nodetest.Eventually(t, 5*time.Second, func() bool {
		return rc.DBSize(ctx).Val() == 1
	}, "DEL from the primary applied")
	// Active expiry streams DEL too.
	require.Equal(t, "OK", pc.Do(ctx, "DEBUG", "SET-ACTIVE-EXPIRE", "1").Val())
	require.NoError(t, pc.Set(ctx, "k2", "v", 50*time.Millisecond).Err())
	nodetest.Eventually(t, 5*time.Second, func() bool {
		return pc.DBSize(ctx).Val() == 1 && rc.DBSize(ctx).Val() == 1
	}, "active expiry on the primary reaches the replica")
}
