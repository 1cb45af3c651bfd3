package cmdtest_test

import (
	"context"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// TestListsAndHashes runs the list and hash tests against one node with
// several shard actors; each part uses its own hash tag.
func TestListsAndHashes(t *testing.T) {
	n := shardsNode(t)
	for _, part := range []struct {
		name string
		fn   func(*testing.T, *nodetest.Node)
	}{
		{"ListsGoRedis", lhTestListsGoRedis},
		{"BigList", lhTestBigList},
		{"HashesGoRedis", lhTestHashesGoRedis},
		{"HRandField", lhTestHRandField},
		{"HScanBig", lhTestHScanBig},
		{"CrossSlot", lhTestCrossSlot},
		{"KeyCommands", lhTestKeyCommands},
		{"Expiry", lhTestExpiry},
		{"Watch", lhTestWatch},
	} {
		t.Run(part.name, func(t *testing.T) { part.fn(t, n) })
	}
}

func lhTestListsGoRedis(t *testing.T, n *nodetest.Node) {
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		c := n.Client(t, proto)
		k := func(s string) string { return "{lg" + strconv.Itoa(proto) + "}" + s }
		require.Equal(t, int64(3), c.RPush(ctx, k("l"), "a", "b", "c").Val())
		require.Equal(t, int64(5), c.LPush(ctx, k("l"), "y", "z").Val())
		assert.Equal(t, []string{"z", "y", "a", "b", "c"}, c.LRange(ctx, k("l"), 0, -1).Val())
		assert.Equal(t, int64(0), c.LPushX(ctx, k("none"), "x").Val())
		assert.Equal(t, int64(0), c.Exists(ctx, k("none")).Val())
		assert.Equal(t, "a", c.LIndex(ctx, k("l"), 2).Val())
		_, err := c.LIndex(ctx, k("l"), 99).Result()
		assert.Equal(t, redis.Nil, err)
		assert.Equal(t, "OK", c.LSet(ctx, k("l"), -1, "C").Val())
		assert.EqualError(t, c.LSet(ctx, k("l"), 99, "x").Err(), "ERR index out of range")
		assert.Equal(t, int64(6), c.LInsertBefore(ctx, k("l"), "a", "pre-a").Val())
		assert.Equal(t, int64(-1), c.LInsertAfter(ctx, k("l"), "nosuch", "x").Val())
		assert.Equal(t, int64(2), c.LPos(ctx, k("l"), "pre-a", redis.LPosArgs{}).Val())
		assert.Equal(t, []int64{2}, c.LPosCount(ctx, k("l"), "pre-a", 0, redis.LPosArgs{}).Val())
		assert.Equal(t, "z", c.LPop(ctx, k("l")).Val())
		assert.Equal(t, []string{"C", "b"}, c.RPopCount(ctx, k("l"), 2).Val())
		_, err = c.LPopCount(ctx, k("none"), 2).Result()
		assert.Equal(t, redis.Nil, err, "LPOP count on a missing key is a null array")
		assert.Equal(t, "a", c.LMove(ctx, k("l"), k("m"), "RIGHT", "LEFT").Val())
		assert.Equal(t, "pre-a", c.RPopLPush(ctx, k("l"), k("m")).Val())
		key, vals, err := c.LMPop(ctx, "left", 5, k("none"), k("m")).Result()
		require.NoError(t, err)
		assert.Equal(t, k("m"), key)
		assert.Equal(t, []string{"pre-a", "a"}, vals)
		_, _, err = c.LMPop(ctx, "left", 1, k("none"), k("m")).Result()
		assert.Equal(t, redis.Nil, err)
		assert.Equal(t, []string{"y"}, c.LRange(ctx, k("l"), 0, -1).Val())
		assert.Equal(t, int64(0), c.Exists(ctx, k("m")).Val(), "emptied lists are deleted")
		c.RPush(ctx, k("r"), "x", "a", "x", "b", "x")
		assert.Equal(t, int64(2), c.LRem(ctx, k("r"), -2, "x").Val())
		assert.Equal(t, []string{"x", "a", "b"}, c.LRange(ctx, k("r"), 0, -1).Val())
		assert.Equal(t, "OK", c.LTrim(ctx, k("r"), 1, 1).Val())
		assert.Equal(t, []string{"a"}, c.LRange(ctx, k("r"), 0, -1).Val())
		assert.Equal(t, "OK", c.LTrim(ctx, k("r"), 1, 0).Val())
		assert.Equal(t, int64(0), c.Exists(ctx, k("r")).Val())
		assert.Equal(t, int64(0), c.LLen(ctx, k("r")).Val())
	}
}

// lhTestBigList works on a list of many chunks through the wire.
func lhTestBigList(t *testing.T, n *nodetest.Node) {
	ctx := context.Background()
	c := n.Client(t)
	const total = 20000
	pipe := c.Pipeline()
	for i := 0; i < total; i += 1000 {
		vals := make([]any, 1000)
		for j := range vals {
			vals[j] = strconv.Itoa(i + j)
		}
		pipe.RPush(ctx, "{big}l", vals...)
	}
	_, err := pipe.Exec(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(total), c.LLen(ctx, "{big}l").Val())
	for _, i := range []int64{0, 1, 127, 128, 129, 9999, total - 1, -1, -128, -total} {
		want := i
		if want < 0 {
			want += total
		}
		assert.Equal(t, strconv.FormatInt(want, 10), c.LIndex(ctx, "{big}l", i).Val(), i)
	}
	assert.Equal(t, []string{"9998", "9999", "10000"}, c.LRange(ctx, "{big}l", 9998, 10000).Val())
	require.Equal(t, int64(total+1), c.LInsertBefore(ctx, "{big}l", "5000", "ins").Val())
	assert.Equal(t, "ins", c.LIndex(ctx, "{big}l", 5000).Val())
	assert.Equal(t, int64(5000), c.LPos(ctx, "{big}l", "ins", redis.LPosArgs{}).Val())
	require.Equal(t, int64(1), c.LRem(ctx, "{big}l", 0, "ins").Val())
	require.Equal(t, "OK", c.LTrim(ctx, "{big}l", 100, -101).Val())
	assert.Equal(t, int64(total-200), c.LLen(ctx, "{big}l").Val())
	assert.Equal(t, "100", c.LIndex(ctx, "{big}l", 0).Val())
	assert.Equal(t, strconv.Itoa(total-101), c.LIndex(ctx, "{big}l", -1).Val())
}

func lhTestHashesGoRedis(t *testing.T, n *nodetest.Node) {
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		c := n.Client(t, proto)
		k := func(s string) string { return "{hg" + strconv.Itoa(proto) + "}" + s }
		assert.Equal(t, int64(2), c.HSet(ctx, k("h"), "a", "1", "b", "2").Val())
		assert.Equal(t, int64(1), c.HSet(ctx, k("h"), "a", "10", "c", "3").Val())
		assert.True(t, c.HMSet(ctx, k("h"), "d", "4").Val())
		assert.Equal(t, map[string]string{"a": "10", "b": "2", "c": "3", "d": "4"}, c.HGetAll(ctx, k("h")).Val())
		assert.Equal(t, []string{"a", "b", "c", "d"}, c.HKeys(ctx, k("h")).Val(), "compact hashes keep insertion order")
		assert.Equal(t, []string{"10", "2", "3", "4"}, c.HVals(ctx, k("h")).Val())
		assert.Equal(t, []any{"10", nil, "3"}, c.HMGet(ctx, k("h"), "a", "nosuch", "c").Val())
		assert.Equal(t, "2", c.HGet(ctx, k("h"), "b").Val())
		_, err := c.HGet(ctx, k("h"), "nosuch").Result()
		assert.Equal(t, redis.Nil, err)
		assert.False(t, c.HSetNX(ctx, k("h"), "a", "x").Val())
		assert.True(t, c.HSetNX(ctx, k("h"), "e", "5").Val())
		assert.True(t, c.HExists(ctx, k("h"), "e").Val())
		assert.Equal(t, int64(5), c.HLen(ctx, k("h")).Val())
		assert.Equal(t, int64(2), c.HStrLen(ctx, k("h"), "a").Val())
		assert.Equal(t, int64(15), c.HIncrBy(ctx, k("h"), "a", 5).Val())
		assert.Equal(t, 15.5, c.HIncrByFloat(ctx, k("h"), "a", 0.5).Val())
		assert.EqualError(t, c.HIncrBy(ctx, k("h"), "a", 1).Err(), "ERR hash value is not an integer")
		assert.Equal(t, int64(2), c.HDel(ctx, k("h"), "a", "b", "nosuch").Val())
		assert.Equal(t, map[string]string{}, c.HGetAll(ctx, k("none")).Val())
		keys, cursor, err := c.HScan(ctx, k("h"), 0, "", 0).Result()
		require.NoError(t, err)
		assert.Zero(t, cursor)
		assert.Equal(t, []string{"c", "3", "d", "4", "e", "5"}, keys)
		assert.Equal(t, int64(3), c.HDel(ctx, k("h"), "c", "d", "e").Val())
		assert.Equal(t, int64(0), c.Exists(ctx, k("h")).Val(), "emptied hashes are deleted")
	}
}

// lhTestHRandField checks HRANDFIELD's membership and count rules on a
// compact and a converted hash, in both protocols.
func lhTestHRandField(t *testing.T, n *nodetest.Node) {
	ctx := context.Background()
	for _, size := range []int{5, 300} {
		for _, proto := range []int{2, 3} {
			c := n.Client(t, proto)
			key := "{hrf}" + strconv.Itoa(size)
			want := map[string]string{}
			for i := 0; i < size; i++ {
				want["f"+strconv.Itoa(i)] = "v" + strconv.Itoa(i)
			}
			require.NoError(t, c.HSet(ctx, key, want).Err())
			f := c.HRandField(ctx, key, 1).Val()
			require.Len(t, f, 1)
			assert.Contains(t, want, f[0])
			for _, count := range []int{1, 3, size - 1, size, size + 10} {
				got := c.HRandField(ctx, key, count).Val()
				assert.Len(t, got, min(count, size))
				seen := map[string]bool{}
				for _, f := range got {
					assert.Contains(t, want, f)
					assert.False(t, seen[f], "HRANDFIELD %d repeated %s", count, f)
					seen[f] = true
				}
				pairs := c.HRandFieldWithValues(ctx, key, count).Val()
				assert.Len(t, pairs, min(count, size))
				for _, p := range pairs {
					assert.Equal(t, want[p.Key], p.Value)
				}
			}
			got := c.HRandField(ctx, key, -size*3).Val()
			assert.Len(t, got, size*3, "negative counts return exactly -count fields")
			for _, f := range got {
				assert.Contains(t, want, f)
			}
			for _, p := range c.HRandFieldWithValues(ctx, key, -7).Val() {
				assert.Equal(t, want[p.Key], p.Value)
			}
		}
	}
}

// lhTestHScanBig iterates a converted hash with HSCAN while fields are
// added and removed between calls: every field present throughout must be
// returned, with its value.
func lhTestHScanBig(t *testing.T, n *nodetest.Node) {
	ctx := context.Background()
	c := n.Client(t)
	const key = "{hs}big"
	stable := map[string]any{}
	for i := 0; i < 1000; i++ {
		stable["s"+strconv.Itoa(i)] = "v" + strconv.Itoa(i)
	}
	require.NoError(t, c.HSet(ctx, key, stable).Err())
	require.Equal(t, "hashtable", c.ObjectEncoding(ctx, key).Val())
	seen := map[string]string{}
	cursor, step, extra := uint64(0), 0, 0
	for {
		kv, next, err := c.HScan(ctx, key, cursor, "", 20).Result()
		require.NoError(t, err)
		require.Zero(t, len(kv)%2)
		for i := 0; i < len(kv); i += 2 {
			seen[kv[i]] = kv[i+1]
		}
		if next == 0 {
			break
		}
		cursor = next
		step++
		switch {
		case step < 20:
			vals := make([]any, 0, 400)
			for j := 0; j < 200; j++ {
				vals = append(vals, "g"+strconv.Itoa(extra), "x")
				extra++
			}
			require.NoError(t, c.HSet(ctx, key, vals...).Err())
		case step < 40 && extra > 0:
			var del []string
			for j := 0; j < 300 && extra > 0; j++ {
				extra--
				del = append(del, "g"+strconv.Itoa(extra))
			}
			require.NoError(t, c.HDel(ctx, key, del...).Err())
		}
		require.Less(t, step, 100000)
	}
	for f, v := range stable {
		assert.Equal(t, v, seen[f], f)
	}
	// MATCH filters on the field.
	kv, _, err := c.HScan(ctx, key, 0, "s99*", 100000).Result()
	require.NoError(t, err)
	var fields []string
	for i := 0; i < len(kv); i += 2 {
		fields = append(fields, kv[i])
	}
	sort.Strings(fields)
	assert.Equal(t, []string{"s99", "s990", "s991", "s992", "s993", "s994", "s995", "s996", "s997", "s998", "s999"}, fields)
}

func lhTestCrossSlot(t *testing.T, n *nodetest.Node) {
	c := respDial(t, n.Addr, 2)
	// Standalone: keys of two slots, as in Redis.
	assert.Equal(t, "$-1\r\n", c.Do("LMOVE", "{a}x", "{b}x", "LEFT", "LEFT"))
	assert.Equal(t, "$-1\r\n", c.Do("RPOPLPUSH", "{a}x", "{b}x"))
	assert.Equal(t, "*-1\r\n", c.Do("LMPOP", "2", "{a}x", "{b}x", "LEFT"))
	// Invalid numkeys: no keys, so no slot check; the command's own error.
	assert.Equal(t, "-ERR numkeys should be greater than 0\r\n", c.Do("LMPOP", "0", "{a}x", "{b}x", "LEFT"))
	assert.Equal(t, "-ERR syntax error\r\n", c.Do("LMPOP", "5", "{a}x", "{b}x", "LEFT"))
}

// lhTestKeyCommands checks the hooks other commands use: TYPE, OBJECT
// ENCODING, COPY (deep copies) and RENAME.
func lhTestKeyCommands(t *testing.T, n *nodetest.Node) {
	ctx := context.Background()
	c := n.Client(t)
	c.RPush(ctx, "{kc}l", "a", "b")
	c.HSet(ctx, "{kc}h", "f", "v")
	assert.Equal(t, "list", c.Type(ctx, "{kc}l").Val())
	assert.Equal(t, "hash", c.Type(ctx, "{kc}h").Val())
	assert.Equal(t, "quicklist", c.ObjectEncoding(ctx, "{kc}l").Val())
	assert.Equal(t, "listpack", c.ObjectEncoding(ctx, "{kc}h").Val())
	require.True(t, c.Copy(ctx, "{kc}l", "{kc}l2", 0, false).Val() == 1)
	require.True(t, c.Copy(ctx, "{kc}h", "{kc}h2", 0, false).Val() == 1)
	c.RPush(ctx, "{kc}l2", "c")
	c.HSet(ctx, "{kc}h2", "g", "w")
	assert.Equal(t, []string{"a", "b"}, c.LRange(ctx, "{kc}l", 0, -1).Val(), "the copy is independent")
	assert.Equal(t, []string{"a", "b", "c"}, c.LRange(ctx, "{kc}l2", 0, -1).Val())
	assert.Equal(t, map[string]string{"f": "v"}, c.HGetAll(ctx, "{kc}h").Val())
	assert.Equal(t, "OK", c.Rename(ctx, "{kc}h2", "{kc}h3").Val())
	assert.Equal(t, map[string]string{"f": "v", "g": "w"}, c.HGetAll(ctx, "{kc}h3").Val())

	// Encodings follow hash-max-listpack-*, also when changed at run time.
	require.NoError(t, c.ConfigSet(ctx, "hash-max-listpack-entries", "2").Err())
	t.Cleanup(func() { c.ConfigSet(ctx, "hash-max-listpack-entries", "128") })
	c.HSet(ctx, "{kc}e", "a", "1", "b", "2")
	assert.Equal(t, "listpack", c.ObjectEncoding(ctx, "{kc}e").Val())
	c.HSet(ctx, "{kc}e", "c", "3")
	assert.Equal(t, "hashtable", c.ObjectEncoding(ctx, "{kc}e").Val())
	require.NoError(t, c.ConfigSet(ctx, "hash-max-listpack-value", "3").Err())
	t.Cleanup(func() { c.ConfigSet(ctx, "hash-max-listpack-value", "64") })
	c.HSet(ctx, "{kc}v", "a", "123")
	assert.Equal(t, "listpack", c.ObjectEncoding(ctx, "{kc}v").Val())
	c.HIncrBy(ctx, "{kc}v", "a", 1000)
	assert.Equal(t, "hashtable", c.ObjectEncoding(ctx, "{kc}v").Val())
}

func lhTestExpiry(t *testing.T, n *nodetest.Node) {
	ctx := context.Background()
	c := n.Client(t)
	c.RPush(ctx, "{ex}l", "a")
	c.HSet(ctx, "{ex}h", "f", "v")
	require.True(t, c.PExpire(ctx, "{ex}l", 20*time.Millisecond).Val())
	require.True(t, c.PExpire(ctx, "{ex}h", 20*time.Millisecond).Val())
	// A push to a live list keeps its TTL.
	c.RPush(ctx, "{ex}l", "b")
	assert.Positive(t, c.PTTL(ctx, "{ex}l").Val())
	nodetest.Eventually(t, 5*time.Second, func() bool {
		return c.LLen(ctx, "{ex}l").Val() == 0 && c.HLen(ctx, "{ex}h").Val() == 0
	}, "list and hash did not expire")
	// An expired key is a new, empty key to writers.
	assert.Equal(t, int64(1), c.RPush(ctx, "{ex}l", "c").Val())
	assert.Equal(t, time.Duration(-1), c.TTL(ctx, "{ex}l").Val())
}

// lhTestWatch checks that list and hash writes (including the destination
// of LMOVE and keys of LMPOP) abort transactions watching them.
func lhTestWatch(t *testing.T, n *nodetest.Node) {
	ctx := context.Background()
	c := n.Client(t)
	other := n.Client(t)
	c.RPush(ctx, "{w}src", "a", "b")
	for _, write := range []func(){
		func() { other.LMove(ctx, "{w}src", "{w}dst", "LEFT", "LEFT") },
		func() { other.LMPop(ctx, "left", 1, "{w}none", "{w}dst") },
		func() { other.HSet(ctx, "{w}dst", "f", "v") },
	} {
		err := c.Watch(ctx, func(tx *redis.Tx) error {
			write()
			_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Get(ctx, "{w}x")
				return nil
			})
			return err
		}, "{w}dst")
		assert.Equal(t, redis.TxFailedErr, err)
	}
}
