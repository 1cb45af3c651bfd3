package enginetest_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/enginetest"
)

func newEngine(t *testing.T, seed uint64) *enginetest.Engine {
	t.Helper()
	enginetest.Register()
	return enginetest.New(enginetest.Options{Seed: seed})
}

// TestRepliesAsANodeWrites: the exact bytes of a standalone node, in both
// protocols, through the same resolution, arity and routing checks.
func TestRepliesAsANodeWrites(t *testing.T) {
	e := newEngine(t, 1)
	for _, proto := range []int{2, 3} {
		c := e.Client(proto)
		null := map[int]string{2: "$-1\r\n", 3: "_\r\n"}[proto]
		k := "{p" + strconv.Itoa(proto) + "}"
		for _, step := range [][2][]string{
			{{"SET", k + "a", "hello"}, {"+OK\r\n"}},
			{{"get", k + "a"}, {enginetest.Bulk("hello")}},
			{{"GET", k + "missing"}, {null}},
			{{"INCR", k + "a"}, {"-ERR value is not an integer or out of range\r\n"}},
			{{"LPUSH", k + "a", "x"}, {"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"}},
			{{"GET"}, {"-ERR wrong number of arguments for 'get' command\r\n"}},
			{{"NOSUCH", "x", "y"}, {"-ERR unknown command 'NOSUCH', with args beginning with: 'x' 'y' \r\n"}},
			{{"OBJECT", "NOPE"}, {"-ERR unknown subcommand 'NOPE'. Try OBJECT HELP.\r\n"}},
			{{"MGET", "a", "b"}, {"-CROSSSLOT Keys in request don't hash to the same slot\r\n"}},
			{{"CLUSTER", "COUNTKEYSINSLOT", "1"}, {"-ERR This instance has cluster support disabled\r\n"}},
			{{"PING"}, {"+PONG\r\n"}},
			{{"PING", "hi"}, {enginetest.Bulk("hi")}},
			{{"ECHO", ""}, {enginetest.Bulk("")}},
			{{"SELECT", "1"}, {"+OK\r\n"}},
			{{"SET", k + "d", "1"}, {"+OK\r\n"}},
			{{"SELECT", "0"}, {"+OK\r\n"}},
			{{"EXISTS", k + "d"}, {":0\r\n"}},
			{{"SELECT", "16"}, {"-ERR DB index is out of range\r\n"}},
			{{"SADD", k + "s", "1", "2"}, {":2\r\n"}},
			{{"SISMEMBER", k + "s", "2"}, {":1\r\n"}},
			{{"HSET", k + "h", "f", "v"}, {":1\r\n"}},
			{{"HGETALL", k + "h"}, {map[int]string{2: "*2\r\n", 3: "%1\r\n"}[proto] + enginetest.Bulk("f") + enginetest.Bulk("v")}},
			{{"ZADD", k + "z", "1.5", "m"}, {":1\r\n"}},
			{{"ZSCORE", k + "z", "m"}, {map[int]string{2: enginetest.Bulk("1.5"), 3: ",1.5\r\n"}[proto]}},
		} {
			assert.Equal(t, step[1][0], c.Do(step[0]...), "RESP%d %q", proto, step[0])
		}
	}
	assert.False(t, enginetest.Serves("config"), "CONFIG is the node's")
	assert.True(t, enginetest.Serves("XINFO"), "XINFO's subcommands are the engine's")
	assert.True(t, enginetest.Serves("multi"))
}

// TestFanouts: keyless commands over every slot merge the shard's part.
func TestFanouts(t *testing.T) {
	e := newEngine(t, 1)
	c := e.Client(2)
	for i := 0; i < 5; i++ {
		require.Equal(t, "+OK\r\n", c.Do("SET", "key"+strconv.Itoa(i), "v"))
	}
	assert.Equal(t, ":5\r\n", c.Do("DBSIZE"))
	assert.Equal(t, "*1\r\n"+enginetest.Bulk("key3"), c.Do("KEYS", "*3"))
	assert.Equal(t, "+OK\r\n", c.Do("FLUSHALL"))
	assert.Equal(t, ":0\r\n", c.Do("DBSIZE"))
}

// TestTransactions: MULTI queues, EXEC runs the queue in one turn, errors at
// queue time abort it, and a WATCHed key written by another client makes
// EXEC answer a null array.
func TestTransactions(t *testing.T) {
	e := newEngine(t, 1)
	for _, proto := range []int{2, 3} {
		a, b := e.Client(proto), e.Client(proto)
		nullArray := map[int]string{2: "*-1\r\n", 3: "_\r\n"}[proto]
		require.Equal(t, "+OK\r\n", a.Do("MULTI"))
		require.Equal(t, "+QUEUED\r\n", a.Do("SET", "{t}k", "1"))
		require.Equal(t, "+QUEUED\r\n", a.Do("INCR", "{t}k"))
		require.Equal(t, "+QUEUED\r\n", a.Do("PING"))
		assert.Equal(t, "*3\r\n+OK\r\n:2\r\n+PONG\r\n", a.Do("EXEC"))

		assert.Equal(t, "-ERR EXEC without MULTI\r\n", a.Do("EXEC"))
		require.Equal(t, "+OK\r\n", a.Do("MULTI"))
		assert.Equal(t, "-ERR MULTI calls can not be nested\r\n", a.Do("MULTI"))
		assert.Equal(t, "-ERR wrong number of arguments for 'get' command\r\n", a.Do("GET"))
		assert.Equal(t, "-EXECABORT Transaction discarded because of previous errors.\r\n", a.Do("EXEC"))

		require.Equal(t, "+OK\r\n", a.Do("WATCH", "{t}k"))
		require.Equal(t, "+OK\r\n", a.Do("MULTI"))
		assert.Equal(t, "-ERR WATCH inside MULTI is not allowed\r\n", a.Do("WATCH", "{t}k"))
		require.Equal(t, "+QUEUED\r\n", a.Do("INCR", "{t}k"))
		require.Equal(t, ":3\r\n", b.Do("INCR", "{t}k"))
		assert.Equal(t, nullArray, a.Do("EXEC"), "the WATCHed key changed")
		assert.Equal(t, enginetest.Bulk("3"), a.Do("GET", "{t}k"), "the aborted INCR did not run")

		require.Equal(t, "+OK\r\n", a.Do("WATCH", "{t}k"))
		require.Equal(t, "+OK\r\n", a.Do("MULTI"))
		require.Equal(t, "+QUEUED\r\n", a.Do("INCR", "{t}k"))
		assert.Equal(t, "*1\r\n:4\r\n", a.Do("EXEC"), "nobody touched the key")
		require.Equal(t, "+OK\r\n", a.Do("MULTI"))
		require.Equal(t, "+OK\r\n", a.Do("DISCARD"))
		assert.Equal(t, "-ERR DISCARD without MULTI\r\n", a.Do("DISCARD"))
		require.Equal(t, ":1\r\n", a.Do("DEL", "{t}k"))
	}
}

// TestBlockingOnTheVirtualClock: a blocking command waits until its
// timeout on the virtual clock, or until another client serves it.
func TestBlockingOnTheVirtualClock(t *testing.T) {
	e := newEngine(t, 1)
	a, b := e.Client(2), e.Client(2)
	start := e.Now()
	assert.Equal(t, "*-1\r\n", a.Do("BLPOP", "q", "1.5"))
	assert.Equal(t, 1500*time.Millisecond, e.Now().Sub(start), "the clock moved to the timeout, no further")

	a.Send("BLPOP", "q", "0")
	require.True(t, a.Blocked())
	require.Equal(t, ":1\r\n", b.Do("RPUSH", "q", "x"))
	require.False(t, a.Blocked())
	assert.Equal(t, "*2\r\n"+enginetest.Bulk("q")+enginetest.Bulk("x"), a.Reply())
	assert.Equal(t, 1500*time.Millisecond, e.Now().Sub(start), "served at once")

	require.Equal(t, "+OK\r\n", a.Do("MULTI"))
	require.Equal(t, "+QUEUED\r\n", a.Do("BLPOP", "q", "0"))
	assert.Equal(t, "*1\r\n*-1\r\n", a.Do("EXEC"), "inside MULTI a blocking command does not block")
	assert.Panics(t, func() { a.Do("BLPOP", "q", "0") }, "nobody can serve it")
}

// TestExpiryOnTheVirtualClock: TTLs count virtual time; lazy expiry on
// access and the active cycle on ticks remove keys when it has passed.
func TestExpiryOnTheVirtualClock(t *testing.T) {
	e := newEngine(t, 1)
	c := e.Client(2)
	require.Equal(t, "+OK\r\n", c.Do("SET", "k", "v", "PX", "250"))
	require.Equal(t, "+OK\r\n", c.Do("SET", "j", "v", "PX", "250"))
	e.Advance(249 * time.Millisecond)
	assert.Equal(t, ":1\r\n", c.Do("PTTL", "k"))
	e.Advance(time.Millisecond)
	assert.Equal(t, "$-1\r\n", c.Do("GET", "k"), "lazy expiry")
	assert.Equal(t, ":1\r\n", c.Do("DBSIZE"), "j is not touched yet")
	e.Advance(100 * time.Millisecond)
	assert.Equal(t, ":0\r\n", c.Do("DBSIZE"), "the active cycle removed j")
	assert.Equal(t, int64(1), e.Shard().Stats.Expired.Load()-1, "one lazy and one active expiry")
}

// TestSeedDecidesRandomReplies: the random source is the seed's alone.
func TestSeedDecidesRandomReplies(t *testing.T) {
	run := func(seed uint64) []string {
		e := newEngine(t, seed)
		c := e.Client(2)
		var members []string
		for i := 0; i < 200; i++ {
			members = append(members, "m"+strconv.Itoa(i))
		}
		require.Equal(t, ":200\r\n", c.Do(append([]string{"SADD", "s"}, members...)...))
		return []string{c.Do("SRANDMEMBER", "s", "5"), c.Do("SPOP", "s", "3"), c.Do("SRANDMEMBER", "s", "-4"),
			c.Do("RANDOMKEY")}
	}
	assert.Equal(t, run(7), run(7))
	assert.NotEqual(t, run(7), run(8))
}

// TestMigrateReachesNoNetwork: without a transfer MIGRATE fails as towards
// a target that refuses the connection and keeps the key; with one the
// moved key goes away.
func TestMigrateReachesNoNetwork(t *testing.T) {
	e := newEngine(t, 1)
	c := e.Client(2)
	require.Equal(t, "+OK\r\n", c.Do("SET", "k", "v"))
	assert.Equal(t, "-IOERR error or timeout writing to target instance\r\n", c.Do("MIGRATE", "127.0.0.1", "1", "k", "0", "1000"))
	assert.Equal(t, ":1\r\n", c.Do("EXISTS", "k"))

	enginetest.Register()
	var got []string
	e = enginetest.New(enginetest.Options{Migrate: func(job *engine.MigrateJob) {
		job.Restored = make([]bool, len(job.Keys))
		for i, k := range job.Keys {
			got = append(got, job.Addr+" "+string(k))
			job.Restored[i] = true
		}
	}})
	c = e.Client(2)
	require.Equal(t, "+OK\r\n", c.Do("SET", "k", "v"))
	assert.Equal(t, "+OK\r\n", c.Do("MIGRATE", "10.0.0.9", "7000", "k", "0", "1000"))
	assert.Equal(t, []string{"10.0.0.9:7000 k"}, got)
	assert.Equal(t, ":0\r\n", c.Do("EXISTS", "k"))
}

// TestWatchSeesWritesBeforeExecRuns: EXEC's WATCH check happens when the
// transaction runs in the shard, so a write that reaches the shard after
// the client's loop parsed EXEC but before the transaction's batch aborts
// it, whether another client's SET or a MIGRATE that moves the key away
// (its delete must not leave the transaction to recreate the key here).
func TestWatchSeesWritesBeforeExecRuns(t *testing.T) {
	enginetest.Register()
	moved := map[string]bool{}
	e := enginetest.New(enginetest.Options{Migrate: func(job *engine.MigrateJob) {
		job.Restored = make([]bool, len(job.Keys))
		for i, k := range job.Keys {
			moved[string(k)] = true
			job.Restored[i] = true
		}
	}})
	a, b := e.Client(2), e.Client(2)
	for _, write := range [][]string{
		{"SET", "k", "other"},
		{"MIGRATE", "10.0.0.9", "7000", "k", "0", "1000"},
	} {
		require.Equal(t, "+OK\r\n", a.Do("SET", "k", "5"))
		require.Equal(t, "+OK\r\n", a.Do("WATCH", "k"))
		require.Equal(t, "+OK\r\n", a.Do("MULTI"))
		require.Equal(t, "+QUEUED\r\n", a.Do("INCR", "k"))
		a.Hold("EXEC")
		require.Equal(t, "+OK\r\n", b.Do(write...), "%q", write)
		a.Release()
		assert.Equal(t, "*-1\r\n", a.Reply(), "EXEC after %q", write)
		if write[0] == "SET" {
			assert.Equal(t, enginetest.Bulk("other"), b.Do("GET", "k"))
		} else {
			assert.True(t, moved["k"])
			assert.Equal(t, ":0\r\n", b.Do("EXISTS", "k"), "the moved key stays away")
		}
		// The next transaction is not aborted by writes after this EXEC.
		require.Equal(t, "+OK\r\n", a.Do("MULTI"))
		require.Equal(t, "+QUEUED\r\n", a.Do("SET", "k", "1"))
		assert.Equal(t, "*1\r\n+OK\r\n", a.Do("EXEC"))
		require.Equal(t, ":1\r\n", b.Do("DEL", "k"))
	}
}
