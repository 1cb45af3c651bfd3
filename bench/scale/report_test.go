package main

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The summary a reader of the study sees: medians, paired ratios against
// the Redis cluster (at c = 1 the single redis-server), and scaling.
func TestSummaryRatiosAndScaling(t *testing.T) {
	pt := point{"memtier", "SET+GET", 1, "uniform"}
	st := &study{o: options{rounds: 3, cores: []int{1, 2}, pipelines: []int{1}}}
	add := func(cores int, side string, rps ...float64) {
		for i, v := range rps {
			st.runs = append(st.runs, record{section: "cores", cores: cores, side: side, pt: pt, round: i,
				m: measurement{rps: v, cpuUS: 1e6 / v}})
		}
	}
	add(1, "slotd", 100, 80, 120)
	add(1, "redis", 100, 100, 100)
	add(2, "slotd", 150, 190, 170)
	add(2, "redis", 100, 100, 100)
	add(2, "redis-cluster", 200, 100, 200)

	rows := st.summary()
	get := func(cores int, side string) row {
		for _, r := range rows {
			if r.cores == cores && r.side == side {
				return r
			}
		}
		t.Fatalf("no row for %s at c=%d", side, cores)
		return row{}
	}
	one := get(1, "slotd")
	assert.Equal(t, 100.0, one.rps, "median over rounds")
	assert.Equal(t, 1.0, one.rpsVsCluster, "at c=1 the cluster is the one redis-server")
	assert.Equal(t, 1.0, one.scaling)
	two := get(2, "slotd")
	assert.Equal(t, 170.0, two.rps)
	assert.Equal(t, 0.85, two.rpsVsCluster, "median of per-round ratios 0.75, 1.9, 0.85")
	assert.Equal(t, 1.7, two.rpsVsRedis)
	assert.InDelta(t, 0.85, two.scaling, 1e-9, "170 / (2 × 100)")
	assert.InDelta(t, 1/0.85, two.cpuVsCluster, 1e-9, "CPU per request ratio, per round")
	cl := get(1, "redis-cluster")
	require.Equal(t, 3, cl.n)
	assert.True(t, math.IsNaN(cl.rpsVsCluster), "a reference has no ratio against itself")
	assert.InDelta(t, 1.0, get(2, "redis-cluster").scaling, 1e-9, "median 200 / (2 × 100 of the c=1 redis-server)")
}
