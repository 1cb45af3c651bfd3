package command

import (
	"math/bits"
	"strconv"
	"strings"
	"sync/atomic"
)

// Per-command latency histograms (INFO latencystats, LATENCY HISTOGRAM), in
// nanoseconds from 1 ns to 1 s with two significant digits, the resolution
// of Redis's hdr_histogram: values below 256 count exactly, each later
// octave [128<<b, 256<<b) has 128 counters of width 1<<b. Counters live in
// 128-counter chunks allocated on first use, so a command that always takes
// about the same time costs a few chunks. A writer (the event loops
// together, each shard actor alone) has its own Latencies, so shards never
// share a cache line on the hot path; readers merge them.

const (
	histMaxNS  = 1_000_000_000
	histSub    = 128
	histChunks = 24 // index space 0..3071: values up to 1 s
)

// histIndex is the counter index of ns (clamped to 1 ns..1 s).
func histIndex(ns int64) int {
	if ns < 1 {
		ns = 1
	} else if ns > histMaxNS {
		ns = histMaxNS
	}
	if ns < 2*histSub {
		return int(ns)
	}
	b := bits.Len64(uint64(ns)) - 8 // ns>>b in [128, 256)
	return 2*histSub + (b-1)*histSub + int(ns>>b) - histSub
}

// histLowest and histHighest are the smallest and largest values counted
// at index i (hdr_histogram's lowest/highest equivalent values).
func histLowest(i int) int64 {
	if i < 2*histSub {
		return int64(i)
	}
	b := (i-2*histSub)/histSub + 1
	sub := int64((i-2*histSub)%histSub + histSub)
	return sub << b
}

func histHighest(i int) int64 {
	if i < 2*histSub {
		return int64(i)
	}
	b := (i-2*histSub)/histSub + 1
	return histLowest(i) + 1<<b - 1
}

type histChunk [histSub]atomic.Int64

// Latencies are one writer's histograms: for each command (by Spec.ID) its
// histChunks chunk pointers, in one flat slice so that recording is an
// index computation, a load and an add.
type Latencies struct {
	on *atomic.Bool // latency-tracking
	c  []atomic.Pointer[histChunk]
}

// Record counts n runs of spec that took ns nanoseconds each, if
// latency-tracking is on (l may be nil).
func (l *Latencies) Record(spec *Spec, ns, n int64) {
	if l == nil || !l.on.Load() {
		return
	}
	i := histIndex(ns)
	k := spec.ID*histChunks + i>>7
	if uint(k) >= uint(len(l.c)) {
		return
	}
	if c := l.c[k].Load(); c != nil {
		c[i&(histSub-1)].Add(n)
		return
	}
	l.first(k, i, n)
}

// first allocates chunk k and counts index i in it.
func (l *Latencies) first(k, i int, n int64) {
	c := new(histChunk)
	if !l.c[k].CompareAndSwap(nil, c) {
		c = l.c[k].Load()
	}
	c[i&(histSub-1)].Add(n)
}

// addTo adds the counts of the command with ID id into dst (one counter
// per index).
func (l *Latencies) addTo(id int, dst []int64) {
	for k := 0; k < histChunks; k++ {
		c := l.c[id*histChunks+k].Load()
		if c == nil {
			continue
		}
		for j := range c {
			dst[k*histSub+j] += c[j].Load()
		}
	}
}

// NewLatencies returns a writer's histograms, counted in t's figures (a
// shard actor takes one for itself).
func (t *Stats) NewLatencies() *Latencies {
	if t == nil {
		return nil
	}
	l := &Latencies{on: &t.tracking, c: make([]atomic.Pointer[histChunk], len(t.cmds)*histChunks)}
	t.mu.Lock()
	t.lat = append(t.lat, l)
	t.mu.Unlock()
	return l
}

// SetTracking turns latency-tracking on or off.
func (t *Stats) SetTracking(on bool) { t.tracking.Store(on) }

// Tracking reports latency-tracking.
func (t *Stats) Tracking() bool { return t.tracking.Load() }

// Latency counts one run of a loop (or fanned-out) command that took ns.
func (t *Stats) Latency(spec *Spec, ns int64) {
	if t != nil {
		t.loopLat.Record(spec, ns, 1)
	}
}

// LatencyHistogram is one command's merged histogram.
type LatencyHistogram struct {
	counts []int64 // by index
	Calls  int64
}

// HistogramOf merges spec's histograms over every writer; nil when it has
// no sample.
func (t *Stats) HistogramOf(spec *Spec) *LatencyHistogram {
	if t == nil || spec.ID >= len(t.cmds) {
		return nil
	}
	t.mu.RLock()
	sets := t.lat
	t.mu.RUnlock()
	var counts []int64
	for _, l := range sets {
		for k := 0; k < histChunks && counts == nil; k++ {
			if l.c[spec.ID*histChunks+k].Load() != nil {
				counts = make([]int64, histChunks*histSub)
			}
		}
		if counts != nil {
			l.addTo(spec.ID, counts)
		}
	}
	if counts == nil {
		return nil
	}
	out := &LatencyHistogram{counts: counts}
	for _, n := range counts {
		out.Calls += n
	}
	if out.Calls == 0 {
		return nil
	}
	return out
}

// resetLatency drops every histogram (CONFIG RESETSTAT).
func (t *Stats) resetLatency() {
	t.mu.RLock()
	sets := t.lat
	t.mu.RUnlock()
	for _, l := range sets {
		for i := range l.c {
			l.c[i].Store(nil)
		}
	}
}

// Percentile is hdr_histogram's value at percentile p (0..100), in ns.
func (h *LatencyHistogram) Percentile(p float64) int64 {
	p = min(p, 100)
	want := max(int64(p/100*float64(h.Calls)+0.5), 1)
	seen := int64(0)
	for i, n := range h.counts {
		seen += n
		if seen >= want {
			if p == 0 {
				return histLowest(i)
			}
			return histHighest(i)
		}
	}
	return 0
}

// Bucket is one LATENCY HISTOGRAM entry: the calls that took at most
// Micros µs (cumulative).
type Bucket struct{ Micros, Count int64 }

// Buckets are LATENCY HISTOGRAM's histogram_usec: cumulative counts at
// 1024 ns and every doubling (Redis's logarithmic hdr iteration), the key
// being the bucket's highest equivalent value in µs, only where the count
// grew.
func (h *LatencyHistogram) Buckets() []Bucket {
	var out []Bucket
	cum, prev, i := int64(0), int64(0), 0
	for level := int64(1024); cum < h.Calls; level *= 2 {
		top := histIndex(level)
		for ; i <= top && i < len(h.counts); i++ {
			cum += h.counts[i]
		}
		if cum > prev {
			out = append(out, Bucket{Micros: histHighest(top) / 1000, Count: cum})
		}
		prev = cum
		if top >= len(h.counts)-1 {
			break
		}
	}
	return out
}

// PercentileLine is INFO latencystats' value for h: p<pct>=<µs>,... for the
// latency-tracking-info-percentiles list.
func (h *LatencyHistogram) PercentileLine(pcts []float64) string {
	var b strings.Builder
	for j, p := range pcts {
		if j > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('p')
		b.WriteString(trimFloat(p))
		b.WriteByte('=')
		b.WriteString(strconv.FormatFloat(float64(h.Percentile(p))/1000, 'f', 3, 64))
	}
	return b.String()
}

// trimFloat is Redis's %f with trailing zeros (and a bare point) removed.
func trimFloat(f float64) string {
	s := strconv.FormatFloat(f, 'f', 6, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
