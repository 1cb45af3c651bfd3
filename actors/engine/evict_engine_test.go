package engine_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/enginetest"
)

// fillForEviction sets n keys of 100 bytes, the odd ones with a TTL, and
// returns their names.
func fillForEviction(c *enginetest.Client, prefix string, n int) []string {
	keys := make([]string, n)
	val := string(make([]byte, 100))
	for i := range keys {
		keys[i] = prefix + strconv.Itoa(i)
		if i%2 == 1 {
			c.Do("SET", keys[i], val, "EX", strconv.Itoa(10000+i))
		} else {
			c.Do("SET", keys[i], val)
		}
	}
	return keys
}

// Every policy keeps the dataset under maxmemory by evicting the keys it
// may; volatile policies leave keys without a TTL alone and, once only those
// are left, refuse writes with Redis's -OOM; noeviction refuses at once.
func TestEvictionPolicies(t *testing.T) {
	for _, name := range []string{"allkeys-lru", "allkeys-lfu", "allkeys-random",
		"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl", "noeviction"} {
		t.Run(name, func(t *testing.T) {
			e := newEngine(t)
			c := e.Client(2)
			sh := e.Shard()
			g := sh.Group()
			pol := engine.ParsePolicy(name)
			g.SetPolicy(pol)
			old := fillForEviction(c, "old:", 400)
			limit := sh.Stats.Used.Load() + 20_000
			g.MaxMemory.Store(limit)
			val := string(make([]byte, 100))
			oom := 0
			for i := range 1000 {
				r := c.Do("SET", "new:"+strconv.Itoa(i), val, "EX", "5000")
				if r != "+OK\r\n" {
					require.Equal(t, respErr("OOM command not allowed when used memory > 'maxmemory'."), r)
					oom++
				}
				require.LessOrEqual(t, sh.Stats.Used.Load(), limit+2_000, "over maxmemory by more than a key")
			}
			// Reads are never refused.
			require.NotEqual(t, byte('-'), c.Do("GET", old[0])[0])
			require.NotEqual(t, byte('-'), c.Do("GET", old[1])[0])
			evicted := g.Evicted()
			if pol == engine.NoEviction {
				assert.Zero(t, evicted)
				assert.Greater(t, oom, 800)
				return
			}
			assert.Zero(t, oom, "volatile keys were left to evict")
			assert.Greater(t, evicted, int64(500))
			if name[:8] == "volatile" {
				for i := 0; i < len(old); i += 2 {
					require.Equal(t, respInt(1), c.Do("EXISTS", old[i]), "%s evicted a key without TTL", name)
				}
				// Now make every volatile key persistent: nothing is
				// left to evict.
				for i := range 1000 {
					c.Do("PERSIST", "new:"+strconv.Itoa(i))
				}
				for i := 1; i < len(old); i += 2 {
					c.Do("PERSIST", old[i])
				}
				// The check comes before a command: the first write takes
				// the dataset over, the next is refused.
				assert.Equal(t, "+OK\r\n", c.Do("SET", "more", string(make([]byte, 30_000))))
				r := c.Do("SET", "more2", "x")
				assert.Equal(t, respErr("OOM command not allowed when used memory > 'maxmemory'."), r)
			}
		})
	}
}

// LRU evicts the keys idle longest; LFU the least used; volatile-ttl those
// that expire soonest. The pool makes the choice approximate, so only most
// of the victims must be the expected ones.
func TestEvictionChoosesByPolicy(t *testing.T) {
	val := string(make([]byte, 100))
	run := func(t *testing.T, pol string, prepare func(e *enginetest.Engine, c *enginetest.Client, keys []string)) []string {
		e := newEngine(t)
		c := e.Client(2)
		sh := e.Shard()
		g := sh.Group()
		g.SetPolicy(engine.ParsePolicy(pol))
		g.MaxMemorySamples.Store(10)
		keys := make([]string, 400)
		for i := range keys {
			keys[i] = "k" + strconv.Itoa(i)
			c.Do("SET", keys[i], val, "EX", strconv.Itoa(100000+i*10))
		}
		prepare(e, c, keys)
		g.MaxMemory.Store(sh.Stats.Used.Load())
		for i := range 100 {
			c.Do("SET", "n"+strconv.Itoa(i), val, "EX", "999999")
		}
		var gone []string
		for _, k := range keys {
			if c.Do("EXISTS", k) == respInt(0) {
				gone = append(gone, k)
			}
		}
		require.NotEmpty(t, gone)
		return gone
	}
	// The first half is evicted rather than the second: idle longer, used
	// less, expiring sooner.
	firstHalf := func(t *testing.T, gone []string) {
		n := 0
		for _, k := range gone {
			if i, _ := strconv.Atoi(k[1:]); i < 200 {
				n++
			}
		}
		assert.GreaterOrEqual(t, float64(n)/float64(len(gone)), 0.9, "%d of %d evicted from the first half", n, len(gone))
	}
	t.Run("lru", func(t *testing.T) {
		firstHalf(t, run(t, "allkeys-lru", func(e *enginetest.Engine, c *enginetest.Client, keys []string) {
			e.Advance(100 * time.Second)
			for _, k := range keys[200:] {
				c.Do("GET", k)
			}
			require.Equal(t, respInt(100), c.Do("OBJECT", "IDLETIME", keys[0]))
			require.Equal(t, respInt(0), c.Do("OBJECT", "IDLETIME", keys[300]))
		}))
	})
	t.Run("lfu", func(t *testing.T) {
		firstHalf(t, run(t, "volatile-lfu", func(e *enginetest.Engine, c *enginetest.Client, keys []string) {
			for range 20 {
				for _, k := range keys[200:] {
					c.Do("GET", k)
				}
			}
			require.Equal(t, respInt(5), c.Do("OBJECT", "FREQ", keys[0]))
			hot := c.Do("OBJECT", "FREQ", keys[300])
			require.NotEqual(t, respInt(5), hot)
			// Counters decay by one per lfu-decay-time minute.
			e.Advance(2 * time.Minute)
			require.Equal(t, respInt(3), c.Do("OBJECT", "FREQ", keys[0]))
		}))
	})
	t.Run("ttl", func(t *testing.T) {
		firstHalf(t, run(t, "volatile-ttl", func(*enginetest.Engine, *enginetest.Client, []string) {}))
	})
}
