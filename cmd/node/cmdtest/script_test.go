package cmdtest_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
	"github.com/slotd/slotd/slots"
)

var scrCtx = context.Background()

// scrKey returns a key name (with prefix) whose slot belongs to shard
// actor `actor` of `n`, optionally avoiding a slot.
func scrKey(prefix string, actor, n int, avoidSlot int) string {
	for i := 0; ; i++ {
		k := prefix + strconv.Itoa(i)
		sl := slots.HashSlot([]byte(k))
		if sl%n == actor && sl != avoidSlot {
			return k
		}
	}
}

const (
	scrNonLocal = "ERR Script attempted to access a non local key in a cluster node"
	scrBusy     = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
)

// TestScriptKeysAcrossShards: a script reaches the keys of its own shard
// actor (declared or not, as Redis lets a script touch any local key) and
// is refused keys that live in another actor.
func TestScriptKeysAcrossShards(t *testing.T) {
	n := nodetest.Start(t, "shard-actors", "4")
	c := respDial(t, n.Addr, 2)
	k0 := scrKey("a", 0, 4, -1)
	k0b := scrKey("b", 0, 4, slots.HashSlot([]byte(k0)))
	k1 := scrKey("c", 1, 4, -1)
	require.Equal(t, "+OK\r\n", c.Do("SET", k0b, "other-slot-same-actor"))
	require.Equal(t, "+OK\r\n", c.Do("SET", k1, "elsewhere"))

	// Declared key: fine; undeclared key of the same actor: fine.
	assert.Equal(t, "+OK\r\n", c.Do("EVAL", "return redis.call('set', KEYS[1], 'v')", "1", k0))
	assert.Equal(t, respBulk("other-slot-same-actor"), c.Do("EVAL", "return redis.call('get', ARGV[1])", "1", k0, k0b))
	// No keys: the script runs in actor 0 and reaches actor 0's slots.
	assert.Equal(t, respBulk("v"), c.Do("EVAL", "return redis.call('get', ARGV[1])", "0", k0))

	// A key of another actor is out of reach, with Redis Cluster's text.
	sha := "script: "
	r := c.Do("EVAL", "return redis.call('get', ARGV[1])", "1", k0, k1)
	assert.True(t, strings.HasPrefix(r, "-"+scrNonLocal+" "+sha), r)
	assert.Equal(t, respErr(scrNonLocal), c.Do("EVAL", "return redis.pcall('get', ARGV[1])", "0", k1))
	// A multi-key command inside a script needs one slot.
	assert.Equal(t, respErr(scrNonLocal), c.Do("EVAL", "return redis.pcall('mget', ARGV[1], ARGV[2])", "0", k0, k0b))
	// Declared keys in two slots: CROSSSLOT before the script runs.
	assert.Equal(t, respErr("CROSSSLOT Keys in request don't hash to the same slot"),
		c.Do("EVAL", "return 1", "2", k0, k1))
	// Declared key in actor 1: the script runs there.
	assert.Equal(t, respBulk("elsewhere"), c.Do("EVAL", "return redis.call('get', KEYS[1])", "1", k1))
	assert.Equal(t, respErr(scrNonLocal), c.Do("EVAL", "return redis.pcall('get', ARGV[1])", "1", k1, k0))
}

// TestScriptClusterOwnership: in cluster mode a script may not touch keys
// of slots the node does not serve; declared keys are routed as usual.
func TestScriptClusterOwnership(t *testing.T) {
	n := nodetest.Start(t, "cluster-enabled", "yes", "shard-actors", "1", "cluster-require-full-coverage", "no")
	rdb := n.Client(t)
	require.NoError(t, rdb.Do(scrCtx, "cluster", "addslotsrange", "0", "8000").Err())
	nodetest.Eventually(t, 5*time.Second, func() bool {
		info, _ := rdb.ClusterInfo(scrCtx).Result()
		return strings.Contains(info, "cluster_state:ok")
	}, "cluster_state:ok")
	c := respDial(t, n.Addr, 2)
	// "b" is slot 3300 (served), "a" is 15495 (not served).
	assert.Equal(t, "+OK\r\n", c.Do("EVAL", "return redis.call('set', 'b', 1)", "0"))
	assert.Equal(t, respErr(scrNonLocal), c.Do("EVAL", "return redis.pcall('get', 'a')", "1", "b"))
	assert.Equal(t, respErr("CLUSTERDOWN Hash slot not served"), c.Do("EVAL", "return 1", "1", "a"))
	assert.Equal(t, respErr("ERR Can not run script on cluster, 'no-cluster' flag is set."),
		c.Do("EVAL", "#!lua flags=no-cluster\nreturn 1", "0"))
	assert.Equal(t, respErr("ERR SELECT is not allowed in cluster mode"),
		c.Do("EVAL", "return redis.pcall('select', '1')", "0"))
}

// TestScriptCacheSharedByShards: a script loaded once runs by SHA in every
// shard actor; go-redis's Script helper (EVALSHA, then EVAL on NOSCRIPT)
// works in both protocols.
func TestScriptCacheSharedByShards(t *testing.T) {
	n := nodetest.Start(t, "shard-actors", "4")
	for _, proto := range []int{2, 3} {
		rdb := n.Client(t, proto)
		require.NoError(t, rdb.ScriptFlush(scrCtx).Err())
		sha, err := rdb.ScriptLoad(scrCtx, "return redis.call('incrby', KEYS[1], ARGV[1])").Result()
		require.NoError(t, err)
		for actor := 0; actor < 4; actor++ {
			k := scrKey("ctr"+strconv.Itoa(proto)+"-", actor, 4, -1)
			v, err := rdb.EvalSha(scrCtx, sha, []string{k}, 5).Int64()
			require.NoError(t, err, "actor %d", actor)
			assert.Equal(t, int64(5), v)
		}
		ex, err := rdb.ScriptExists(scrCtx, sha, strings.Repeat("0", 40)).Result()
		require.NoError(t, err)
		assert.Equal(t, []bool{true, false}, ex)

		s := redis.NewScript("return {KEYS[1], ARGV[1], redis.call('exists', KEYS[1])}")
		require.NoError(t, rdb.ScriptFlush(scrCtx).Err())
		res, err := s.Run(scrCtx, rdb, []string{"gr" + strconv.Itoa(proto)}, "x").Slice()
		require.NoError(t, err)
		assert.Equal(t, []any{"gr" + strconv.Itoa(proto), "x", int64(0)}, res)
		ex, _ = rdb.ScriptExists(scrCtx, s.Hash()).Result()
		assert.Equal(t, []bool{true}, ex)

		_, err = rdb.EvalSha(scrCtx, strings.Repeat("a", 40), nil).Result()
		assert.EqualError(t, err, "NOSCRIPT No matching script. Please use EVAL.")
		_, err = rdb.EvalRO(scrCtx, "return redis.call('del', KEYS[1])", []string{"x"}).Result()
		assert.ErrorContains(t, err, "ERR Write commands are not allowed from read-only scripts. script: ")
	}
}

// TestScriptKill: a busy script is answered with BUSY for other clients of
// its shard once lua-time-limit passes, SCRIPT KILL stops it (read-only)
// or refuses (it wrote), and nothing else of the node waits for it — even
// with a single event loop.
func TestScriptKill(t *testing.T) {
	n := nodetest.Start(t, "shard-actors", "2", "event-loops", "1", "lua-time-limit", "100")
	runner := respDial(t, n.Addr, 2)
	other := respDial(t, n.Addr, 2)
	k0 := scrKey("k", 0, 2, -1)
	k1 := scrKey("k", 1, 2, -1)
	require.Equal(t, "+OK\r\n", other.Do("SET", k1, "v1"))

	assert.Equal(t, respErr("NOTBUSY No scripts in execution right now."), other.Do("SCRIPT", "KILL"))
	start := time.Now()
	runner.Send("EVAL", "local i = 0 while true do i = i + 1 end", "1", k0)
	// Other shards and loop commands are served meanwhile.
	assert.Equal(t, respBulk("v1"), other.Do("GET", k1))
	assert.Equal(t, "+PONG\r\n", other.Do("PING"))
	nodetest.Eventually(t, 5*time.Second, func() bool { return other.Do("GET", k0) == respErr(scrBusy) },
		"BUSY from the script's shard")
	assert.GreaterOrEqual(t, time.Since(start), 100*time.Millisecond)
	assert.Equal(t, respErr(scrBusy), other.Do("DBSIZE"))
	assert.Equal(t, respErr(scrBusy), other.Do("EVAL", "return 1", "1", k0))
	assert.Equal(t, "+OK\r\n", other.Do("SCRIPT", "KILL"))
	r := runner.Read(5 * time.Second)
	assert.True(t, strings.HasPrefix(r, "-ERR Script killed by user with SCRIPT KILL... script: "), r)
	assert.Equal(t, "$-1\r\n", other.Do("GET", k0))
	assert.Equal(t, respErr("NOTBUSY No scripts in execution right now."), other.Do("SCRIPT", "KILL"))

	// pcall cannot swallow the kill.
	runner.Send("EVAL", "while true do pcall(function() while true do end end) end", "0")
	nodetest.Eventually(t, 5*time.Second, func() bool { return other.Do("SCRIPT", "KILL") == "+OK\r\n" }, "kill")
	r = runner.Read(5 * time.Second)
	assert.True(t, strings.HasPrefix(r, "-ERR Script killed by user with SCRIPT KILL... script: "), r)

	// A script that wrote cannot be killed; the node still stops cleanly.
	runner.Send("EVAL", "redis.call('set', KEYS[1], 'w') while true do end", "1", k0)
	nodetest.Eventually(t, 5*time.Second, func() bool {
		return strings.HasPrefix(other.Do("SCRIPT", "KILL"), "-UNKILLABLE Sorry the script already executed write commands")
	}, "UNKILLABLE")
	stopped := make(chan struct{})
	go func() {
		n.Stop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("node did not stop while a script was running")
	}
}

// TestScriptBusyOwnClient: the client running a long script is not told
// BUSY for its next commands: they wait for the script, in order.
func TestScriptBusyOwnClient(t *testing.T) {
	n := nodetest.Start(t, "shard-actors", "1", "lua-time-limit", "10")
	c := respDial(t, n.Addr, 2)
	c.Send("EVAL", "local t = redis.call('time') local s = t[1] * 1000000 + t[2] "+
		"repeat local n = redis.call('time') until n[1] * 1000000 + n[2] - s > 200000 "+
		"return redis.call('set', KEYS[1], 'done')", "1", "k")
	c.Send("GET", "k")
	assert.Equal(t, "+OK\r\n", c.Read(5*time.Second))
	assert.Equal(t, respBulk("done"), c.Read(5*time.Second))
}

// TestScriptConcurrentShards: scripts on different shard actors run side by
// side, and each stays atomic (no lost increments).
func TestScriptConcurrentShards(t *testing.T) {
	n := nodetest.Start(t, "shard-actors", "4")
	rdb := n.Client(t)
	const workers, each = 8, 50
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			key := "{c" + strconv.Itoa(w%4) + "}n"
			for i := 0; i < each; i++ {
				err := rdb.Eval(scrCtx, "local v = tonumber(redis.call('get', KEYS[1]) or '0') "+
					"return redis.call('set', KEYS[1], v + 1)", []string{key}).Err()
				assert.NoError(t, err)
			}
		}(w)
	}
	wg.Wait()
	for i := 0; i < 4; i++ {
		v, err := rdb.Get(scrCtx, "{c"+strconv.Itoa(i)+"}n").Int()
		require.NoError(t, err)
		assert.Equal(t, workers/4*each, v)
	}
}

// TestScriptCacheOrderInPipeline: EVAL and EVALSHA pipelined to different
// shard actors see the script cache in pipeline order: an EVALSHA before
// the EVAL that caches its script fails, one after it succeeds.
func TestScriptCacheOrderInPipeline(t *testing.T) {
	n := nodetest.Start(t, "shard-actors", "4")
	rdb := n.Client(t)
	body := "if #KEYS == 0 then return 'loaded' end return redis.call('incr', KEYS[1])"
	sha := redis.NewScript(body).Hash()
	for i := 0; i < 20; i++ {
		k := scrKey("ord"+strconv.Itoa(i)+"-", 1+i%3, 4, -1) // not actor 0, where keyless EVAL runs
		require.NoError(t, rdb.ScriptFlush(scrCtx).Err())
		pipe := rdb.Pipeline()
		before := pipe.EvalSha(scrCtx, sha, []string{k})
		load := pipe.Eval(scrCtx, body, nil)
		_, _ = pipe.Exec(scrCtx)
		assert.EqualError(t, before.Err(), "NOSCRIPT No matching script. Please use EVAL.", "round %d", i)
		assert.NoError(t, load.Err())

		require.NoError(t, rdb.ScriptFlush(scrCtx).Err())
		pipe = rdb.Pipeline()
		load = pipe.Eval(scrCtx, body, nil)
		after := pipe.EvalSha(scrCtx, sha, []string{k})
		_, _ = pipe.Exec(scrCtx)
		assert.NoError(t, load.Err(), "round %d", i)
		assert.NoError(t, after.Err(), "round %d", i)
	}
}
