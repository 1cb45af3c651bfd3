package benchkit

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRedisBenchmarkCSV(t *testing.T) {
	out := []byte(`"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
"SET","131492.44","0.215","0.064","0.207","0.303","0.535","2.991"
"publish ch 0123456789abcdef","77670.00","0.600","0.100","0.550","0.900","1.200","4.000"
`)
	r, err := RedisBenchmarkCSV(out, "set")
	require.NoError(t, err)
	assert.Equal(t, Result{RPS: 131492.44, P50: 0.207, P99: 0.535}, r)
	r, err = RedisBenchmarkCSV(out, "publish")
	require.NoError(t, err)
	assert.Equal(t, 77670.0, r.RPS, "a custom command's row is found by its first word")
	_, err = RedisBenchmarkCSV(out, "get")
	assert.ErrorContains(t, err, "no get row")

	cluster := []byte(`Cluster has 2 master nodes:

Master 0: 674b4098f3488ed1b21fb24770852aeac9f882ca 127.0.0.1:34705
Master 1: 86692e3c6ee5fb51ceed8442b4790687eb677bf7 127.0.0.1:34287

"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
"SET","79051.38","0.347","0.056","0.311","0.503","1.711","7.271"
`)
	r, err = RedisBenchmarkCSV(cluster, "set")
	require.NoError(t, err, "--cluster's list of primaries comes before the CSV")
	assert.Equal(t, Result{RPS: 79051.38, P50: 0.311, P99: 1.711}, r)
}

func TestMemtierTotals(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"ALL STATS":{"Totals":{"Count":200000,"Ops/sec":123198.5,
		"Percentile Latencies":{"p50.00":0.391,"p99.00":0.759}}}}`), 0o644))
	r, err := MemtierTotals(path)
	require.NoError(t, err)
	assert.Equal(t, Result{RPS: 123198.5, P50: 0.391, P99: 0.759, Count: 200000}, r)
	require.NoError(t, os.WriteFile(path, []byte(`{"ALL STATS":{"Totals":{"Count":0}}}`), 0o644))
	_, err = MemtierTotals(path)
	assert.Error(t, err, "a run without totals is an error, not a zero rate")
}

func TestProcCPU(t *testing.T) {
	_, err := ProcCPU(os.Getpid())
	require.NoError(t, err)
	_, err = ProcCPU(-1)
	assert.Error(t, err)
}
