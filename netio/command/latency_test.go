package command

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The histogram counts with hdr_histogram's resolution (1 ns..1 s, two
// significant digits): every value falls in the index whose lowest and
// highest equivalent values bracket it, and the ranges tile the line.
func TestHistogramIndexTilesValues(t *testing.T) {
	prevHigh := int64(0)
	for i := 1; i <= histIndex(histMaxNS); i++ {
		lo, hi := histLowest(i), histHighest(i)
		require.Equal(t, prevHigh+1, lo, "index %d", i)
		require.Equal(t, i, histIndex(lo))
		require.Equal(t, i, histIndex(hi))
		if lo >= 256 {
			require.LessOrEqual(t, float64(hi-lo+1)/float64(lo), 1.0/128, "index %d keeps 2 digits", i)
		}
		prevHigh = hi
	}
	assert.Equal(t, 1, histIndex(0))
	assert.Equal(t, histIndex(histMaxNS), histIndex(5*histMaxNS))
}

// LATENCY HISTOGRAM's buckets and INFO's percentiles as Redis computes
// them: Redis records µs×1000, so a 1 µs command is p50=1.003 (the top of
// 1000's range) and lands in the "1" bucket; buckets double from 1024 ns,
// keyed by their top in µs (1, 2, 4, 8, 16, 33, 66 ...), cumulative, only
// where the count grew.
func TestHistogramBucketsAndPercentiles(t *testing.T) {
	spec := &Spec{Name: "latency-test-histogram", Arity: 1}
	Register(spec)
	st := NewStats()
	l := st.NewLatencies()
	for _, us := range []int64{1, 1, 3, 40, 40, 40, 2000} {
		l.Record(spec, us*1000, 1)
	}
	h := st.HistogramOf(spec)
	require.NotNil(t, h)
	assert.Equal(t, int64(7), h.Calls)
	assert.Equal(t, []Bucket{{1, 2}, {4, 3}, {66, 6}, {2113, 7}}, h.Buckets())
	assert.Equal(t, "p50=40.191,p99=2007.039,p99.9=2007.039,p0=1.000", h.PercentileLine([]float64{50, 99, 99.9, 0}))

	st.SetTracking(false)
	l.Record(spec, 1000, 1)
	assert.Equal(t, int64(7), st.HistogramOf(spec).Calls, "latency-tracking no records nothing")
	st.Reset()
	assert.Nil(t, st.HistogramOf(spec), "CONFIG RESETSTAT drops the histograms")
}

// The latency monitor keeps one sample per second per event (the worst),
// the all-time worst, and resets by name.
func TestLatencyMonitorSeries(t *testing.T) {
	m := NewLatencyMonitor()
	assert.False(t, m.Wants(100), "threshold 0: off")
	m.Threshold.Store(10)
	assert.False(t, m.Wants(9))
	assert.True(t, m.Wants(10))
	m.Add(LatencySample{"command", 20, 100}, LatencySample{"command", 30, 100}, LatencySample{"command", 15, 101},
		LatencySample{"expire-cycle", 12, 101})
	points, worst, ok := m.History("command")
	require.True(t, ok)
	assert.Equal(t, [][2]int64{{100, 30}, {101, 15}}, points)
	assert.Equal(t, int64(30), worst)
	assert.Equal(t, []LatencyEvent{{"command", 101, 15, 30}, {"expire-cycle", 101, 12, 12}}, m.Latest())
	g, ok := m.Graph("command", 105)
	require.True(t, ok)
	assert.Contains(t, g, "command - high 30 ms, low 15 ms (all time high 30 ms)\n")
	assert.Equal(t, LatencyStats{Samples: 2, Avg: 22, MAD: 7, Min: 15, Max: 30, Period: 5, AllTimeWorst: 30},
		m.Analyze("command", 105))
	assert.Equal(t, 0, m.Reset("nope"))
	assert.Equal(t, 1, m.Reset("COMMAND"))
	assert.Equal(t, 1, m.Reset())
	assert.True(t, m.Empty())
}
