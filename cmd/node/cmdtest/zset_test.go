package cmdtest_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

func TestSortedSets(t *testing.T) {
	n := shardsNode(t)
	perProto(t, n, szTestZSetGoRedis, szTestZSetRandom, szTestZSetModel, szTestZSetWatch)
	t.Run("reply types", func(t *testing.T) { szTestZSetReplyTypes(t, n) })
	t.Run("wrong type and cross slot", func(t *testing.T) { szTestZSetErrors(t, n) })
	t.Run("zscan across resizes", func(t *testing.T) { szTestZScanResizes(t, n) })
}

func szTestZSetGoRedis(t *testing.T, rdb *redis.Client) {
	ctx := context.Background()
	z := func(s float64, m string) redis.Z { return redis.Z{Score: s, Member: m} }
	require.Equal(t, int64(3), rdb.ZAdd(ctx, "{g}z", z(1, "a"), z(2, "b"), z(3, "c")).Val())
	require.Equal(t, int64(1), rdb.ZAddArgs(ctx, "{g}z", redis.ZAddArgs{GT: true, Ch: true,
		Members: []redis.Z{z(5, "a"), z(1, "b")}}).Val())
	require.Equal(t, 5.0, rdb.ZScore(ctx, "{g}z", "a").Val())
	require.Equal(t, 2.5, rdb.ZIncrBy(ctx, "{g}z", 0.5, "b").Val())
	require.Equal(t, 7.5, rdb.ZAddArgsIncr(ctx, "{g}z", redis.ZAddArgs{Members: []redis.Z{z(2.5, "a")}}).Val())
	_, err := rdb.ZAddArgsIncr(ctx, "{g}z", redis.ZAddArgs{NX: true, Members: []redis.Z{z(1, "a")}}).Result()
	require.ErrorIs(t, err, redis.Nil)
	require.Equal(t, []float64{7.5, 0}, rdb.ZMScore(ctx, "{g}z", "a", "nope").Val())
	require.Equal(t, int64(3), rdb.ZCard(ctx, "{g}z").Val())
	require.Equal(t, []redis.Z{z(2.5, "b"), z(3, "c"), z(7.5, "a")}, rdb.ZRangeWithScores(ctx, "{g}z", 0, -1).Val())
	require.Equal(t, []string{"a", "c"}, rdb.ZRevRange(ctx, "{g}z", 0, 1).Val())
	require.Equal(t, []string{"c", "b"}, rdb.ZRangeArgs(ctx, redis.ZRangeArgs{Key: "{g}z", Start: "(7.5", Stop: "-inf",
		ByScore: true, Rev: true}).Val())
	require.Equal(t, []redis.Z{z(3, "c")}, rdb.ZRangeArgsWithScores(ctx, redis.ZRangeArgs{Key: "{g}z",
		Start: 0, Stop: 10, ByScore: true, Offset: 1, Count: 1}).Val())
	require.Equal(t, []string{"b", "c"}, rdb.ZRangeByScore(ctx, "{g}z", &redis.ZRangeBy{Min: "-inf", Max: "(7.5"}).Val())
	require.Equal(t, int64(2), rdb.ZCount(ctx, "{g}z", "2.5", "3").Val())
	require.Equal(t, int64(1), rdb.ZRank(ctx, "{g}z", "c").Val())
	require.Equal(t, int64(0), rdb.ZRevRank(ctx, "{g}z", "a").Val())
	require.ErrorIs(t, rdb.ZRank(ctx, "{g}z", "nope").Err(), redis.Nil)
	require.Equal(t, int64(2), rdb.ZRangeStore(ctx, "{g}dst", redis.ZRangeArgs{Key: "{g}z", Start: 0, Stop: 1}).Val())

	rdb.ZAdd(ctx, "{g}y", z(10, "b"), z(20, "x"))
	require.Equal(t, []redis.Z{z(3, "c"), z(7.5, "a"), z(12.5, "b"), z(20, "x")},
		rdb.ZUnionWithScores(ctx, redis.ZStore{Keys: []string{"{g}z", "{g}y"}}).Val())
	require.Equal(t, []redis.Z{z(25, "b")}, rdb.ZInterWithScores(ctx, &redis.ZStore{Keys: []string{"{g}z", "{g}y"},
		Weights: []float64{2, 2}}).Val())
	require.Equal(t, []redis.Z{z(3, "c"), z(7.5, "a")}, rdb.ZDiffWithScores(ctx, "{g}z", "{g}y").Val())
	require.Equal(t, int64(1), rdb.ZInterCard(ctx, 0, "{g}z", "{g}y").Val())
	require.Equal(t, int64(4), rdb.ZUnionStore(ctx, "{g}u", &redis.ZStore{Keys: []string{"{g}z", "{g}y"},
		Aggregate: "MAX"}).Val())
	require.Equal(t, 10.0, rdb.ZScore(ctx, "{g}u", "b").Val())
	require.Equal(t, int64(1), rdb.ZInterStore(ctx, "{g}i", &redis.ZStore{Keys: []string{"{g}z", "{g}y"}}).Val())
	require.Equal(t, int64(2), rdb.ZDiffStore(ctx, "{g}d", "{g}z", "{g}y").Val())

	require.Equal(t, []redis.Z{z(2.5, "b")}, rdb.ZPopMin(ctx, "{g}z").Val())
	require.Equal(t, []redis.Z{z(7.5, "a"), z(3, "c")}, rdb.ZPopMax(ctx, "{g}z", 5).Val())
	require.Equal(t, int64(0), rdb.Exists(ctx, "{g}z").Val())
	key, zs, err := rdb.ZMPop(ctx, "min", 2, "{g}z", "{g}y").Result()
	require.NoError(t, err)
	require.Equal(t, "{g}y", key)
	require.Equal(t, []redis.Z{z(10, "b"), z(20, "x")}, zs)
	_, _, err = rdb.ZMPop(ctx, "max", 1, "{g}z").Result()
	require.ErrorIs(t, err, redis.Nil)

	rdb.ZAdd(ctx, "{g}lex", z(0, "a"), z(0, "b"), z(0, "c"), z(0, "d"))
	require.Equal(t, []string{"b", "c"}, rdb.ZRangeByLex(ctx, "{g}lex", &redis.ZRangeBy{Min: "(a", Max: "[c"}).Val())
	require.Equal(t, []string{"d", "c"}, rdb.ZRevRangeByLex(ctx, "{g}lex", &redis.ZRangeBy{Max: "+", Min: "[c"}).Val())
	require.Equal(t, int64(3), rdb.ZLexCount(ctx, "{g}lex", "[b", "+").Val())
	require.Equal(t, int64(2), rdb.ZRemRangeByLex(ctx, "{g}lex", "[b", "[c").Val())
	rdb.ZAdd(ctx, "{g}rr", z(1, "a"), z(2, "b"), z(3, "c"), z(4, "d"))
	require.Equal(t, int64(2), rdb.ZRemRangeByRank(ctx, "{g}rr", 0, 1).Val())
	require.Equal(t, int64(1), rdb.ZRemRangeByScore(ctx, "{g}rr", "(3", "+inf").Val())
	require.Equal(t, []string{"c"}, rdb.ZRange(ctx, "{g}rr", 0, -1).Val())
	require.Equal(t, int64(1), rdb.ZRem(ctx, "{g}rr", "c", "x").Val())
	require.Equal(t, int64(0), rdb.Exists(ctx, "{g}rr").Val())

	require.Equal(t, "listpack", rdb.ObjectEncoding(ctx, "{g}u").Val())
	require.Equal(t, "zset", rdb.Type(ctx, "{g}u").Val())
	require.Equal(t, int64(1), rdb.Copy(ctx, "{g}u", "{g}u2", 0, false).Val())
	rdb.ZAdd(ctx, "{g}u2", z(0, "new"))
	require.Equal(t, int64(4), rdb.ZCard(ctx, "{g}u").Val())

	var members []string
	iter := rdb.ZScan(ctx, "{g}u", 0, "", 1).Iterator()
	for iter.Next(ctx) {
		members = append(members, iter.Val())
	}
	require.Equal(t, []string{"c", "3", "a", "7.5", "b", "10", "x", "20"}, members)
}

// szTestZSetRandom checks ZRANDMEMBER by membership.
func szTestZSetRandom(t *testing.T, rdb *redis.Client) {
	ctx := context.Background()
	for _, size := range []int{10, 300} { // listpack and skiplist
		key := fmt.Sprintf("{g}rz%d", size)
		scores := map[string]float64{}
		var zs []redis.Z
		for i := 0; i < size; i++ {
			m := fmt.Sprintf("m%d", i)
			scores[m] = float64(i) / 3
			zs = append(zs, redis.Z{Score: scores[m], Member: m})
		}
		rdb.ZAdd(ctx, key, zs...)
		for _, count := range []int{1, 3, size/2 + 1, size - 1, size, size + 5} {
			got := rdb.ZRandMemberWithScores(ctx, key, count).Val()
			require.Len(t, got, min(count, size))
			seen := map[string]bool{}
			for _, z := range got {
				m := z.Member.(string)
				require.Equal(t, scores[m], z.Score, m)
				require.False(t, seen[m], "repeated %s", m)
				seen[m] = true
			}
		}
		got := rdb.ZRandMember(ctx, key, -3*size).Val()
		require.Len(t, got, 3*size)
		for _, m := range got {
			_, ok := scores[m]
			require.True(t, ok, m)
		}
		_, ok := scores[rdb.Do(ctx, "ZRANDMEMBER", key).Val().(string)]
		require.True(t, ok)
	}
}

// szTestZSetModel drives a big sorted set with random updates over TCP and
// compares ranks and ranges with a sorted slice.
func szTestZSetModel(t *testing.T, rdb *redis.Client) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(5, 6))
	model := map[string]float64{}
	const key = "{g}model"
	for round := 0; round < 8; round++ {
		p := rdb.Pipeline()
		for i := 0; i < 250; i++ {
			m := "m" + strconv.Itoa(r.IntN(1000))
			if r.IntN(4) == 0 {
				delete(model, m)
				p.ZRem(ctx, key, m)
				continue
			}
			s := float64(r.IntN(100)) / 2
			model[m] = s
			p.ZAdd(ctx, key, redis.Z{Score: s, Member: m})
		}
		_, err := p.Exec(ctx)
		require.NoError(t, err)
		type item struct {
			m string
			s float64
		}
		var items []item
		for m, s := range model {
			items = append(items, item{m, s})
		}
		sort.Slice(items, func(i, j int) bool {
			return items[i].s < items[j].s || (items[i].s == items[j].s && items[i].m < items[j].m)
		})
		require.Equal(t, int64(len(items)), rdb.ZCard(ctx, key).Val())
		for k := 0; k < 20; k++ {
			i := r.IntN(len(items))
			require.Equal(t, int64(i), rdb.ZRank(ctx, key, items[i].m).Val())
			require.Equal(t, int64(len(items)-1-i), rdb.ZRevRank(ctx, key, items[i].m).Val())
			j := min(len(items)-1, i+r.IntN(30))
			got := rdb.ZRange(ctx, key, int64(i), int64(j)).Val()
			for x := i; x <= j; x++ {
				require.Equal(t, items[x].m, got[x-i])
			}
			lo := float64(r.IntN(100)) / 2
			cnt := 0
			for _, it := range items {
				if it.s >= lo && it.s < lo+5 {
					cnt++
				}
			}
			require.Equal(t, int64(cnt), rdb.ZCount(ctx, key, strconv.FormatFloat(lo, 'g', -1, 64),
				"("+strconv.FormatFloat(lo+5, 'g', -1, 64)).Val())
		}
	}
	require.Equal(t, "skiplist", rdb.ObjectEncoding(ctx, key).Val())
}

// szTestZSetWatch checks which keys a sorted-set command marks modified.
func szTestZSetWatch(t *testing.T, rdb *redis.Client) {
	ctx := context.Background()
	rdb.ZAdd(ctx, "{w}zs", redis.Z{Score: 1, Member: "a"})
	rdb.ZAdd(ctx, "{w}zo", redis.Z{Score: 2, Member: "b"})
	other := szSecondClient(t, rdb)
	require.NoError(t, watchTx(rdb, "{w}zs", func() { other.ZAdd(ctx, "{w}zs", redis.Z{Score: 1, Member: "a"}) }),
		"same score again")
	require.NoError(t, watchTx(rdb, "{w}zs", func() { other.ZRem(ctx, "{w}zs", "nope") }))
	require.NoError(t, watchTx(rdb, "{w}zs", func() { other.ZUnionStore(ctx, "{w}zd", &redis.ZStore{Keys: []string{"{w}zs"}}) }),
		"a source of ZUNIONSTORE")
	require.NoError(t, watchTx(rdb, "{w}zs", func() { other.ZMPop(ctx, "min", 2, "{w}zo", "{w}zs") }),
		"a ZMPOP key that was not popped")
	require.ErrorIs(t, watchTx(rdb, "{w}zd", func() { other.ZRangeStore(ctx, "{w}zd", redis.ZRangeArgs{Key: "{w}zs", Start: 0, Stop: -1}) }),
		redis.TxFailedErr)
	require.ErrorIs(t, watchTx(rdb, "{w}zs", func() { other.ZIncrBy(ctx, "{w}zs", 1, "a") }), redis.TxFailedErr)
}

func szTestZSetReplyTypes(t *testing.T, n *nodetest.Node) {
	sc2, sc3 := respDial(t, n.Addr, 2), respDial(t, n.Addr, 3)
	sc2.Do("DEL", "{t}z")
	require.Equal(t, ":2\r\n", sc2.Do("ZADD", "{t}z", "1.5", "a", "2", "b"))
	for _, tc := range []struct{ cmd, resp2, resp3 string }{
		{"ZSCORE {t}z a", "$3\r\n1.5\r\n", ",1.5\r\n"},
		{"ZSCORE {t}z nope", "$-1\r\n", "_\r\n"},
		{"ZINCRBY {t}z 0.1 b", "$18\r\n2.1000000000000001\r\n", ",2.1000000000000001\r\n"},
		{"ZINCRBY {t}z -0.1 b", "$1\r\n2\r\n", ",2\r\n"},
		{"ZMSCORE {t}z a nope", "*2\r\n$3\r\n1.5\r\n$-1\r\n", "*2\r\n,1.5\r\n_\r\n"},
		{"ZRANGE {t}z 0 -1 WITHSCORES", "*4\r\n$1\r\na\r\n$3\r\n1.5\r\n$1\r\nb\r\n$1\r\n2\r\n",
			"*2\r\n*2\r\n$1\r\na\r\n,1.5\r\n*2\r\n$1\r\nb\r\n,2\r\n"},
		{"ZRANGE {t}z 0 -1", "*2\r\n$1\r\na\r\n$1\r\nb\r\n", "*2\r\n$1\r\na\r\n$1\r\nb\r\n"},
		{"ZUNION 1 {t}z WITHSCORES", "*4\r\n$1\r\na\r\n$3\r\n1.5\r\n$1\r\nb\r\n$1\r\n2\r\n",
			"*2\r\n*2\r\n$1\r\na\r\n,1.5\r\n*2\r\n$1\r\nb\r\n,2\r\n"},
		{"ZRANDMEMBER {t}z 5 WITHSCORES", "*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\na\r\n$3\r\n1.5\r\n",
			"*2\r\n*2\r\n$1\r\nb\r\n,2\r\n*2\r\n$1\r\na\r\n,1.5\r\n"},
		{"ZSCAN {t}z 0", "*2\r\n$1\r\n0\r\n*4\r\n$1\r\na\r\n$3\r\n1.5\r\n$1\r\nb\r\n$1\r\n2\r\n",
			"*2\r\n$1\r\n0\r\n*4\r\n$1\r\na\r\n$3\r\n1.5\r\n$1\r\nb\r\n$1\r\n2\r\n"},
		{"ZADD {t}z INCR 1 a", "$3\r\n2.5\r\n", ",2.5\r\n"},
		{"ZADD {t}z XX INCR 1 nope", "$-1\r\n", "_\r\n"},
		{"ZPOPMIN {t}z", "*2\r\n$1\r\nb\r\n$1\r\n2\r\n", "*2\r\n$1\r\nb\r\n,2\r\n"},
		{"ZADD {t}z 2 b", ":1\r\n", ":1\r\n"},
		{"ZPOPMIN {t}z 1", "*2\r\n$1\r\nb\r\n$1\r\n2\r\n", "*1\r\n*2\r\n$1\r\nb\r\n,2\r\n"},
		{"ZADD {t}z 2 b", ":1\r\n", ":1\r\n"},
		{"ZMPOP 1 {t}z MAX", "*2\r\n$4\r\n{t}z\r\n*1\r\n*2\r\n$1\r\na\r\n$3\r\n2.5\r\n",
			"*2\r\n$4\r\n{t}z\r\n*1\r\n*2\r\n$1\r\na\r\n,2.5\r\n"},
		{"ZMPOP 1 {t}none MAX", "*-1\r\n", "_\r\n"},
		{"ZADD {t}z +inf a -inf c", ":2\r\n", ":2\r\n"},
		{"ZRANGE {t}z 0 -1 WITHSCORES", "*6\r\n$1\r\nc\r\n$4\r\n-inf\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\na\r\n$3\r\ninf\r\n",
			"*3\r\n*2\r\n$1\r\nc\r\n,-inf\r\n*2\r\n$1\r\nb\r\n,2\r\n*2\r\n$1\r\na\r\n,inf\r\n"},
	} {
		args := scriptWords(tc.cmd)
		assert.Equal(t, tc.resp2, sc2.Do(args...), "RESP2 %s", tc.cmd)
		if args[0] == "ZINCRBY" || args[0] == "ZADD" || args[0] == "ZPOPMIN" || args[0] == "ZMPOP" {
			continue // a write: its RESP3 form is checked below
		}
		assert.Equal(t, tc.resp3, sc3.Do(args...), "RESP3 %s", tc.cmd)
	}
	// The writes above, as RESP3 sees them.
	sc3.Do("DEL", "{t}y")
	assert.Equal(t, ":1\r\n", sc3.Do("ZADD", "{t}y", "1", "a"))
	assert.Equal(t, ",1.5\r\n", sc3.Do("ZINCRBY", "{t}y", "0.5", "a"))
	assert.Equal(t, ",inf\r\n", sc3.Do("ZADD", "{t}y", "INCR", "inf", "a"))
	assert.Equal(t, "_\r\n", sc3.Do("ZADD", "{t}y", "XX", "INCR", "1", "b"))
	assert.Equal(t, "*2\r\n$1\r\na\r\n,inf\r\n", sc3.Do("ZPOPMIN", "{t}y"))
	assert.Equal(t, "*0\r\n", sc3.Do("ZPOPMIN", "{t}y", "3"))
	assert.Equal(t, "_\r\n", sc3.Do("ZMPOP", "1", "{t}y", "MIN"))
}

func szTestZSetErrors(t *testing.T, n *nodetest.Node) {
	sc := respDial(t, n.Addr, 2)
	require.Equal(t, "+OK\r\n", sc.Do("SET", "{e}str", "x"))
	wrong := "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
	for _, cmd := range [][]string{
		{"ZADD", "{e}str", "1", "a"}, {"ZINCRBY", "{e}str", "1", "a"}, {"ZREM", "{e}str", "a"},
		{"ZSCORE", "{e}str", "a"}, {"ZMSCORE", "{e}str", "a"}, {"ZCARD", "{e}str"}, {"ZCOUNT", "{e}str", "0", "1"},
		{"ZLEXCOUNT", "{e}str", "-", "+"}, {"ZRANGE", "{e}str", "0", "1"}, {"ZRANGESTORE", "{e}d", "{e}str", "0", "1"},
		{"ZRANGEBYSCORE", "{e}str", "0", "1"}, {"ZREVRANGEBYSCORE", "{e}str", "1", "0"},
		{"ZRANGEBYLEX", "{e}str", "-", "+"}, {"ZREVRANGEBYLEX", "{e}str", "+", "-"}, {"ZREVRANGE", "{e}str", "0", "1"},
		{"ZRANK", "{e}str", "a"}, {"ZREVRANK", "{e}str", "a"}, {"ZPOPMIN", "{e}str"}, {"ZPOPMAX", "{e}str", "2"},
		{"ZMPOP", "1", "{e}str", "MIN"}, {"ZREMRANGEBYRANK", "{e}str", "0", "1"},
		{"ZREMRANGEBYSCORE", "{e}str", "0", "1"}, {"ZREMRANGEBYLEX", "{e}str", "-", "+"},
		{"ZUNION", "1", "{e}str"}, {"ZINTER", "1", "{e}str"}, {"ZDIFF", "1", "{e}str"},
		{"ZUNIONSTORE", "{e}d", "1", "{e}str"}, {"ZINTERSTORE", "{e}d", "1", "{e}str"},
		{"ZDIFFSTORE", "{e}d", "1", "{e}str"}, {"ZINTERCARD", "1", "{e}str"}, {"ZSCAN", "{e}str", "0"},
		{"ZRANDMEMBER", "{e}str"}, {"ZRANDMEMBER", "{e}str", "2"},
	} {
		assert.Equal(t, wrong, sc.Do(cmd...), "%v", cmd)
	}
	// Standalone: keys of two slots, as in Redis.
	assert.Equal(t, "*0\r\n", sc.Do("ZUNION", "2", "a", "b"))
	assert.Equal(t, "*-1\r\n", sc.Do("ZMPOP", "2", "a", "b", "MIN"))
	for _, cmd := range [][]string{
		{"ZUNIONSTORE", "a", "1", "b"}, {"ZRANGESTORE", "a", "b", "0", "1"}, {"ZINTERCARD", "2", "a", "b"},
		{"ZDIFFSTORE", "x", "2", "{a}", "{a}"},
	} {
		assert.Equal(t, ":0\r\n", sc.Do(cmd...), "%v", cmd)
	}
	assert.Equal(t, "-ERR wrong number of arguments for 'zadd' command\r\n", sc.Do("ZADD", "k", "1"))
	assert.Equal(t, "-ERR at least 1 input key is needed for 'zunionstore' command\r\n",
		sc.Do("ZUNIONSTORE", "d", "0", "k"))
	assert.Equal(t, "-ERR syntax error\r\n", sc.Do("ZMPOP", "2", "a", "MIN"))
}

// szTestZScanResizes grows and shrinks a skiplist-encoded set during a
// ZSCAN: members present throughout are all returned with their scores.
func szTestZScanResizes(t *testing.T, n *nodetest.Node) {
	ctx := context.Background()
	rdb := n.Client(t)
	var stable []redis.Z
	for i := 0; i < 500; i++ {
		stable = append(stable, redis.Z{Score: float64(i) + 0.5, Member: fmt.Sprintf("s%d", i)})
	}
	require.NoError(t, rdb.ZAdd(ctx, "{x}z", stable...).Err())
	seen := map[string]string{}
	cursor := uint64(0)
	for step := 0; ; step++ {
		kv, next, err := rdb.ZScan(ctx, "{x}z", cursor, "", 10).Result()
		require.NoError(t, err)
		for i := 0; i < len(kv); i += 2 {
			seen[kv[i]] = kv[i+1]
		}
		if cursor = next; cursor == 0 {
			break
		}
		switch {
		case step < 15:
			var churn []redis.Z
			for i := 0; i < 200; i++ {
				churn = append(churn, redis.Z{Score: -1, Member: fmt.Sprintf("c%d-%d", step, i)})
			}
			rdb.ZAdd(ctx, "{x}z", churn...)
		case step < 30:
			rdb.ZRemRangeByScore(ctx, "{x}z", "-1", "-1")
		}
	}
	for _, z := range stable {
		require.Equal(t, strconv.FormatFloat(z.Score, 'g', 17, 64), seen[z.Member.(string)], "ZSCAN missed %s", z.Member)
	}
}
