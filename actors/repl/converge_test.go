package repl_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// workload writes every data type through commands whose replicated form
// is rewritten (relative TTLs, random pops, float increments, blocking
// pops, scripts, transactions) as well as plain ones. round makes keys
// and values differ between calls.
func workload(t *testing.T, c *redis.Client, round int) {
	t.Helper()
	r := strconv.Itoa(round)
	k := func(s string) string { return "{w" + r + "}" + s }
	must := func(cmd redis.Cmder) {
		t.Helper()
		if err := cmd.Err(); err != redis.Nil {
			require.NoError(t, err, "%v", cmd.Args())
		}
	}
	// Strings.
	for i := 0; i < 50; i++ {
		must(c.Set(ctx, "s"+r+":"+strconv.Itoa(i), i, 0))
	}
	must(c.Set(ctx, k("ex"), "v", time.Hour))
	must(c.Do(ctx, "SET", k("px"), "v", "PX", 3600000, "GET"))
	must(c.SetEx(ctx, k("setex"), "v", time.Hour))
	must(c.Do(ctx, "PSETEX", k("psetex"), 3600000, "v"))
	must(c.SetNX(ctx, k("nx"), "v", 0))
	must(c.Set(ctx, k("keep"), "v", time.Hour))
	must(c.Do(ctx, "SET", k("keep"), "v2", "KEEPTTL"))
	must(c.Append(ctx, k("app"), "abc"))
	must(c.Incr(ctx, k("ctr")))
	must(c.IncrByFloat(ctx, k("f"), 0.1))
	must(c.IncrByFloat(ctx, k("f"), 1e10))
	must(c.SetRange(ctx, k("rng"), 5, "x"))
	must(c.Set(ctx, k("getex"), "v", 0))
	must(c.GetEx(ctx, k("getex"), time.Hour))
	must(c.Set(ctx, k("persist"), "v", time.Hour))
	must(c.Do(ctx, "GETEX", k("persist"), "PERSIST"))
	must(c.Set(ctx, k("getdel"), "v", 0))
	must(c.GetDel(ctx, k("getdel")))
	must(c.MSet(ctx, k("m1"), "1", k("m2"), "2"))
	must(c.GetSet(ctx, k("m1"), "one"))
	// TTLs.
	must(c.Set(ctx, k("e1"), "v", 0))
	must(c.Expire(ctx, k("e1"), time.Hour))
	must(c.Set(ctx, k("e2"), "v", 0))
	must(c.PExpire(ctx, k("e2"), time.Hour))
	must(c.Set(ctx, k("e3"), "v", 0))
	must(c.ExpireAt(ctx, k("e3"), time.Now().Add(time.Hour)))
	must(c.Set(ctx, k("e4"), "v", 0))
	must(c.Expire(ctx, k("e4"), -1)) // deletes
	must(c.Set(ctx, k("e5"), "v", time.Hour))
	must(c.Persist(ctx, k("e5")))
	must(c.Do(ctx, "EXPIRE", k("e1"), 7200, "GT"))
	// Lists, including the blocking pops in their served form.
	must(c.RPush(ctx, k("l"), "a", "b", "c", "d", "e", "f"))
	must(c.LPush(ctx, k("l"), "z"))
	must(c.LPop(ctx, k("l")))
	must(c.RPopCount(ctx, k("l"), 2))
	must(c.LMove(ctx, k("l"), k("l2"), "LEFT", "RIGHT"))
	must(c.RPopLPush(ctx, k("l"), k("l2")))
	must(c.LSet(ctx, k("l2"), 0, "first"))
	must(c.LInsertBefore(ctx, k("l2"), "first", "zero"))
	must(c.BLPop(ctx, time.Second, k("l")))
	must(c.BLMove(ctx, k("l2"), k("l3"), "RIGHT", "LEFT", time.Second))
	must(c.Do(ctx, "LMPOP", 2, k("none"), k("l2"), "LEFT", "COUNT", 1))
	must(c.RPush(ctx, k("lt"), 1, 2, 3, 4, 5))
	must(c.LTrim(ctx, k("lt"), 1, 3))
	must(c.LRem(ctx, k("lt"), 1, "3"))
	// Hashes.
	must(c.HSet(ctx, k("h"), "a", 1, "b", 2, "c", "x"))
	must(c.HIncrBy(ctx, k("h"), "a", 5))
	must(c.HIncrByFloat(ctx, k("h"), "f", 2.5))
	must(c.HDel(ctx, k("h"), "b"))
	must(c.HSetNX(ctx, k("h"), "n", "1"))
	// Sets: SPOP picks at random, replicas must get what was picked.
	for i := 0; i < 40; i++ {
		must(c.SAdd(ctx, k("set"), i))
	}
	must(c.SAdd(ctx, k("strs"), "a", "b", "c", "d", "e", "f"))
	must(c.SPop(ctx, k("set")))
	must(c.SPopN(ctx, k("set"), 5))
	must(c.SPopN(ctx, k("set"), 30)) // the remainder path
	must(c.SPopN(ctx, k("strs"), 2))
	must(c.SRem(ctx, k("strs"), "a"))
	must(c.SMove(ctx, k("strs"), k("strs2"), "b"))
	must(c.SAdd(ctx, k("s2"), "c", "d", "q"))
	must(c.SInterStore(ctx, k("inter"), k("strs"), k("s2")))
	must(c.SUnionStore(ctx, k("union"), k("strs"), k("s2")))
	// Sorted sets.
	must(c.ZAdd(ctx, k("z"), redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2.5, Member: "b"},
		redis.Z{Score: -3, Member: "c"}, redis.Z{Score: 1e300, Member: "d"}))
	must(c.Do(ctx, "ZADD", k("z"), "+inf", "inf", "-inf", "ninf"))
	must(c.ZIncrBy(ctx, k("z"), 0.1, "a"))
	must(c.ZPopMin(ctx, k("z")))
	must(c.ZPopMax(ctx, k("z"), 1))
	must(c.BZPopMin(ctx, time.Second, k("z")))
	must(c.Do(ctx, "ZMPOP", 1, k("z"), "MAX", "COUNT", 1))
	must(c.ZAdd(ctx, k("z2"), redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2, Member: "x"}))
	must(c.ZUnionStore(ctx, k("zu"), &redis.ZStore{Keys: []string{k("z"), k("z2")}}))
	must(c.ZRemRangeByScore(ctx, k("z2"), "2", "2"))
	// Bitmaps and HyperLogLogs.
	must(c.SetBit(ctx, k("bits"), 77, 1))
	must(c.Set(ctx, k("b2"), "abc", 0))
	must(c.BitOpAnd(ctx, k("band"), k("bits"), k("b2")))
	must(c.BitField(ctx, k("bf"), "SET", "u8", 0, 200, "INCRBY", "u8", 0, 100))
	must(c.PFAdd(ctx, k("hll"), "a", "b", "c"))
	must(c.PFAdd(ctx, k("hll2"), "c", "d"))
	must(c.PFMerge(ctx, k("hllm"), k("hll"), k("hll2")))
	// Keys.
	must(c.Rename(ctx, k("m2"), k("renamed")))
	must(c.Copy(ctx, k("h"), k("hcopy"), 0, false))
	must(c.Del(ctx, k("app")))
	dumped := c.Dump(ctx, k("h")).Val()
	must(c.RestoreReplace(ctx, k("restored"), time.Hour, dumped))
	must(c.Restore(ctx, k("restored2"), 0, dumped))
	// Streams: auto IDs and approximate trims stream as what they did,
	// group reads as XCLAIM / XGROUP SETID / CREATECONSUMER records.
	for i := 0; i < 300; i++ {
		must(c.XAdd(ctx, &redis.XAddArgs{Stream: k("x"), MaxLen: 250, Approx: true, Values: []any{"n", i}}))
	}
	must(c.XAdd(ctx, &redis.XAddArgs{Stream: k("x"), MinID: "0-1", Approx: true, Values: []any{"n", "last"}}))
	must(c.XGroupCreate(ctx, k("x"), "g", "0"))
	must(c.XGroupCreate(ctx, k("x"), "noack", "0"))
	must(c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "a", Streams: []string{k("x"), ">"}, Count: 20}))
	must(c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "b", Streams: []string{k("x"), ">"}, Count: 5}))
	must(c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "noack", Consumer: "n", Streams: []string{k("x"), ">"}, Count: 7, NoAck: true}))
	ids := c.XRangeN(ctx, k("x"), "-", "+", 4).Val()
	must(c.XAck(ctx, k("x"), "g", ids[0].ID))
	must(c.XClaim(ctx, &redis.XClaimArgs{Stream: k("x"), Group: "g", Consumer: "c", Messages: []string{ids[1].ID}}))
	must(c.XAutoClaim(ctx, &redis.XAutoClaimArgs{Stream: k("x"), Group: "g", Consumer: "d", Start: "0", Count: 3}))
	must(c.XDel(ctx, k("x"), ids[3].ID))
	must(c.XTrimMinIDApprox(ctx, k("x"), "0-1", 0))
	must(c.Do(ctx, "XSETID", k("x"), "99999999999999-0"))
	must(c.XGroupCreateConsumer(ctx, k("x"), "g", "idle"))
	must(c.XGroupCreateMkStream(ctx, k("xe"), "g", "$"))
	// A transaction and scripts (their effects are replicated, atomically).
	_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Incr(ctx, k("tx"))
		p.SPop(ctx, k("set"))
		p.Expire(ctx, k("tx"), time.Hour)
		p.Get(ctx, k("tx"))
		return nil
	})
	require.NoError(t, err)
	must(c.Eval(ctx, `redis.call('SET', KEYS[1], 'lua')
		redis.call('PEXPIRE', KEYS[1], 3600000)
		redis.call('SADD', KEYS[2], 'a', 'b', 'c', 'd')
		redis.call('SPOP', KEYS[2])
		return redis.call('INCRBYFLOAT', KEYS[3], '1.5')`, []string{k("lua"), k("luaset"), k("luaf")}))
}

// TestConvergeEveryType: a replica with a different shard count from its
// primary ends up with the same data, from the full sync (first round,
// written before REPLICAOF) and from the stream (second round).
func TestConvergeEveryType(t *testing.T) {
	for _, tc := range []struct {
		name string
		p, r int
	}{{"same-shards", 2, 2}, {"other-shards", 4, 3}} {
		t.Run(tc.name, func(t *testing.T) {
			p := start(t, tc.p)
			r := start(t, tc.r)
			pc := p.Client(t)
			workload(t, pc, 1)
			replicate(t, r, p)
			waitConverged(t, p, r)
			workload(t, pc, 2)
			// Blocking pops served later: the replica pops the key that
			// served.
			bc := p.Client(t, 2)
			done := make(chan error, 1)
			go func() { done <- bc.BLPop(ctx, 5*time.Second, "{b}x", "{b}y").Err() }()
			nodetest.Eventually(t, 5*time.Second, func() bool {
				return info(t, pc, "clients", "blocked_clients") == "1"
			}, "client blocked")
			require.NoError(t, pc.RPush(ctx, "{b}y", "1", "2").Err())
			require.NoError(t, <-done)
			waitConverged(t, p, r)
			rc := r.Client(t)
			assert.Equal(t, dump(t, pc), dump(t, rc))
			// FLUSHALL reaches the replica as the slots it dropped.
			require.NoError(t, pc.FlushAll(ctx).Err())
			require.NoError(t, pc.Set(ctx, "after", "flush", 0).Err())
			waitConverged(t, p, r)
			assert.Equal(t, int64(1), rc.DBSize(ctx).Val())
		})
	}
}

// TestWritesDuringFullSync: writes that land while the replica's full sync
// is in progress (in slots already sent and slots not yet sent) are not
// lost.
func TestWritesDuringFullSync(t *testing.T) {
	p := start(t, 4)
	r := start(t, 3)
	pc := p.Client(t, 2)
	pipe := pc.Pipeline()
	for i := 0; i < 30000; i++ {
		pipe.Set(ctx, "k"+strconv.Itoa(i), i, 0)
		if i%1000 == 0 {
			pipe.RPush(ctx, "list"+strconv.Itoa(i), 1, 2, 3)
		}
	}
	_, err := pipe.Exec(ctx)
	require.NoError(t, err)

	stop := make(chan struct{})
	writer := make(chan int)
	go func() {
		wc := p.Client(t, 2)
		n := 0
		for {
			select {
			case <-stop:
				writer <- n
				return
			default:
			}
			pipe := wc.Pipeline()
			for j := 0; j < 50; j++ {
				pipe.Incr(ctx, "k"+strconv.Itoa((n*50+j)%30000))
				pipe.Set(ctx, "new"+strconv.Itoa(n*50+j), n, 0)
				pipe.RPush(ctx, "list0", n)
			}
			if _, err := pipe.Exec(ctx); err != nil {
				panic(err)
			}
			n++
		}
	}()
	rc := r.Client(t, 2)
	require.NoError(t, rc.Do(ctx, "REPLICAOF", "127.0.0.1", p.Port).Err())
	waitUp(t, r)
	close(stop)
	rounds := <-writer
	require.Greater(t, rounds, 0)
	waitConverged(t, p, r)
	assert.Equal(t, pc.DBSize(ctx).Val(), rc.DBSize(ctx).Val())
	assert.Equal(t, pc.LRange(ctx, "list0", 0, -1).Val(), rc.LRange(ctx, "list0", 0, -1).Val())
}
