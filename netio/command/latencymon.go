package command

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// LatencySample is one latency event that reached latency-monitor-threshold:
// what was slow (Redis's event name: "command", "expire-cycle", ...), how
// many milliseconds it took, and at which unix second it ended. Shard
// actors, the AOF and the RDB writer hand their samples to the node's
// LatencyMonitor as these values; nothing is sent below the threshold.
type LatencySample struct {
	Event  string
	Ms, At int64
}

// latencySeriesLen is how many samples an event keeps (Redis's
// LATENCY_TS_LEN): one per second, the worst of that second.
const latencySeriesLen = 160

type latencyPoint struct{ at, ms int64 }

type latencySeries struct {
	points [latencySeriesLen]latencyPoint // ring; at == 0: unused
	next   int
	max    int64 // the all-time worst
}

// LatencyMonitor is the LATENCY command's store: for each event a ring of
// its latest per-second worst samples and its all-time worst. Threshold
// mirrors latency-monitor-threshold (ms, 0: off); writers check it with
// Wants before building a sample, so the store's lock is taken only for
// events that were slow.
type LatencyMonitor struct {
	Threshold atomic.Int64

	mu     sync.Mutex
	series map[string]*latencySeries
	order  []string // events in the order they first occurred
}

// NewLatencyMonitor is an empty store, monitoring off.
func NewLatencyMonitor() *LatencyMonitor {
	return &LatencyMonitor{series: map[string]*latencySeries{}}
}

// Wants reports whether an event that took ms milliseconds is recorded (m
// may be nil).
func (m *LatencyMonitor) Wants(ms int64) bool {
	if m == nil {
		return false
	}
	t := m.Threshold.Load()
	return t > 0 && ms >= t
}

// Add records samples (each already past the threshold).
func (m *LatencyMonitor) Add(samples ...LatencySample) {
	if m == nil || len(samples) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range samples {
		ts := m.series[s.Event]
		if ts == nil {
			ts = &latencySeries{}
			m.series[s.Event] = ts
			m.order = append(m.order, s.Event)
		}
		ts.max = max(ts.max, s.Ms)
		prev := &ts.points[(ts.next+latencySeriesLen-1)%latencySeriesLen]
		if prev.at == s.At {
			prev.ms = max(prev.ms, s.Ms)
			continue
		}
		ts.points[ts.next] = latencyPoint{at: s.At, ms: s.Ms}
		ts.next = (ts.next + 1) % latencySeriesLen
	}
}

// LatencyEvent is one LATENCY LATEST row.
type LatencyEvent struct {
	Name              string
	At, Latest, Worst int64
}

// Latest lists every event with its latest sample and all-time worst.
func (m *LatencyMonitor) Latest() []LatencyEvent {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]LatencyEvent, 0, len(m.order))
	for _, name := range m.order {
		ts := m.series[name]
		p := ts.points[(ts.next+latencySeriesLen-1)%latencySeriesLen]
		out = append(out, LatencyEvent{Name: name, At: p.at, Latest: p.ms, Worst: ts.max})
	}
	return out
}

// History is event's samples, oldest first ([at, ms] pairs); ok is false
// for an event never seen.
func (m *LatencyMonitor) History(event string) (points [][2]int64, worst int64, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ts := m.series[event]
	if ts == nil {
		return nil, 0, false
	}
	for j := 0; j < latencySeriesLen; j++ {
		if p := ts.points[(ts.next+j)%latencySeriesLen]; p.at != 0 {
			points = append(points, [2]int64{p.at, p.ms})
		}
	}
	return points, ts.max, true
}

// Reset drops the named events (every event when none is named; names
// match case-insensitively) and returns how many it dropped.
func (m *LatencyMonitor) Reset(events ...string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	kept := m.order[:0]
	for _, name := range m.order {
		drop := len(events) == 0
		for _, e := range events {
			if strings.EqualFold(e, name) {
				drop = true
			}
		}
		if drop {
			delete(m.series, name)
			n++
		} else {
			kept = append(kept, name)
		}
	}
	m.order = kept
	return n
}

// Empty reports whether no event was recorded.
func (m *LatencyMonitor) Empty() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.order) == 0
}

// LatencyStats summarise one event's samples for LATENCY DOCTOR: how many,
// their mean and mean absolute deviation (ms), and the seconds from the
// oldest to now.
type LatencyStats struct {
	Samples              int
	Avg, MAD, Min, Max   int64
	Period, AllTimeWorst int64
}

// Analyze summarises event's samples at unix second now.
func (m *LatencyMonitor) Analyze(event string, now int64) LatencyStats {
	points, worst, ok := m.History(event)
	st := LatencyStats{AllTimeWorst: worst}
	if !ok || len(points) == 0 {
		return st
	}
	sum, oldest := int64(0), points[0][0]
	st.Min, st.Max = points[0][1], points[0][1]
	for _, p := range points {
		sum += p[1]
		st.Min, st.Max = min(st.Min, p[1]), max(st.Max, p[1])
		oldest = min(oldest, p[0])
	}
	st.Samples = len(points)
	st.Avg = sum / int64(len(points))
	st.Period = max(now-oldest, 1)
	dev := int64(0)
	for _, p := range points {
		d := st.Avg - p[1]
		if d < 0 {
			d = -d
		}
		dev += d
	}
	st.MAD = dev / int64(len(points))
	return st
}

// Graph draws event's samples as LATENCY GRAPH does: a title line with the
// high, low and all-time high, a rule, then one column per sample (80 per
// block) four rows high, filled up to the sample's level (`_`, `o`, `#` for
// the top third of a row, `|` below the top), and under each column how
// long ago the sample was (vertically: 12s, 3m, 2h, 1d). ok is false for an
// event never seen.
func (m *LatencyMonitor) Graph(event string, now int64) (string, bool) {
	points, worst, ok := m.History(event)
	if !ok {
		return "", false
	}
	var lo, hi int64
	labels := make([]string, len(points))
	for i, p := range points {
		if i == 0 || p[1] < lo {
			lo = p[1]
		}
		if i == 0 || p[1] > hi {
			hi = p[1]
		}
		labels[i] = agoLabel(now - p[0])
	}
	var b strings.Builder
	b.WriteString(event + " - high " + strconv.FormatInt(hi, 10) + " ms, low " + strconv.FormatInt(lo, 10) +
		" ms (all time high " + strconv.FormatInt(worst, 10) + " ms)\n")
	b.WriteString(strings.Repeat("-", 80) + "\n")
	const rows, cols = 4, 80
	levels := []byte("_o#")
	for start := 0; start < len(points); start += cols {
		if start > 0 {
			b.WriteByte('\n')
		}
		end := min(start+cols, len(points))
		span := float64(hi - lo)
		if span == 0 {
			span = 1
		}
		steps := len(levels) * rows
		line := make([]byte, end-start)
		for r := 0; r < rows; r++ {
			for j := start; j < end; j++ {
				step := int(float64(points[j][1]-lo) * float64(steps) / span)
				step = min(max(step, 0), steps-1)
				c := byte(' ')
				if k := step - (rows-r-1)*len(levels); k >= 0 && k < len(levels) {
					c = levels[k]
				} else if k >= len(levels) {
					c = '|'
				}
				line[j-start] = c
			}
			b.Write(line)
			b.WriteByte('\n')
		}
		longest := 0
		for j := start; j < end; j++ {
			longest = max(longest, len(labels[j]))
		}
		if longest > 0 {
			b.WriteString(strings.Repeat(" ", end-start) + "\n") // the margin above the labels
		}
		for r := 0; r < longest; r++ {
			for j := start; j < end; j++ {
				line[j-start] = ' '
				if r < len(labels[j]) {
					line[j-start] = labels[j][r]
				}
			}
			b.Write(line)
			b.WriteByte('\n')
		}
	}
	return b.String(), true
}

// agoLabel is how long ago d seconds are, in the largest whole unit.
func agoLabel(d int64) string {
	switch {
	case d < 60:
		return strconv.FormatInt(d, 10) + "s"
	case d < 3600:
		return strconv.FormatInt(d/60, 10) + "m"
	case d < 86400:
		return strconv.FormatInt(d/3600, 10) + "h"
	}
	return strconv.FormatInt(d/86400, 10) + "d"
}

// Since records event begun at start if it took the threshold or more (for
// the goroutines that read the clock themselves: event loops, AOF, RDB).
func (m *LatencyMonitor) Since(event string, start time.Time) {
	if m == nil || m.Threshold.Load() <= 0 {
		return
	}
	now := time.Now()
	if ms := now.Sub(start).Milliseconds(); m.Wants(ms) {
		m.Add(LatencySample{Event: event, Ms: ms, At: now.Unix()})
	}
}
