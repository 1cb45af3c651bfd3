package main

import (
	"fmt"
	"slices"
	"strings"
)

// key identifies one table row.
type key struct {
	tool     string
	test     string
	pipeline int
}

// results collects per-round measurements for each row and server.
type results struct {
	order []key
	runs  map[key]map[string][]measurement // row -> server name -> rounds
}

func newResults() *results { return &results{runs: map[key]map[string][]measurement{}} }

func (r *results) add(k key, server string, m measurement) {
	if r.runs[k] == nil {
		r.runs[k] = map[string][]measurement{}
		r.order = append(r.order, k)
	}
	r.runs[k][server] = append(r.runs[k][server], m)
}

// med returns the median of v (v is reordered).
func med(v []float64) float64 {
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// metric extracts one metric from a measurement.
type metric func(measurement) float64

func rps(m measurement) float64   { return m.rps }
func p50(m measurement) float64   { return m.p50 }
func p99(m measurement) float64   { return m.p99 }
func cpuUS(m measurement) float64 { return m.cpuUS }

// median returns the median of f over the rounds.
func median(ms []measurement, f metric) float64 {
	v := make([]float64, len(ms))
	for i, m := range ms {
		v[i] = f(m)
	}
	return med(v)
}

// pairedRatio returns the median over rounds of f(a)/f(b). The i-th run of
// each server belongs to the same round and ran back to back, so per-round
// ratios cancel drift in machine speed between rounds better than a ratio
// of medians would.
func pairedRatio(a, b []measurement, f metric) string {
	var v []float64
	for i := range min(len(a), len(b)) {
		if f(b[i]) != 0 {
			v = append(v, f(a[i])/f(b[i]))
		}
	}
	if len(v) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", med(v))
}

// markdown renders the medians as a Markdown table, rows sorted by tool,
// test and pipeline depth.
func (r *results) markdown(o options, memtier bool) string {
	rows := [][]string{{
		"tool", "test", "P",
		"slotd rps", "redis rps", "ratio",
		"slotd p50", "redis p50", "ratio",
		"slotd p99", "redis p99", "ratio",
		"slotd CPU", "redis CPU", "ratio",
	}}
	keys := slices.Clone(r.order)
	slices.SortStableFunc(keys, func(a, b key) int {
		if a.tool != b.tool {
			return strings.Compare(b.tool, a.tool) // redis-benchmark before memtier
		}
		if c := strings.Compare(a.test, b.test); c != 0 {
			return c
		}
		return a.pipeline - b.pipeline
	})
	for _, k := range keys {
		a, b := r.runs[k]["slotd"], r.runs[k]["redis"]
		row := []string{k.tool, strings.ToUpper(k.test), fmt.Sprintf("P%d", k.pipeline)}
		for _, c := range []struct {
			f   metric
			fmt string
		}{{rps, "%.0f"}, {p50, "%.3f"}, {p99, "%.3f"}, {cpuUS, "%.2f"}} {
			row = append(row, fmt.Sprintf(c.fmt, median(a, c.f)), fmt.Sprintf(c.fmt, median(b, c.f)), pairedRatio(a, b, c.f))
		}
		rows = append(rows, row)
	}

	var sb strings.Builder
	sb.WriteString(markdownTable(rows, 3))
	fmt.Fprintf(&sb, "\nMedians of %d rounds. Latencies in ms; CPU is server user+system time per request in µs "+
		"(/proc/<pid>/stat, 10 ms resolution). Ratios are slotd/redis, the median of the per-round ratios of back-to-back runs: "+
		">1 is better for rps, worse for latency and CPU.\n", o.rounds)
	if memtier {
		sb.WriteString("memtier rows are one run per pipeline depth, SET:GET 1:1 when both tests are selected " +
			"(memtier does not separate their latencies).\n")
	} else {
		sb.WriteString("memtier_benchmark not found on PATH: redis-benchmark only.\n")
	}
	return sb.String()
}

// markdownTable renders rows (the first is the header) as a Markdown table
// with the first left columns left-aligned and the rest right-aligned.
func markdownTable(rows [][]string, left int) string {
	width := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, c := range row {
			width[i] = max(width[i], len(c))
		}
	}
	var sb strings.Builder
	line := func(cells []string) {
		sb.WriteString("|")
		for i, c := range cells {
			if i < left {
				fmt.Fprintf(&sb, " %-*s |", width[i], c)
			} else {
				fmt.Fprintf(&sb, " %*s |", width[i], c)
			}
		}
		sb.WriteString("\n")
	}
	line(rows[0])
	sep := make([]string, len(width))
	for i, w := range width {
		if i < left {
			sep[i] = strings.Repeat("-", w)
		} else {
			sep[i] = strings.Repeat("-", w-1) + ":"
		}
	}
	line(sep)
	for _, row := range rows[1:] {
		line(row)
	}
	return sb.String()
}
