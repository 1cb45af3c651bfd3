package cmdtest_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/actors/engine/rdb"
	"github.com/slotd/slotd/cmd/node/nodetest"
)

// TestDumpRestoreRoundTrip moves every kind of value through DUMP and
// RESTORE inside slotd, with go-redis in both protocols: the copy has the
// same digest, encoding and (for the deterministic layouts) the same DUMP.
func TestDumpRestoreRoundTrip(t *testing.T) {
	n := dumpNode(t, "shard-actors", "3")
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		c := n.Client(t, proto)
		raw := respDial(t, n.Addr, proto)
		require.NoError(t, c.FlushAll(ctx).Err())
		for _, tc := range dumpCases() {
			k := "rt:" + tc.name
			for _, cmd := range tc.build {
				args := make([]any, len(cmd))
				for i, a := range withKey(cmd, k) {
					args[i] = a
				}
				require.NoError(t, c.Do(ctx, args...).Err(), tc.name)
			}
			p, err := c.Dump(ctx, k).Result()
			require.NoError(t, err, tc.name)
			require.NoError(t, c.Restore(ctx, k+":copy", 0, p).Err(), tc.name)
			if tc.ttl != "" {
				require.NoError(t, c.Do(ctx, "PEXPIRE", k+":copy", tc.ttl).Err())
			}
			assert.Equal(t, raw.Digest(k), raw.Digest(k+":copy"), tc.name)
			assert.Equal(t, raw.Encoding(k), raw.Encoding(k+":copy"), tc.name)
			again, err := c.Dump(ctx, k+":copy").Result()
			require.NoError(t, err)
			if tc.same {
				dumpSame(t, p, again, tc.name)
			}
			assert.Equal(t, dumpContents(raw, k), dumpContents(raw, k+":copy"), tc.name)
		}
		// A missing key dumps as nil.
		_, err := c.Dump(ctx, "missing").Result()
		assert.ErrorIs(t, err, redis.Nil)
	}
}

func TestRestoreTTLs(t *testing.T) {
	n := dumpNode(t)
	ctx := context.Background()
	c := n.Client(t)
	require.NoError(t, c.Set(ctx, "src", "value", 0).Err())
	p := c.Dump(ctx, "src").Val()

	// Relative TTL.
	require.NoError(t, c.Restore(ctx, "rel", 5*time.Second, p).Err())
	ttl := c.PTTL(ctx, "rel").Val()
	assert.True(t, ttl > 4*time.Second && ttl <= 5*time.Second, "%v", ttl)

	// Absolute TTL.
	at := time.Now().Add(time.Hour).UnixMilli()
	require.Equal(t, "OK", c.Do(ctx, "RESTORE", "abs", at, p, "ABSTTL").Val())
	assert.Equal(t, at, c.Do(ctx, "PEXPIRETIME", "abs").Val())

	// No TTL.
	require.NoError(t, c.Restore(ctx, "none", 0, p).Err())
	assert.Equal(t, time.Duration(-1), c.PTTL(ctx, "none").Val())

	// An absolute time in the past: OK, but nothing is created, and a key
	// replaced by it is gone.
	require.Equal(t, "OK", c.Do(ctx, "RESTORE", "past", 1, p, "ABSTTL").Val())
	assert.Equal(t, int64(0), c.Exists(ctx, "past").Val())
	require.NoError(t, c.Set(ctx, "old", "x", 0).Err())
	require.Equal(t, "OK", c.Do(ctx, "RESTORE", "old", 1, p, "ABSTTL", "REPLACE").Val())
	assert.Equal(t, int64(0), c.Exists(ctx, "old").Val())

	// REPLACE drops the old TTL along with the old value.
	require.NoError(t, c.Set(ctx, "ttlkey", "x", time.Hour).Err())
	require.NoError(t, c.RestoreReplace(ctx, "ttlkey", 0, p).Err())
	assert.Equal(t, time.Duration(-1), c.PTTL(ctx, "ttlkey").Val())
	assert.Equal(t, "value", c.Get(ctx, "ttlkey").Val())

	// A restored key with a TTL expires.
	require.NoError(t, c.Restore(ctx, "short", 30*time.Millisecond, p).Err())
	nodetest.Eventually(t, 5*time.Second, func() bool { return c.Exists(ctx, "short").Val() == 0 },
		"restored key did not expire")

	// IDLETIME and FREQ are accepted.
	require.Equal(t, "OK", c.Do(ctx, "RESTORE", "idle", 0, p, "IDLETIME", 100).Val())
	require.Equal(t, "OK", c.Do(ctx, "RESTORE", "freq", 0, p, "FREQ", 100).Val())
}

// TestRestoreTouchesWatchedKey: RESTORE is a write, so it aborts a
// transaction WATCHing its key.
func TestRestoreTouchesWatchedKey(t *testing.T) {
	n := dumpNode(t)
	ctx := context.Background()
	c := n.Client(t)
	other := n.Client(t)
	require.NoError(t, c.Set(ctx, "w", "1", 0).Err())
	p := c.Dump(ctx, "w").Val()
	err := c.Watch(ctx, func(tx *redis.Tx) error {
		require.NoError(t, other.RestoreReplace(ctx, "w", 0, p).Err())
		_, err := tx.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
			pipe.Set(ctx, "w", "2", 0)
			return nil
		})
		return err
	}, "w")
	assert.True(t, errors.Is(err, redis.TxFailedErr), "%v", err)
	assert.Equal(t, "1", c.Get(ctx, "w").Val())
}

// TestRestoreCorruptPayloads mutates valid payloads (and fixes their
// checksums): RESTORE answers OK or "Bad data format", never anything else,
// and whatever it accepts is a usable value.
func TestRestoreCorruptPayloads(t *testing.T) {
	n := dumpNode(t)
	c := respDial(t, n.Addr, 2)
	var payloads []string
	for _, tc := range dumpCases() {
		if len(tc.build) > 1 {
			continue // keep the mutations cheap
		}
		c.Do("DEL", "src")
		c.Do(withKey(tc.build[0], "src")...)
		payloads = append(payloads, c.Bulk("DUMP", "src"))
	}
	r := rand.New(rand.NewPCG(7, 11))
	accepted := 0
	for i := 0; i < 3000; i++ {
		p := []byte(payloads[r.IntN(len(payloads))])
		body := p[:len(p)-10]
		for m := 1 + r.IntN(3); m > 0 && len(body) > 0; m-- {
			j := r.IntN(len(body))
			switch r.IntN(4) {
			case 0:
				body[j] ^= byte(1 << r.IntN(8))
			case 1:
				body[j] = byte(r.IntN(256))
			case 2:
				body = body[:j]
			default:
				body = append(body[:j], append([]byte{byte(r.IntN(256))}, body[j:]...)...)
			}
		}
		e := rdb.NewEncoder(rdb.Options{})
		e.B = append(e.B, body...)
		reply := c.Do("RESTORE", "k", "0", string(e.Payload()), "REPLACE")
		switch reply {
		case "+OK\r\n":
			accepted++
			typ := c.Do("TYPE", "k")
			require.NotEqual(t, "+none\r\n", typ)
			require.True(t, strings.HasPrefix(c.Do("DEBUG", "DIGEST-VALUE", "k"), "*1\r\n+"))
			again := c.Bulk("DUMP", "k")
			require.Equal(t, "+OK\r\n", c.Do("RESTORE", "k2", "0", again, "REPLACE"))
			require.Equal(t, c.Digest("k"), c.Digest("k2"))
		case "-ERR Bad data format\r\n":
		default:
			t.Fatalf("unexpected reply %q to a corrupt payload", reply)
		}
	}
	t.Logf("%d of 3000 mutated payloads were still valid values", accepted)
	assert.Equal(t, "+PONG\r\n", c.Do("PING"))
}

// TestDebugDigest: DIGEST-VALUE is zero for missing keys, changes with
// the value and with a TTL; DIGEST is zero for an empty dataset and does
// not depend on which shard holds which key.
func TestDebugDigest(t *testing.T) {
	n := dumpNode(t, "shard-actors", "4")
	c := respDial(t, n.Addr, 3)
	zero := strings.Repeat("0", 40)
	assert.Equal(t, "+"+zero+"\r\n", c.Do("DEBUG", "DIGEST"))
	assert.Equal(t, "*0\r\n", c.Do("DEBUG", "DIGEST-VALUE"))
	assert.Equal(t, "*2\r\n+"+zero+"\r\n+"+zero+"\r\n", c.Do("DEBUG", "DIGEST-VALUE", "a", "b"))
	c.Do("SET", "a", "1")
	d1 := c.Digest("a")
	assert.NotEqual(t, zero, d1)
	c.Do("EXPIRE", "a", "1000")
	d2 := c.Digest("a")
	assert.NotEqual(t, d1, d2)
	c.Do("PERSIST", "a")
	assert.Equal(t, d1, c.Digest("a"))
	c.Do("SET", "a", "2")
	assert.NotEqual(t, d1, c.Digest("a"))
	assert.Contains(t, c.Do("DEBUG", "DIGEST", "extra"), "-ERR unknown subcommand or wrong number of arguments")

	// In a pipeline, each digest sees the writes sent before it.
	got := c.Pipe([]string{"SET", "p", "1"}, []string{"DEBUG", "DIGEST-VALUE", "p"}, []string{"DEBUG", "DIGEST"},
		[]string{"SET", "p", "2"}, []string{"DEBUG", "DIGEST-VALUE", "p"}, []string{"DEBUG", "DIGEST"})
	c.Do("SET", "p", "1")
	assert.Equal(t, c.Do("DEBUG", "DIGEST-VALUE", "p"), got[1])
	assert.Equal(t, c.Do("DEBUG", "DIGEST"), got[2])
	c.Do("SET", "p", "2")
	assert.Equal(t, c.Do("DEBUG", "DIGEST-VALUE", "p"), got[4])
	assert.Equal(t, c.Do("DEBUG", "DIGEST"), got[5])
	assert.NotEqual(t, got[1], got[4])
	c.Do("DEL", "p")

	// The same keys written in another order on a node with another shard
	// count give the same dataset digest.
	other := respDial(t, dumpNode(t, "shard-actors", "1").Addr, 3)
	for i := 0; i < 200; i++ {
		c.Do("SADD", "s"+strconv.Itoa(i), strconv.Itoa(i), "x")
		other.Do("SADD", "s"+strconv.Itoa(199-i), "x", strconv.Itoa(199-i))
	}
	other.Do("SET", "a", "2")
	assert.Equal(t, c.Do("DEBUG", "DIGEST"), other.Do("DEBUG", "DIGEST"))
	assert.Equal(t, c.Do("DEBUG", "DIGEST-VALUE", "s1", "s150", "nope"),
		other.Do("DEBUG", "DIGEST-VALUE", "s1", "s150", "nope"))
	assert.NotEqual(t, "+"+zero+"\r\n", c.Do("DEBUG", "DIGEST"))
}

func TestDebugDigestNeedsDebugEnabled(t *testing.T) {
	n := nodetest.Start(t, "enable-debug-command", "no")
	c := respDial(t, n.Addr, 2)
	assert.True(t, strings.HasPrefix(c.Do("DEBUG", "DIGEST"), "-ERR DEBUG command not allowed"))
	assert.True(t, strings.HasPrefix(c.Do("DEBUG", "DIGEST-VALUE", "k"), "-ERR DEBUG command not allowed"))
}

// TestRestoreWakesBlockedClient: a list restored under a key a client is
// blocked on serves that client, as a push would.
func TestRestoreWakesBlockedClient(t *testing.T) {
	n := dumpNode(t)
	ctx := context.Background()
	c := n.Client(t)
	require.NoError(t, c.RPush(ctx, "src", "x", "y").Err())
	p := c.Dump(ctx, "src").Val()
	blocked := n.Client(t)
	got := make(chan []string, 1)
	go func() {
		v, _ := blocked.BLPop(ctx, 10*time.Second, "dst").Result()
		got <- v
	}()
	nodetest.Eventually(t, 5*time.Second, func() bool {
		return strings.Contains(c.Info(ctx, "clients").Val(), "blocked_clients:1")
	}, "client did not block")
	require.NoError(t, c.Restore(ctx, "dst", 0, p).Err())
	assert.Equal(t, []string{"dst", "x"}, <-got)
	assert.Equal(t, []string{"y"}, c.LRange(ctx, "dst", 0, -1).Val())
}
