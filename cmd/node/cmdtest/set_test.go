package cmdtest_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

func TestSets(t *testing.T) {
	n := shardsNode(t)
	perProto(t, n, szTestSetGoRedis, szTestSetRandom, szTestSetWatch)
	t.Run("reply types", func(t *testing.T) { szTestSetReplyTypes(t, n) })
	t.Run("wrong type and cross slot", func(t *testing.T) { szTestSetErrors(t, n) })
	t.Run("sscan across resizes", func(t *testing.T) { szTestSScanResizes(t, n) })
	t.Run("expiry", func(t *testing.T) { szTestSetExpiry(t, n) })
}

func szTestSetGoRedis(t *testing.T, rdb *redis.Client) {
	ctx := context.Background()
	require.Equal(t, int64(3), rdb.SAdd(ctx, "{g}a", "x", "y", "z").Val())
	require.Equal(t, int64(1), rdb.SAdd(ctx, "{g}a", "x", "w").Val())
	require.Equal(t, int64(4), rdb.SCard(ctx, "{g}a").Val())
	require.True(t, rdb.SIsMember(ctx, "{g}a", "w").Val())
	require.Equal(t, []bool{true, false}, rdb.SMIsMember(ctx, "{g}a", "x", "nope").Val())
	require.ElementsMatch(t, []string{"w", "x", "y", "z"}, rdb.SMembers(ctx, "{g}a").Val())
	require.Equal(t, map[string]struct{}{"w": {}, "x": {}, "y": {}, "z": {}}, rdb.SMembersMap(ctx, "{g}a").Val())

	rdb.SAdd(ctx, "{g}b", "y", "z", "q")
	require.ElementsMatch(t, []string{"y", "z"}, rdb.SInter(ctx, "{g}a", "{g}b").Val())
	require.ElementsMatch(t, []string{"w", "x", "y", "z", "q"}, rdb.SUnion(ctx, "{g}a", "{g}b").Val())
	require.ElementsMatch(t, []string{"w", "x"}, rdb.SDiff(ctx, "{g}a", "{g}b").Val())
	require.Equal(t, int64(2), rdb.SInterCard(ctx, 0, "{g}a", "{g}b").Val())
	require.Equal(t, int64(1), rdb.SInterCard(ctx, 1, "{g}a", "{g}b").Val())
	require.Equal(t, int64(2), rdb.SInterStore(ctx, "{g}i", "{g}a", "{g}b").Val())
	require.Equal(t, int64(5), rdb.SUnionStore(ctx, "{g}u", "{g}a", "{g}b").Val())
	require.Equal(t, int64(2), rdb.SDiffStore(ctx, "{g}d", "{g}a", "{g}b").Val())
	require.ElementsMatch(t, []string{"w", "x"}, rdb.SMembers(ctx, "{g}d").Val())
	require.Equal(t, int64(0), rdb.SDiffStore(ctx, "{g}d", "{g}a", "{g}a").Val())
	require.Equal(t, int64(0), rdb.Exists(ctx, "{g}d").Val())

	require.True(t, rdb.SMove(ctx, "{g}a", "{g}b", "w").Val())
	require.False(t, rdb.SMove(ctx, "{g}a", "{g}b", "w").Val())
	require.True(t, rdb.SIsMember(ctx, "{g}b", "w").Val())
	require.Equal(t, int64(2), rdb.SRem(ctx, "{g}a", "x", "y", "nope").Val())
	require.Equal(t, int64(1), rdb.SRem(ctx, "{g}a", "z").Val())
	require.Equal(t, int64(0), rdb.Exists(ctx, "{g}a").Val(), "an emptied set is deleted")

	// Integer sets are listed in ascending order, as Redis's intset does.
	rdb.SAdd(ctx, "{g}n", 30, -2, 7, 1000, 0)
	require.Equal(t, []string{"-2", "0", "7", "30", "1000"}, rdb.SMembers(ctx, "{g}n").Val())
	require.Equal(t, "intset", rdb.ObjectEncoding(ctx, "{g}n").Val())
	rdb.SAdd(ctx, "{g}n", "x")
	require.Equal(t, "hashtable", rdb.ObjectEncoding(ctx, "{g}n").Val())
	require.Equal(t, "set", rdb.Type(ctx, "{g}n").Val())

	var all []string
	iter := rdb.SScan(ctx, "{g}u", 0, "", 2).Iterator()
	for iter.Next(ctx) {
		all = append(all, iter.Val())
	}
	require.NoError(t, iter.Err())
	require.ElementsMatch(t, []string{"w", "x", "y", "z", "q"}, all)

	// COPY duplicates the value; RENAME moves it.
	require.Equal(t, int64(1), rdb.Copy(ctx, "{g}u", "{g}u2", 0, false).Val())
	rdb.SAdd(ctx, "{g}u2", "extra")
	require.Equal(t, int64(5), rdb.SCard(ctx, "{g}u").Val())
	require.Equal(t, int64(6), rdb.SCard(ctx, "{g}u2").Val())
	require.NoError(t, rdb.Rename(ctx, "{g}u2", "{g}u3").Err())
	require.Equal(t, int64(6), rdb.SCard(ctx, "{g}u3").Val())
}

// szTestSetRandom checks the random commands by membership, as their exact
// replies cannot be compared.
func szTestSetRandom(t *testing.T, rdb *redis.Client) {
	ctx := context.Background()
	for _, size := range []int{10, 600} { // an intset and a hashtable
		key := fmt.Sprintf("{g}r%d", size)
		members := map[string]bool{}
		var args []any
		for i := 0; i < size; i++ {
			m := strconv.Itoa(i * 3)
			if size > 512 {
				m = "m" + m
			}
			members[m] = true
			args = append(args, m)
		}
		rdb.SAdd(ctx, key, args...)
		for _, count := range []int64{1, 3, int64(size/2 + 1), int64(size - 1), int64(size), int64(size + 5)} {
			got := rdb.SRandMemberN(ctx, key, count).Val()
			require.Len(t, got, int(min(count, int64(size))))
			seen := map[string]bool{}
			for _, m := range got {
				require.True(t, members[m], m)
				require.False(t, seen[m], "SRANDMEMBER with a positive count repeated %s", m)
				seen[m] = true
			}
		}
		got := rdb.SRandMemberN(ctx, key, -int64(3*size)).Val()
		require.Len(t, got, 3*size)
		for _, m := range got {
			require.True(t, members[m], m)
		}
		require.True(t, members[rdb.SRandMember(ctx, key).Val()])

		for _, count := range []int64{1, 3, int64(size / 2)} {
			popped := rdb.SPopN(ctx, key, count).Val()
			require.Len(t, popped, int(count))
			for _, m := range popped {
				require.True(t, members[m], "popped %s twice or never added", m)
				delete(members, m)
				require.False(t, rdb.SIsMember(ctx, key, m).Val())
			}
			require.Equal(t, int64(len(members)), rdb.SCard(ctx, key).Val())
		}
		m := rdb.SPop(ctx, key).Val()
		require.True(t, members[m])
		delete(members, m)
		rest := rdb.SPopN(ctx, key, int64(size)).Val()
		require.Len(t, rest, len(members))
		require.Equal(t, int64(0), rdb.Exists(ctx, key).Val())
	}
}

// szTestSetWatch checks which keys a set command marks as modified: only
// real changes, and for STORE commands only the destination.
func szTestSetWatch(t *testing.T, rdb *redis.Client) {
	t.Helper()
	ctx := context.Background()
	rdb.SAdd(ctx, "{w}src", "a", "b")
	rdb.SAdd(ctx, "{w}other", "b")
	other := szSecondClient(t, rdb)
	require.NoError(t, watchTx(rdb, "{w}src", func() { other.SAdd(ctx, "{w}src", "a") }), "adding a member again")
	require.NoError(t, watchTx(rdb, "{w}src", func() { other.SRem(ctx, "{w}src", "zz") }), "removing a non-member")
	require.NoError(t, watchTx(rdb, "{w}src", func() { other.SInterStore(ctx, "{w}dst", "{w}src", "{w}other") }),
		"a source of SINTERSTORE")
	require.ErrorIs(t, watchTx(rdb, "{w}dst", func() { other.SUnionStore(ctx, "{w}dst", "{w}src") }), redis.TxFailedErr)
	require.ErrorIs(t, watchTx(rdb, "{w}src", func() { other.SAdd(ctx, "{w}src", "c") }), redis.TxFailedErr)
	require.ErrorIs(t, watchTx(rdb, "{w}other", func() { other.SMove(ctx, "{w}src", "{w}other", "c") }), redis.TxFailedErr)
	require.NoError(t, watchTx(rdb, "{w}other", func() { other.SMove(ctx, "{w}src", "{w}other", "nope") }))
}

// szSecondClient is another client with rdb's options.
func szSecondClient(t *testing.T, rdb *redis.Client) *redis.Client {
	o := *rdb.Options()
	c := redis.NewClient(&o)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func szTestSetReplyTypes(t *testing.T, n *nodetest.Node) {
	for _, proto := range []int{2, 3} {
		sc := respDial(t, n.Addr, proto)
		sc.Do("DEL", "{t}s")
		setType := "*"
		null := "$-1\r\n"
		if proto == 3 {
			setType, null = "~", "_\r\n"
		}
		require.Equal(t, ":3\r\n", sc.Do("SADD", "{t}s", "3", "1", "2"))
		require.Equal(t, setType+"3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n", sc.Do("SMEMBERS", "{t}s"))
		require.Equal(t, setType+"0\r\n", sc.Do("SMEMBERS", "{t}none"))
		require.Equal(t, setType+"3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n", sc.Do("SINTER", "{t}s", "{t}s"))
		require.Equal(t, "*2\r\n:1\r\n:0\r\n", sc.Do("SMISMEMBER", "{t}s", "1", "9"))
		require.Equal(t, null, sc.Do("SPOP", "{t}none"))
		require.Equal(t, setType+"0\r\n", sc.Do("SPOP", "{t}none", "2"))
		require.Equal(t, null, sc.Do("SRANDMEMBER", "{t}none"))
		require.Equal(t, "*0\r\n", sc.Do("SRANDMEMBER", "{t}none", "2"))
		require.Equal(t, "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n", sc.Do("SRANDMEMBER", "{t}s", "5"))
		require.Equal(t, "*2\r\n$1\r\n0\r\n*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n", sc.Do("SSCAN", "{t}s", "0"))
		v := sc.V("SPOP", "{t}s", "2")
		require.Equal(t, setType[0], v.t)
		require.Len(t, v.kids, 2)
	}
}

func szTestSetErrors(t *testing.T, n *nodetest.Node) {
	sc := respDial(t, n.Addr, 2)
	require.Equal(t, "+OK\r\n", sc.Do("SET", "{e}str", "x"))
	sc.Do("SADD", "{e}set", "a")
	wrong := "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
	for _, cmd := range [][]string{
		{"SADD", "{e}str", "a"}, {"SREM", "{e}str", "a"}, {"SMEMBERS", "{e}str"}, {"SISMEMBER", "{e}str", "a"},
		{"SMISMEMBER", "{e}str", "a"}, {"SCARD", "{e}str"}, {"SPOP", "{e}str"}, {"SPOP", "{e}str", "1"},
		{"SRANDMEMBER", "{e}str"}, {"SRANDMEMBER", "{e}str", "-1"}, {"SMOVE", "{e}str", "{e}set", "a"},
		{"SMOVE", "{e}set", "{e}str", "a"}, {"SINTER", "{e}set", "{e}str"}, {"SINTERCARD", "2", "{e}set", "{e}str"},
		{"SUNION", "{e}str"}, {"SDIFF", "{e}set", "{e}str"}, {"SINTERSTORE", "{e}d", "{e}str"},
		{"SUNIONSTORE", "{e}d", "{e}str"}, {"SDIFFSTORE", "{e}d", "{e}str"}, {"SSCAN", "{e}str", "0"},
	} {
		assert.Equal(t, wrong, sc.Do(cmd...), "%v", cmd)
	}
	// Standalone: keys of two slots, as in Redis.
	assert.Equal(t, "*0\r\n", sc.Do("SINTER", "a", "b"))
	for _, cmd := range [][]string{{"SUNIONSTORE", "a", "b"}, {"SMOVE", "a", "b", "m"}, {"SINTERCARD", "2", "a", "b"}} {
		assert.Equal(t, ":0\r\n", sc.Do(cmd...), "%v", cmd)
	}
	assert.Equal(t, "-ERR wrong number of arguments for 'sadd' command\r\n", sc.Do("SADD", "k"))
	assert.Equal(t, "-ERR wrong number of arguments for 'smove' command\r\n", sc.Do("SMOVE", "a", "b"))
	assert.Equal(t, "-ERR numkeys should be greater than 0\r\n", sc.Do("SINTERCARD", "0", "a"))
}

// szTestSScanResizes grows and then shrinks a set while an SSCAN walks it:
// every member present throughout must be returned.
func szTestSScanResizes(t *testing.T, n *nodetest.Node) {
	ctx := context.Background()
	rdb := n.Client(t)
	var stable []any
	for i := 0; i < 700; i++ {
		stable = append(stable, fmt.Sprintf("s%d", i))
	}
	require.NoError(t, rdb.SAdd(ctx, "{x}set", stable...).Err())
	seen := map[string]bool{}
	cursor := uint64(0)
	step := 0
	for {
		keys, next, err := rdb.SScan(ctx, "{x}set", cursor, "", 20).Result()
		require.NoError(t, err)
		for _, k := range keys {
			seen[k] = true
		}
		cursor = next
		if cursor == 0 {
			break
		}
		var churn []any
		for i := 0; i < 100; i++ {
			churn = append(churn, fmt.Sprintf("c%d-%d", step, i))
		}
		if step < 20 {
			rdb.SAdd(ctx, "{x}set", churn...) // grow
		} else if step < 40 {
			for j := step - 20; j >= 0 && j > step-22; j-- {
				var old []any
				for i := 0; i < 100; i++ {
					old = append(old, fmt.Sprintf("c%d-%d", j, i))
				}
				rdb.SRem(ctx, "{x}set", old...) // shrink
			}
		}
		step++
	}
	for _, m := range stable {
		require.True(t, seen[m.(string)], "SSCAN missed %s", m)
	}
}

func szTestSetExpiry(t *testing.T, n *nodetest.Node) {
	ctx := context.Background()
	rdb := n.Client(t)
	rdb.SAdd(ctx, "{x}exp", "a", "b")
	require.True(t, rdb.PExpire(ctx, "{x}exp", 30*time.Millisecond).Val())
	nodetest.Eventually(t, 5*time.Second, func() bool { return rdb.SCard(ctx, "{x}exp").Val() == 0 },
		"the set expires")
	require.Equal(t, int64(1), rdb.SAdd(ctx, "{x}exp", "c").Val())
	require.Equal(t, []string{"c"}, rdb.SMembers(ctx, "{x}exp").Val())
	require.Equal(t, time.Duration(-1), rdb.TTL(ctx, "{x}exp").Val())
}
