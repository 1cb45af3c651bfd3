package cmdtest_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/cmd/node/nodetest"
	"github.com/slotd/slotd/slots"
)

var keysCtx = context.Background()

// keysInShard runs fn inside the actor owning key's slot with a Call bound
// to that slot (so Create/Delete keep the node's key counts right), and
// waits for it.
func keysInShard(t *testing.T, n *nodetest.Node, key string, fn func(c *engine.Call)) {
	t.Helper()
	inShard(t, n, key, func(s *engine.Shard, slot int) {
		fn(&engine.Call{Slot: slot, Now: time.Now().UnixMilli(), S: s})
	})
}

// keysList is a stand-in value of another type, for TYPE / SCAN TYPE /
// COPY / OBJECT ENCODING.
type keysList struct{ items []string }

func (l *keysList) Clone() any       { return &keysList{items: append([]string(nil), l.items...)} }
func (l *keysList) Encoding() string { return "listpack" }

func keysPlantList(t *testing.T, n *nodetest.Node, key string, items ...string) {
	keysInShard(t, n, key, func(c *engine.Call) {
		require.Nil(t, c.LookupWrite([]byte(key)))
		e := c.Create([]byte(key), keyspace.KindList)
		e.Obj = &keysList{items: items}
	})
}

// keysCountsRight checks that the shared per-slot counts agree with DBSIZE.
func keysCountsRight(t *testing.T, n *nodetest.Node, rdb *redis.Client) {
	t.Helper()
	size, err := rdb.DBSize(keysCtx).Result()
	require.NoError(t, err)
	g := n.Shards
	var sum int64
	for s := 0; s < slots.NumSlots; s++ {
		c := g.SlotKeys(s)
		require.GreaterOrEqual(t, c, int64(0), "slot %d", s)
		sum += c
	}
	require.Equal(t, size, sum)
}

func keysForProtos(t *testing.T, n *nodetest.Node, fn func(t *testing.T, n *nodetest.Node, rdb *redis.Client)) {
	perProto(t, n, func(t *testing.T, rdb *redis.Client) { fn(t, n, rdb) })
}

// TestKeys runs the per-command tests against one node (a node takes a
// while to stop), each in RESP2 and RESP3 and starting from an empty db.
func TestKeys(t *testing.T) {
	n := shardsNode(t)
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, *nodetest.Node)
	}{
		{"DelExistsType", testKeysDelExistsType},
		{"Expire", testKeysExpire},
		{"RenameCopy", testKeysRenameCopy},
		{"Object", testKeysObject},
		{"Keys", testKeysKeys},
		{"DBSizeFlush", testKeysDBSizeFlush},
		{"RandomKey", testKeysRandomKey},
		{"ExpiredNeverReturned", testKeysExpiredNeverReturned},
		{"ActiveExpiry", testKeysActiveExpiry},
		{"ScanOptions", testKeysScanOptions},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, n) })
	}
}

func testKeysDelExistsType(t *testing.T, n *nodetest.Node) {
	keysForProtos(t, n, func(t *testing.T, n *nodetest.Node, rdb *redis.Client) {
		require.NoError(t, rdb.MSet(keysCtx, "{u}a", "1", "{u}b", "2", "{u}c", "3").Err())
		assert.Equal(t, int64(3), rdb.Exists(keysCtx, "{u}a", "{u}a", "{u}b", "{u}x").Val())
		assert.Equal(t, int64(2), rdb.Touch(keysCtx, "{u}a", "{u}b", "{u}x").Val())
		assert.Equal(t, "string", rdb.Type(keysCtx, "{u}a").Val())
		assert.Equal(t, "none", rdb.Type(keysCtx, "{u}x").Val())
		keysPlantList(t, n, "{u}l", "x")
		assert.Equal(t, "list", rdb.Type(keysCtx, "{u}l").Val())
		assert.Equal(t, int64(2), rdb.Del(keysCtx, "{u}a", "{u}b", "{u}a", "{u}x").Val())
		assert.Equal(t, int64(2), rdb.Unlink(keysCtx, "{u}c", "{u}l").Val())
		assert.Equal(t, int64(0), rdb.Exists(keysCtx, "{u}a", "{u}b", "{u}c", "{u}l").Val())
		// Outside cluster mode the loop splits DEL/UNLINK/EXISTS/TOUCH by
		// slot; RENAME and COPY run over keys of two slots, as in Redis.
		require.NoError(t, rdb.MSet(keysCtx, "a", "1", "b", "2", "c", "3").Err())
		assert.Equal(t, int64(3), rdb.Exists(keysCtx, "a", "b", "a", "nokey").Val())
		assert.Equal(t, int64(2), rdb.Touch(keysCtx, "a", "b", "nokey").Val())
		assert.Equal(t, int64(2), rdb.Del(keysCtx, "a", "b", "nokey").Val())
		assert.Equal(t, int64(1), rdb.Unlink(keysCtx, "a", "b", "c").Val())
		for _, cmd := range [][]any{{"rename", "a", "b"}, {"renamenx", "a", "b"}} {
			assert.EqualError(t, rdb.Do(keysCtx, cmd...).Err(), "ERR no such key", cmd[0])
		}
		assert.Equal(t, int64(0), rdb.Copy(keysCtx, "a", "b", 0, false).Val())
		keysCountsRight(t, n, rdb)
	})
}

func testKeysExpire(t *testing.T, n *nodetest.Node) {
	keysForProtos(t, n, func(t *testing.T, n *nodetest.Node, rdb *redis.Client) {
		require.NoError(t, rdb.Set(keysCtx, "k", "v", 0).Err())
		assert.True(t, rdb.Expire(keysCtx, "k", 100*time.Second).Val())
		pttl := rdb.PTTL(keysCtx, "k").Val()
		assert.True(t, pttl > 99*time.Second && pttl <= 100*time.Second, pttl)
		assert.Equal(t, 100*time.Second, rdb.TTL(keysCtx, "k").Val())

		// PEXPIRE: the TTL in ms; EXPIRETIME/PEXPIRETIME: absolute.
		before := time.Now().UnixMilli()
		assert.True(t, rdb.PExpire(keysCtx, "k", 5700*time.Millisecond).Val())
		after := time.Now().UnixMilli()
		at := rdb.PExpireTime(keysCtx, "k").Val().Milliseconds()
		assert.True(t, at >= before+5700 && at <= after+5700, at)
		assert.Equal(t, (at+500)/1000, int64(rdb.ExpireTime(keysCtx, "k").Val()/time.Second))
		assert.Equal(t, 6*time.Second, rdb.TTL(keysCtx, "k").Val()) // 5.7 s rounds up

		// EXPIREAT / PEXPIREAT take absolute times.
		assert.True(t, rdb.ExpireAt(keysCtx, "k", time.Unix(4102444800, 0)).Val())
		assert.Equal(t, 4102444800*time.Second, rdb.ExpireTime(keysCtx, "k").Val())
		require.Equal(t, int64(1), rdb.Do(keysCtx, "pexpireat", "k", "4102444800999").Val())
		assert.Equal(t, int64(4102444800999), rdb.Do(keysCtx, "pexpiretime", "k").Val())
		assert.Equal(t, int64(4102444801), rdb.Do(keysCtx, "expiretime", "k").Val(), "rounded to the nearest second")

		// NX / XX / GT / LT.
		assert.False(t, rdb.ExpireNX(keysCtx, "k", time.Hour).Val())
		assert.True(t, rdb.ExpireXX(keysCtx, "k", time.Hour).Val())
		assert.False(t, rdb.ExpireGT(keysCtx, "k", time.Minute).Val())
		assert.True(t, rdb.ExpireGT(keysCtx, "k", 2*time.Hour).Val())
		assert.False(t, rdb.ExpireLT(keysCtx, "k", 3*time.Hour).Val())
		assert.True(t, rdb.ExpireLT(keysCtx, "k", time.Minute).Val())
		assert.Equal(t, time.Minute, rdb.TTL(keysCtx, "k").Val())

		// PERSIST, then the options against a key without TTL: GT treats
		// "no TTL" as infinite and fails, LT succeeds.
		assert.True(t, rdb.Persist(keysCtx, "k").Val())
		assert.False(t, rdb.Persist(keysCtx, "k").Val())
		assert.Equal(t, time.Duration(-1), rdb.TTL(keysCtx, "k").Val())
		assert.Equal(t, int64(-1), rdb.Do(keysCtx, "expiretime", "k").Val())
		assert.False(t, rdb.ExpireXX(keysCtx, "k", time.Hour).Val())
		assert.False(t, rdb.ExpireGT(keysCtx, "k", time.Hour).Val())
		assert.True(t, rdb.ExpireLT(keysCtx, "k", time.Hour).Val())
		assert.True(t, rdb.Persist(keysCtx, "k").Val())
		assert.True(t, rdb.ExpireNX(keysCtx, "k", time.Hour).Val())

		// Missing keys.
		assert.False(t, rdb.Expire(keysCtx, "nokey", time.Hour).Val())
		assert.Equal(t, time.Duration(-2), rdb.TTL(keysCtx, "nokey").Val())
		assert.Equal(t, time.Duration(-2), rdb.PTTL(keysCtx, "nokey").Val())
		assert.Equal(t, int64(-2), rdb.Do(keysCtx, "pexpiretime", "nokey").Val())

		// A time in the past deletes the key and reports success.
		for _, cmd := range [][]any{{"expire", "k", "-1"}, {"pexpire", "k", "0"}, {"expireat", "k", "1"},
			{"pexpireat", "k", strconv.FormatInt(time.Now().UnixMilli()-1, 10)}} {
			require.NoError(t, rdb.Set(keysCtx, "k", "v", 0).Err())
			assert.Equal(t, int64(1), rdb.Do(keysCtx, cmd...).Val(), cmd)
			assert.Equal(t, int64(0), rdb.Exists(keysCtx, "k").Val(), cmd)
		}

		// Errors.
		require.NoError(t, rdb.Set(keysCtx, "k", "v", 0).Err())
		for cmd, msg := range map[string]string{
			"expire k 10 nx xx":             "ERR NX and XX, GT or LT options at the same time are not compatible",
			"expire k 10 nx lt":             "ERR NX and XX, GT or LT options at the same time are not compatible",
			"pexpire k 10 gt lt":            "ERR GT and LT options at the same time are not compatible",
			"expireat k 10 bogus":           "ERR Unsupported option bogus",
			"expire k 1e3":                  "ERR value is not an integer or out of range",
			"expire k 9223372036854776":     "ERR invalid expire time in 'expire' command",
			"pexpire k 9223372036854775807": "ERR invalid expire time in 'pexpire' command",
			"expireat k -9223372036854776":  "ERR invalid expire time in 'expireat' command",
			"ttl":                           "ERR wrong number of arguments for 'ttl' command",
			"expire k":                      "ERR wrong number of arguments for 'expire' command",
		} {
			assert.EqualError(t, rdb.Do(keysCtx, keysArgs(cmd)...).Err(), msg, cmd)
		}
		keysCountsRight(t, n, rdb)
	})
}

func keysArgs(line string) []any {
	var out []any
	start := -1
	for i := 0; i <= len(line); i++ {
		if i == len(line) || line[i] == ' ' {
			if start >= 0 {
				out = append(out, line[start:i])
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	return out
}

func testKeysRenameCopy(t *testing.T, n *nodetest.Node) {
	keysForProtos(t, n, func(t *testing.T, n *nodetest.Node, rdb *redis.Client) {
		require.NoError(t, rdb.Set(keysCtx, "{r}a", "va", time.Hour).Err())
		require.NoError(t, rdb.Set(keysCtx, "{r}b", "vb", 0).Err())
		require.NoError(t, rdb.Rename(keysCtx, "{r}a", "{r}b").Err())
		assert.Equal(t, "va", rdb.Get(keysCtx, "{r}b").Val())
		assert.Equal(t, time.Hour, rdb.TTL(keysCtx, "{r}b").Val(), "the TTL moves with the value")
		assert.Equal(t, int64(0), rdb.Exists(keysCtx, "{r}a").Val())
		assert.EqualError(t, rdb.Rename(keysCtx, "{r}a", "{r}c").Err(), "ERR no such key")
		assert.EqualError(t, rdb.RenameNX(keysCtx, "{r}a", "{r}c").Err(), "ERR no such key")
		require.NoError(t, rdb.Rename(keysCtx, "{r}b", "{r}b").Err())
		assert.False(t, rdb.RenameNX(keysCtx, "{r}b", "{r}b").Val())

		require.NoError(t, rdb.Set(keysCtx, "{r}c", "vc", 0).Err())
		assert.False(t, rdb.RenameNX(keysCtx, "{r}b", "{r}c").Val())
		assert.True(t, rdb.RenameNX(keysCtx, "{r}b", "{r}d").Val())
		assert.Equal(t, "va", rdb.Get(keysCtx, "{r}d").Val())

		// COPY: value and TTL, REPLACE, independent afterwards.
		assert.True(t, rdb.Copy(keysCtx, "{r}d", "{r}e", 0, false).Val() == 1)
		assert.Equal(t, "va", rdb.Get(keysCtx, "{r}e").Val())
		assert.Equal(t, time.Hour, rdb.TTL(keysCtx, "{r}e").Val())
		assert.Equal(t, int64(0), rdb.Copy(keysCtx, "{r}c", "{r}e", 0, false).Val())
		assert.Equal(t, int64(1), rdb.Copy(keysCtx, "{r}c", "{r}e", 0, true).Val())
		assert.Equal(t, "vc", rdb.Get(keysCtx, "{r}e").Val())
		assert.Equal(t, time.Duration(-1), rdb.TTL(keysCtx, "{r}e").Val(), "REPLACE drops the old TTL")
		require.NoError(t, rdb.Append(keysCtx, "{r}e", "!").Err())
		assert.Equal(t, "vc", rdb.Get(keysCtx, "{r}c").Val(), "the copy shares no bytes with the source")
		assert.Equal(t, int64(0), rdb.Copy(keysCtx, "{r}none", "{r}e", 0, true).Val())
		assert.EqualError(t, rdb.Copy(keysCtx, "{r}c", "{r}c", 0, true).Err(), "ERR source and destination objects are the same")
		// Standalone: COPY ... DB copies into another database.
		assert.Equal(t, int64(1), rdb.Copy(keysCtx, "{r}c", "{r}f", 3, false).Val())
		assert.Equal(t, int64(0), rdb.Exists(keysCtx, "{r}f").Val())
		in3 := rdb.Conn()
		require.NoError(t, in3.Select(keysCtx, 3).Err())
		assert.Equal(t, "vc", in3.Get(keysCtx, "{r}f").Val())
		assert.Equal(t, int64(1), in3.Del(keysCtx, "{r}f").Val())
		require.NoError(t, in3.Select(keysCtx, 0).Err()) // Close puts it back in the pool
		require.NoError(t, in3.Close())
		assert.EqualError(t, rdb.Copy(keysCtx, "{r}c", "{r}f", 16, false).Err(), "ERR DB index is out of range")

		// Values of other types are cloned through engine.Cloner, and rename
		// keeps them.
		keysPlantList(t, n, "{r}l", "x", "y")
		assert.Equal(t, int64(1), rdb.Copy(keysCtx, "{r}l", "{r}l2", 0, false).Val())
		require.NoError(t, rdb.Rename(keysCtx, "{r}l2", "{r}l3").Err())
		assert.Equal(t, "list", rdb.Type(keysCtx, "{r}l3").Val())
		assert.Equal(t, "listpack", rdb.ObjectEncoding(keysCtx, "{r}l3").Val())
		keysInShard(t, n, "{r}l", func(c *engine.Call) {
			src := c.Lookup([]byte("{r}l")).Obj.(*keysList)
			dst := c.Lookup([]byte("{r}l3")).Obj.(*keysList)
			require.Equal(t, src.items, dst.items)
			dst.items[0] = "changed"
			require.Equal(t, "x", src.items[0])
		})
		keysCountsRight(t, n, rdb)
	})
}

func testKeysObject(t *testing.T, n *nodetest.Node) {
	keysForProtos(t, n, func(t *testing.T, n *nodetest.Node, rdb *redis.Client) {
		for val, enc := range map[string]string{"12": "int", "-9223372036854775808": "int", "012": "embstr",
			"9223372036854775808": "embstr", "abc": "embstr", string(make([]byte, 44)): "embstr",
			string(make([]byte, 45)): "raw"} {
			require.NoError(t, rdb.Set(keysCtx, "o", val, 0).Err())
			assert.Equal(t, enc, rdb.ObjectEncoding(keysCtx, "o").Val(), val)
		}
		require.NoError(t, rdb.Set(keysCtx, "o", "5", 0).Err())
		assert.Equal(t, int64(2147483647), rdb.ObjectRefCount(keysCtx, "o").Val())
		require.NoError(t, rdb.Set(keysCtx, "o", "50000", 0).Err())
		assert.Equal(t, int64(1), rdb.ObjectRefCount(keysCtx, "o").Val())
		assert.Equal(t, time.Duration(0), rdb.ObjectIdleTime(keysCtx, "o").Val())
		assert.ErrorContains(t, rdb.ObjectFreq(keysCtx, "o").Err(), "ERR An LFU maxmemory policy is not selected")
		assert.Equal(t, redis.Nil, rdb.ObjectEncoding(keysCtx, "nokey").Err())
		assert.Equal(t, redis.Nil, rdb.ObjectRefCount(keysCtx, "nokey").Err())
		assert.EqualError(t, rdb.Do(keysCtx, "object", "nope", "o").Err(), "ERR unknown subcommand 'nope'. Try OBJECT HELP.")
		help, err := rdb.Do(keysCtx, "object", "help").StringSlice()
		require.NoError(t, err)
		assert.Len(t, help, 15)
		assert.Equal(t, "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", help[0])

		require.NoError(t, rdb.ConfigSet(keysCtx, "maxmemory-policy", "allkeys-lfu").Err())
		require.NoError(t, rdb.Del(keysCtx, "o").Err())
		require.NoError(t, rdb.Set(keysCtx, "o", "50000", 0).Err())
		assert.Equal(t, int64(5), rdb.ObjectFreq(keysCtx, "o").Val()) // Redis's LFU_INIT_VAL, OBJECT does not count
		assert.ErrorContains(t, rdb.ObjectIdleTime(keysCtx, "o").Err(), "ERR An LFU maxmemory policy is selected, idle time not tracked.")
		require.NoError(t, rdb.ConfigSet(keysCtx, "maxmemory-policy", "noeviction").Err())
	})
}

func testKeysKeys(t *testing.T, n *nodetest.Node) {
	keysForProtos(t, n, func(t *testing.T, n *nodetest.Node, rdb *redis.Client) {
		var all []string
		for i := 0; i < 300; i++ {
			all = append(all, "key:"+strconv.Itoa(i))
		}
		for i := 0; i < 20; i++ {
			all = append(all, "{tag}"+strconv.Itoa(i))
		}
		all = append(all, "")
		for _, k := range all {
			require.NoError(t, rdb.Set(keysCtx, k, "v", 0).Err())
		}
		assert.ElementsMatch(t, all, rdb.Keys(keysCtx, "*").Val(), "'*' includes the empty key")
		assert.ElementsMatch(t, all[:300], rdb.Keys(keysCtx, "key:*").Val())
		assert.ElementsMatch(t, []string{"key:10", "key:11", "key:12", "key:13", "key:14", "key:15",
			"key:16", "key:17", "key:18", "key:19"}, rdb.Keys(keysCtx, "key:1?").Val())
		assert.ElementsMatch(t, all[300:320], rdb.Keys(keysCtx, "{tag}*").Val())
		assert.ElementsMatch(t, []string{"{tag}1", "{tag}10", "{tag}11", "{tag}12", "{tag}13", "{tag}14",
			"{tag}15", "{tag}16", "{tag}17", "{tag}18", "{tag}19"}, rdb.Keys(keysCtx, "{tag}1*").Val())
		assert.Equal(t, []string{"key:7"}, rdb.Keys(keysCtx, "key:7").Val())
		assert.Equal(t, []string{""}, rdb.Keys(keysCtx, "").Val())
		assert.Empty(t, rdb.Keys(keysCtx, "nomatch").Val())
		assert.ElementsMatch(t, []string{"key:5"}, rdb.Keys(keysCtx, "[kK]ey:5").Val())
	})
}

func testKeysDBSizeFlush(t *testing.T, n *nodetest.Node) {
	keysForProtos(t, n, func(t *testing.T, n *nodetest.Node, rdb *redis.Client) {
		assert.Equal(t, int64(0), rdb.DBSize(keysCtx).Val())
		pipe := rdb.Pipeline()
		for i := 0; i < 2000; i++ {
			pipe.Set(keysCtx, "k"+strconv.Itoa(i), "v", 0)
		}
		// DBSIZE in the same pipeline sees every earlier write.
		size := pipe.DBSize(keysCtx)
		_, err := pipe.Exec(keysCtx)
		require.NoError(t, err)
		assert.Equal(t, int64(2000), size.Val())
		keysCountsRight(t, n, rdb)
		for _, cmd := range [][]any{{"flushall"}, {"flushall", "async"}, {"flushdb", "SYNC"}, {"flushdb"}} {
			require.NoError(t, rdb.Set(keysCtx, "x", "1", 0).Err())
			require.NoError(t, rdb.Do(keysCtx, cmd...).Err())
			assert.Equal(t, int64(0), rdb.DBSize(keysCtx).Val())
			keysCountsRight(t, n, rdb)
		}
		require.NoError(t, rdb.Set(keysCtx, "x", "1", 0).Err())
		assert.EqualError(t, rdb.Do(keysCtx, "flushall", "now").Err(), "ERR syntax error")
		assert.Equal(t, int64(1), rdb.DBSize(keysCtx).Val(), "a rejected FLUSHALL flushes nothing")
	})
}

func testKeysRandomKey(t *testing.T, n *nodetest.Node) {
	keysForProtos(t, n, func(t *testing.T, n *nodetest.Node, rdb *redis.Client) {
		assert.Equal(t, redis.Nil, rdb.RandomKey(keysCtx).Err())
		// 40 keys in distinct slots, 28 of them in shard 0's slots and 4 in
		// each other shard's: every key should come up equally often, which
		// needs the merge to weight shards by their key counts.
		want := map[int]int{0: 28, 1: 4, 2: 4, 3: 4}
		usedSlots := map[int]bool{}
		var keys []string
		for i := 0; len(keys) < 40; i++ {
			k := "r" + strconv.Itoa(i)
			slot := slots.HashSlotString(k)
			sh := n.Shards.Of(slot)
			if usedSlots[slot] || want[sh] == 0 {
				continue
			}
			usedSlots[slot] = true
			want[sh]--
			keys = append(keys, k)
		}
		for _, k := range keys {
			require.NoError(t, rdb.Set(keysCtx, k, "v", 0).Err())
		}
		const draws = 8000
		pipe := rdb.Pipeline()
		cmds := make([]*redis.StringCmd, draws)
		for i := range cmds {
			cmds[i] = pipe.RandomKey(keysCtx)
		}
		_, err := pipe.Exec(keysCtx)
		require.NoError(t, err)
		counts := map[string]int{}
		for _, c := range cmds {
			counts[c.Val()]++
		}
		require.Len(t, counts, len(keys))
		for _, k := range keys {
			// Expected 200 each (sd 14); picking shards uniformly would give
			// shard 0's keys about 70 and the others 500.
			assert.Greater(t, counts[k], 120, k)
			assert.Less(t, counts[k], 290, k)
		}
	})
}

// TestKeysExpiredNeverReturned plants keys whose TTL has already passed
// (as if active expiry had not reached them yet) and checks that no command
// reports them, and that they are gone afterwards with the counts right.
func testKeysExpiredNeverReturned(t *testing.T, n *nodetest.Node) {
	keysForProtos(t, n, func(t *testing.T, n *nodetest.Node, rdb *redis.Client) {
		live := []string{"live1", "live2", "{e}live"}
		for _, k := range live {
			require.NoError(t, rdb.Set(keysCtx, k, "v", 0).Err())
		}
		var dead []string
		for i := 0; i < 50; i++ {
			k := "dead" + strconv.Itoa(i)
			if i%5 == 0 {
				k = "{e}dead" + strconv.Itoa(i)
			}
			dead = append(dead, k)
			keysInShard(t, n, k, func(c *engine.Call) {
				e := c.Create([]byte(k), keyspace.KindString)
				e.Str = []byte("x")
				c.SetExpire(e, c.Now-1)
			})
		}
		assert.ElementsMatch(t, live, rdb.Keys(keysCtx, "*").Val())
		assert.Empty(t, rdb.Keys(keysCtx, "{e}dead*").Val())
		assert.Empty(t, rdb.Keys(keysCtx, "dead1").Val())
		kc := respDial(t, n.Addr, 2)
		seen := keysScanAll(t, kc, "COUNT", "3")
		for _, k := range dead {
			assert.NotContains(t, seen, k)
		}
		for _, k := range live {
			assert.Contains(t, seen, k)
		}
		for i := 0; i < 50; i++ {
			assert.Contains(t, live, rdb.RandomKey(keysCtx).Val())
		}
		assert.Equal(t, int64(0), rdb.Exists(keysCtx, dead[1]).Val())
		assert.Equal(t, time.Duration(-2), rdb.TTL(keysCtx, dead[2]).Val())
		assert.Equal(t, "none", rdb.Type(keysCtx, dead[3]).Val())
		assert.False(t, rdb.Persist(keysCtx, dead[4]).Val())
		assert.EqualError(t, rdb.Rename(keysCtx, "{e}dead0", "{e}x").Err(), "ERR no such key")
		assert.Equal(t, int64(0), rdb.Copy(keysCtx, "{e}dead5", "{e}x", 0, false).Val())
		nodetest.Eventually(t, 5*time.Second, func() bool { return rdb.DBSize(keysCtx).Val() == int64(len(live)) },
			"expired keys are removed")
		keysCountsRight(t, n, rdb)
	})
}

// TestKeysActiveExpiry: keys with a TTL disappear without being accessed.
func testKeysActiveExpiry(t *testing.T, n *nodetest.Node) {
	keysForProtos(t, n, func(t *testing.T, n *nodetest.Node, rdb *redis.Client) {
		pipe := rdb.Pipeline()
		for i := 0; i < 500; i++ {
			pipe.Set(keysCtx, "t"+strconv.Itoa(i), "v", 30*time.Millisecond)
			pipe.Set(keysCtx, "p"+strconv.Itoa(i), "v", 0)
			pipe.PExpire(keysCtx, "p"+strconv.Itoa(i), 40*time.Millisecond)
		}
		pipe.Set(keysCtx, "keep", "v", time.Hour)
		_, err := pipe.Exec(keysCtx)
		require.NoError(t, err)
		nodetest.Eventually(t, 5*time.Second, func() bool { return rdb.DBSize(keysCtx).Val() == 1 },
			"expired keys were not removed by active expiry")
		keysCountsRight(t, n, rdb)
	})
}

func testKeysScanOptions(t *testing.T, n *nodetest.Node) {
	keysForProtos(t, n, func(t *testing.T, n *nodetest.Node, rdb *redis.Client) {
		var plain, tagged []string
		for i := 0; i < 400; i++ {
			plain = append(plain, "s:"+strconv.Itoa(i))
		}
		for i := 0; i < 100; i++ {
			tagged = append(tagged, "{grp}"+strconv.Itoa(i))
		}
		for _, k := range append(append([]string{}, plain...), tagged...) {
			require.NoError(t, rdb.Set(keysCtx, k, "v", 0).Err())
		}
		keysPlantList(t, n, "alist")
		kc := respDial(t, n.Addr, 2)
		keysOf := func(m map[string]int) []string {
			var out []string
			for k := range m {
				out = append(out, k)
			}
			return out
		}
		all := append(append([]string{"alist"}, plain...), tagged...)
		assert.ElementsMatch(t, all, keysOf(keysScanAll(t, kc)))
		assert.ElementsMatch(t, all, keysOf(keysScanAll(t, kc, "MATCH", "*", "COUNT", "1000")))
		assert.ElementsMatch(t, plain, keysOf(keysScanAll(t, kc, "MATCH", "s:*", "COUNT", "7")))
		assert.ElementsMatch(t, []string{"alist"}, keysOf(keysScanAll(t, kc, "TYPE", "list")))
		assert.ElementsMatch(t, []string{"alist"}, keysOf(keysScanAll(t, kc, "type", "LIST", "count", "100")))
		assert.ElementsMatch(t, all[1:], keysOf(keysScanAll(t, kc, "TYPE", "string")))
		assert.Empty(t, keysScanAll(t, kc, "TYPE", "zset"))

		// A pattern confined to one slot is answered from that slot alone:
		// even the first call returns a cursor inside it (or 0).
		slot := slots.HashSlotString("grp")
		assert.ElementsMatch(t, tagged, keysOf(keysScanAll(t, kc, "MATCH", "{grp}*", "COUNT", "5")))
		cursor := "0"
		for {
			res, err := rdb.Do(keysCtx, "scan", cursor, "match", "{grp}1*", "count", "5").Slice()
			require.NoError(t, err)
			cursor = res[0].(string)
			if cursor == "0" {
				break
			}
			c, err := strconv.ParseUint(cursor, 10, 64)
			require.NoError(t, err)
			assert.Equal(t, uint64(slot), c&(1<<14-1))
		}
		assert.ElementsMatch(t, []string{"s:42"}, keysOf(keysScanAll(t, kc, "MATCH", "s:42")))

		// go-redis's own iterator.
		var got []string
		it := rdb.Scan(keysCtx, 0, "s:1*", 20).Iterator()
		for it.Next(keysCtx) {
			got = append(got, it.Val())
		}
		require.NoError(t, it.Err())
		assert.Len(t, got, 111)

		// Cursor forms Redis accepts: "" is 0, signs are allowed.
		for _, cur := range []string{"", "+0", "-0", "-1", "18446744073709551615"} {
			res, err := rdb.Do(keysCtx, "scan", cur).Slice()
			require.NoError(t, err, cur)
			require.Len(t, res, 2)
		}
		for _, cur := range []string{"abc", " 0", "0 ", "1.0", "-", "18446744073709551616", "0x10"} {
			assert.EqualError(t, rdb.Do(keysCtx, "scan", cur).Err(), "ERR invalid cursor", cur)
		}
		assert.EqualError(t, rdb.Do(keysCtx, "scan", "0", "count", "0").Err(), "ERR syntax error")
		assert.EqualError(t, rdb.Do(keysCtx, "scan", "0", "count", "x").Err(), "ERR value is not an integer or out of range")
		assert.EqualError(t, rdb.Do(keysCtx, "scan", "0", "match").Err(), "ERR syntax error")
		assert.EqualError(t, rdb.Do(keysCtx, "scan", "0", "bogus", "1").Err(), "ERR syntax error")
		assert.EqualError(t, rdb.Do(keysCtx, "scan").Err(), "ERR wrong number of arguments for 'scan' command")
	})
}

// TestKeysScanGuarantee: every key present for the whole scan is returned
// at least once, with thousands of keys over many slots and all shards,
// while other keys are added and removed (growing and shrinking the slot
// tables), and no call does much more than COUNT entries of work.
func TestKeysScanGuarantee(t *testing.T) {
	n := shardsNode(t)
	rdb := n.Client(t)
	const stable = 4000
	pipe := rdb.Pipeline()
	stableKey := func(i int) string {
		if i%40 == 0 {
			return "{hot}stable:" + strconv.Itoa(i) // 100 keys in one slot
		}
		return "stable:" + strconv.Itoa(i)
	}
	for i := 0; i < stable; i++ {
		pipe.Set(keysCtx, stableKey(i), "v", 0)
	}
	_, err := pipe.Exec(keysCtx)
	require.NoError(t, err)

	// Churn: waves of keys added and deleted across all slots.
	var stop atomic.Bool
	var wg sync.WaitGroup
	churner := n.Client(t, 2)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for wave := 0; !stop.Load(); wave++ {
			// Add 300 keys and remove those added three waves ago; fill
			// the hot slot with 2000 more keys and empty it again, so its
			// table grows and shrinks under the scan.
			p := churner.Pipeline()
			for i := 0; i < 300; i++ {
				p.Set(keysCtx, fmt.Sprintf("churn:%d:%d", wave, i), "v", 0)
				p.Del(keysCtx, fmt.Sprintf("churn:%d:%d", wave-3, i))
			}
			for i := 0; i < 2000; i++ {
				if k := fmt.Sprintf("{hot}churn:%d", i); wave%2 == 0 {
					p.Set(keysCtx, k, "v", 0)
				} else {
					p.Del(keysCtx, k)
				}
			}
			if _, err := p.Exec(keysCtx); err != nil && !stop.Load() {
				t.Error(err)
				return
			}
		}
	}()
	defer func() {
		stop.Store(true)
		wg.Wait()
	}()

	for _, pc := range [][2]int{{2, 3}, {2, 50}, {3, 10}, {3, 200}} {
		proto, count := pc[0], pc[1]
		{
			kc := respDial(t, n.Addr, proto)
			seen := map[string]bool{}
			steps, errReply := respScan(t, kc, []string{"SCAN"}, "COUNT", strconv.Itoa(count))
			require.Empty(t, errReply)
			for _, ks := range steps {
				// A bucket chain may overshoot COUNT a little, never a lot.
				require.LessOrEqual(t, len(ks), count+16)
				for _, key := range ks {
					seen[key] = true
				}
			}
			calls := len(steps)
			t.Logf("RESP%d COUNT %d: %d calls, %d keys", proto, count, calls, len(seen))
			for i := 0; i < stable; i++ {
				require.True(t, seen[stableKey(i)], "RESP%d COUNT %d missed %s", proto, count, stableKey(i))
			}
			for k := range seen {
				require.Regexp(t, `^(\{hot\})?(stable|churn):`, k)
			}
			// Roughly one call per COUNT keys plus a few actor hand-overs.
			total := len(seen)
			assert.LessOrEqual(t, calls, 3*total/count+4*n.Shards.N()+10,
				"RESP%d COUNT %d: %d calls for %d keys", proto, count, calls, total)
		}
	}
}

// TestKeysClusterMode: in cluster mode multi-key commands need one slot
// (no splitting), and the keyless commands still see every key.
func TestKeysClusterMode(t *testing.T) {
	n := nodetest.Start(t, "cluster-enabled", "yes", "shard-actors", "4")
	rdb := n.Client(t)
	require.NoError(t, rdb.Do(keysCtx, "cluster", "addslotsrange", "0", "16383").Err())
	nodetest.Eventually(t, 5*time.Second, func() bool {
		info, _ := rdb.ClusterInfo(keysCtx).Result()
		return strings.Contains(info, "cluster_state:ok")
	}, "cluster_state:ok")
	var keys []string
	for i := 0; i < 200; i++ {
		keys = append(keys, "c"+strconv.Itoa(i))
		require.NoError(t, rdb.Set(keysCtx, keys[i], "v", 0).Err())
	}
	for _, cmd := range []string{"del", "unlink", "exists", "touch", "rename", "renamenx", "copy"} {
		assert.EqualError(t, rdb.Do(keysCtx, cmd, "c1", "c2").Err(), "CROSSSLOT Keys in request don't hash to the same slot", cmd)
	}
	assert.Equal(t, int64(200), rdb.DBSize(keysCtx).Val())
	assert.ElementsMatch(t, keys, rdb.Keys(keysCtx, "*").Val())
	kc := respDial(t, n.Addr, 3)
	seen := keysScanAll(t, kc, "COUNT", "7")
	assert.Len(t, seen, 200)
	assert.Contains(t, keys, rdb.RandomKey(keysCtx).Val())
	require.NoError(t, rdb.FlushAll(keysCtx).Err())
	assert.Equal(t, int64(0), rdb.DBSize(keysCtx).Val())
	keysCountsRight(t, n, rdb)
}

// TestScanPipelinedOrder: SCAN reads other shard actors' key counts, so in
// a pipeline it must see the writes sent before it and none sent after,
// also when it is queued in a transaction.
func TestScanPipelinedOrder(t *testing.T) {
	n := nodetest.Start(t, "shard-actors", "4")
	c := n.Client(t)
	ctx := context.Background()
	k := scrKey("late", 3, 4, -1) // walked after actor 0, where SCAN 0 starts
	for i := 0; i < 30; i++ {
		pipe := c.Pipeline()
		pipe.Set(ctx, k, "v", 0)
		first := pipe.Scan(ctx, 0, "", 1000)
		pipe.Del(ctx, k)
		_, err := pipe.Exec(ctx)
		require.NoError(t, err)
		keys, cursor := first.Val()
		assert.True(t, cursor != 0 || len(keys) == 1, "round %d: SCAN 0 ended the walk before the key: %v %d", i, keys, cursor)

		pipe = c.Pipeline()
		pipe.Set(ctx, k, "v", 0)
		pipe.Do(ctx, "MULTI")
		inTx := pipe.Do(ctx, "SCAN", "0", "COUNT", "1000")
		exec := pipe.Do(ctx, "EXEC")
		pipe.Del(ctx, k)
		_, err = pipe.Exec(ctx)
		require.NoError(t, err)
		require.NoError(t, inTx.Err())
		page, ok := exec.Val().([]any)
		require.True(t, ok && len(page) == 1, "round %d: %v", i, exec.Val())
		scan := page[0].([]any)
		assert.True(t, scan[0] != "0" || len(scan[1].([]any)) == 1, "round %d: SCAN 0 in EXEC ended the walk before the key: %v", i, scan)
	}
}
