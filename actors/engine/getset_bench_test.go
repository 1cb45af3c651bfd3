package engine_test

import (
	"strconv"
	"testing"
)

// BenchmarkGetSet runs SET and GET through the in-process engine over a
// 10k-key working set: for instruction counts of the per-command
// bookkeeping (perf stat -e instructions), not for timings.
func BenchmarkGetSet(b *testing.B) {
	e := newEngine(b)
	c := e.Client(2)
	keys := make([]string, 10000)
	for i := range keys {
		keys[i] = "key:" + strconv.Itoa(i)
		c.Do("SET", keys[i], "0123456789abcdef")
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := keys[i%len(keys)]
		c.Do("SET", k, "fedcba9876543210")
		c.Do("GET", k)
	}
}
