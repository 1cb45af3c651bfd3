package engine_test

import (
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// liveHeap is the live heap after a full collection.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestChargeMatchesHeap fills an engine with keys of each type and
// encoding and compares the dataset's charge (INFO used_memory_dataset)
// with what the Go heap grew by, then deletes them all: the charge must
// follow the heap within a loose bound and go back to where it started.
func TestChargeMatchesHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a few MB")
	}
	num := func(i int) string { return strconv.Itoa(i) }
	cases := []struct {
		name string
		keys int
		fill func(do func(...string) string, k string)
	}{
		{"string16", 20000, func(do func(...string) string, k string) { do("SET", k, "0123456789abcdef") }},
		{"string100+ttl", 10000, func(do func(...string) string, k string) {
			do("SET", k, string(make([]byte, 100)), "EX", "1000")
		}},
		{"string-int", 20000, func(do func(...string) string, k string) { do("SET", k, "12345") }},
		{"string-append", 5000, func(do func(...string) string, k string) {
			for range 10 {
				do("APPEND", k, "0123456789")
			}
		}},
		{"hash-listpack", 3000, func(do func(...string) string, k string) {
			for f := range 10 {
				do("HSET", k, "field"+num(f), "value"+num(f))
			}
		}},
		{"hash-table", 20, func(do func(...string) string, k string) {
			for f := range 1000 {
				do("HSET", k, "field"+num(f), "value"+num(f))
			}
		}},
		{"set-intset", 3000, func(do func(...string) string, k string) {
			for f := range 10 {
				do("SADD", k, num(f))
			}
		}},
		{"set-table", 20, func(do func(...string) string, k string) {
			for f := range 1000 {
				do("SADD", k, "member"+num(f))
			}
		}},
		{"zset-listpack", 3000, func(do func(...string) string, k string) {
			for f := range 10 {
				do("ZADD", k, num(f), "member"+num(f))
			}
		}},
		{"zset-skiplist", 20, func(do func(...string) string, k string) {
			for f := range 1000 {
				do("ZADD", k, num(f), "member"+num(f))
			}
		}},
		{"list-small", 3000, func(do func(...string) string, k string) {
			for f := range 10 {
				do("RPUSH", k, "element"+num(f))
			}
		}},
		{"list-long", 20, func(do func(...string) string, k string) {
			for f := range 1000 {
				do("LPUSH", k, "element"+num(f))
			}
		}},
		{"stream", 200, func(do func(...string) string, k string) {
			for f := range 100 {
				do("XADD", k, "*", "field", "value"+num(f))
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEngine(t)
			c := e.Client(2)
			sh := e.Shard()
			c.Do("SET", "warmup", "x") // the database's slot array
			keys := make([]string, tc.keys)
			for i := range keys {
				keys[i] = "key:" + tc.name + ":" + num(i)
			}
			baseCharge := sh.Stats.Used.Load()
			baseHeap := liveHeap()
			for _, k := range keys {
				tc.fill(c.Do, k)
			}
			grown := liveHeap() - baseHeap
			charged := sh.Stats.Used.Load() - baseCharge
			ratio := float64(charged) / float64(grown)
			t.Logf("%d keys: heap +%d B (%.0f B/key), charge +%d B (%.0f B/key), ratio %.2f",
				tc.keys, grown, float64(grown)/float64(tc.keys), charged, float64(charged)/float64(tc.keys), ratio)
			assert.True(t, ratio >= 0.7 && ratio <= 1.4, "charge/heap ratio %.2f outside [0.7, 1.4]", ratio)
			for _, k := range keys {
				c.Do("DEL", k)
			}
			require.Equal(t, respInt(0), c.Do("EXISTS", keys[0]))
			// The keys' slots keep their (empty) keyspaces.
			left := sh.Stats.Used.Load() - baseCharge
			assert.GreaterOrEqual(t, left, int64(0))
			assert.LessOrEqual(t, left, int64(64*16384), "charge left after deleting every key")
			runtime.KeepAlive(c)
		})
	}
}
