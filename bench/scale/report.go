package main

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// row is one line of summary.csv: the medians of one side at one point.
type row struct {
	section string
	cores   int
	side    string
	pt      point
	n       int // rounds
	rps     float64
	p50     float64
	p99     float64
	cpu     float64
	// Medians of per-round ratios against the references (NaN: none):
	// redis-cluster (redis-3 in "three") and redis.
	rpsVsCluster, rpsVsRedis float64
	cpuVsCluster, cpuVsRedis float64
	// scaling is rps(c) / (c × rps(1)) of this side (NaN without c = 1).
	scaling float64
}

// series returns the runs of side at a point in round order. The Redis
// cluster of one primary is the single redis-server: its c = 1 series is
// the redis one.
func (st *study) series(section string, cores int, side string, pt point) []measurement {
	if section == "cores" && cores == 1 && side == "redis-cluster" {
		side = "redis"
	}
	var out []measurement
	for _, r := range st.runs {
		if r.section == section && r.cores == cores && r.side == side && r.pt == pt {
			out = append(out, r.m)
		}
	}
	return out
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func medianOf(ms []measurement, f func(measurement) float64) float64 {
	v := make([]float64, len(ms))
	for i, m := range ms {
		v[i] = f(m)
	}
	return median(v)
}

// pairedRatio is the median over rounds of f(a)/f(b): the runs of one round
// were back to back, so drift between rounds cancels.
func pairedRatio(a, b []measurement, f func(measurement) float64) float64 {
	var v []float64
	for i := range min(len(a), len(b)) {
		if f(b[i]) != 0 {
			v = append(v, f(a[i])/f(b[i]))
		}
	}
	return median(v)
}

func rpsOf(m measurement) float64 { return m.rps }
func p50Of(m measurement) float64 { return m.p50 }
func p99Of(m measurement) float64 { return m.p99 }
func cpuOf(m measurement) float64 { return m.cpuUS }

// summary computes the rows of every side, point and core count measured.
func (st *study) summary() []row {
	type k struct {
		section string
		cores   int
		side    string
		pt      point
	}
	var keys []k
	seen := map[k]bool{}
	for _, r := range st.runs {
		key := k{r.section, r.cores, r.side, r.pt}
		if !seen[key] {
			seen[key] = true
			keys = append(keys, key)
		}
		if r.section == "cores" && r.cores == 1 && r.side == "redis" {
			alias := k{r.section, 1, "redis-cluster", r.pt}
			if !seen[alias] {
				seen[alias] = true
				keys = append(keys, alias)
			}
		}
	}
	var rows []row
	for _, key := range keys {
		ms := st.series(key.section, key.cores, key.side, key.pt)
		r := row{section: key.section, cores: key.cores, side: key.side, pt: key.pt, n: len(ms),
			rps: medianOf(ms, rpsOf), p50: medianOf(ms, p50Of), p99: medianOf(ms, p99Of), cpu: medianOf(ms, cpuOf),
			rpsVsCluster: math.NaN(), rpsVsRedis: math.NaN(), cpuVsCluster: math.NaN(), cpuVsRedis: math.NaN(),
			scaling: math.NaN()}
		clusterRef, redisRef := "redis-cluster", "redis"
		if key.section == "three" {
			clusterRef, redisRef = "redis-3", ""
		}
		if key.side != clusterRef && key.side != redisRef {
			ref := st.series(key.section, key.cores, clusterRef, key.pt)
			r.rpsVsCluster, r.cpuVsCluster = pairedRatio(ms, ref, rpsOf), pairedRatio(ms, ref, cpuOf)
			if redisRef != "" {
				ref = st.series(key.section, key.cores, redisRef, key.pt)
				r.rpsVsRedis, r.cpuVsRedis = pairedRatio(ms, ref, rpsOf), pairedRatio(ms, ref, cpuOf)
			}
		}
		if key.section == "cores" {
			if one := st.series("cores", 1, key.side, key.pt); len(one) > 0 {
				r.scaling = r.rps / (float64(key.cores) * medianOf(one, rpsOf))
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// write puts runs.csv, summary.csv, table.md and the plots into o.out.
func (st *study) write() error {
	rows := st.summary()
	runs := [][]string{{"section", "cores", "side", "tool", "test", "pipeline", "keys", "round", "load_cpus",
		"rps", "p50_ms", "p99_ms", "cpu_us_per_req", "requests"}}
	for _, r := range st.runs {
		runs = append(runs, []string{r.section, strconv.Itoa(r.cores), r.side, r.pt.tool, r.pt.test,
			strconv.Itoa(r.pt.pipeline), r.pt.keys, strconv.Itoa(r.round), r.loadCPUs, f0(r.m.rps), f3(r.m.p50),
			f3(r.m.p99), f3(r.m.cpuUS), strconv.FormatInt(r.m.requests, 10)})
	}
	sum := [][]string{{"section", "cores", "side", "tool", "test", "pipeline", "keys", "rounds", "rps", "p50_ms",
		"p99_ms", "cpu_us_per_req", "rps_x_redis_cluster", "rps_x_redis", "cpu_x_redis_cluster", "cpu_x_redis",
		"scaling"}}
	for _, r := range rows {
		sum = append(sum, []string{r.section, strconv.Itoa(r.cores), r.side, r.pt.tool, r.pt.test,
			strconv.Itoa(r.pt.pipeline), r.pt.keys, strconv.Itoa(r.n), f0(r.rps), f3(r.p50), f3(r.p99), f3(r.cpu),
			f3(r.rpsVsCluster), f3(r.rpsVsRedis), f3(r.cpuVsCluster), f3(r.cpuVsRedis), f3(r.scaling)})
	}
	for name, recs := range map[string][][]string{"runs.csv": runs, "summary.csv": sum} {
		if err := writeCSV(filepath.Join(st.o.out, name), recs); err != nil {
			return err
		}
	}
	md := st.markdown(rows)
	if err := os.WriteFile(filepath.Join(st.o.out, "table.md"), []byte(md), 0o644); err != nil {
		return err
	}
	if err := st.plots(rows); err != nil {
		return err
	}
	fmt.Println()
	fmt.Print(md)
	fmt.Println("wrote", filepath.Join(st.o.out, "{runs.csv,summary.csv,table.md,rps.png,p99.png,cpu.png}"))
	return nil
}

func writeCSV(path string, recs [][]string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	if err := w.WriteAll(recs); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func f0(v float64) string { return fmtNum(v, 0) }
func f2(v float64) string { return fmtNum(v, 2) }
func f3(v float64) string { return fmtNum(v, 3) }

func fmtNum(v float64, prec int) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// markdown renders the summary as the tables the README shows.
func (st *study) markdown(rows []row) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "# slotd multi-core scaling study\n\n%s\n\n", st.machine())
	find := func(section string, cores int, side string, pt point) (row, bool) {
		for _, r := range rows {
			if r.section == section && r.cores == cores && r.side == side && r.pt == pt {
				return r, true
			}
		}
		return row{}, false
	}
	sb.WriteString("## slotd on c cores vs one redis-server and a Redis cluster of c primaries on the same cores\n\n")
	sb.WriteString("| load | c | slotd rps | redis rps | redis-cluster rps | slotd ×cluster | slotd ×redis | slotd scaling | " +
		"slotd p50/p99 ms | cluster p50/p99 ms | slotd CPU µs/req | cluster CPU µs/req | CPU ×cluster | CPU ×redis |\n")
	sb.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, pt := range st.o.points() {
		for _, c := range st.o.cores {
			s, ok := find("cores", c, "slotd", pt)
			if !ok {
				continue
			}
			rd, _ := find("cores", c, "redis", pt)
			cl, _ := find("cores", c, "redis-cluster", pt)
			fmt.Fprintf(&sb, "| %s | %d | %s | %s | %s | %s | %s | %s | %s/%s | %s/%s | %s | %s | %s | %s |\n",
				pt, c, f0(s.rps), f0(rd.rps), f0(cl.rps), f2(s.rpsVsCluster), f2(s.rpsVsRedis), pct(s.scaling),
				f3(s.p50), f3(s.p99), f3(cl.p50), f3(cl.p99), f2(s.cpu), f2(cl.cpu), f2(s.cpuVsCluster), f2(s.cpuVsRedis))
		}
	}
	for _, side := range []string{"valkey"} {
		for _, r := range rows {
			if r.side == side {
				fmt.Fprintf(&sb, "\n%s rows are in summary.csv.\n", side)
				break
			}
		}
	}
	var three []row
	for _, r := range rows {
		if r.section == "three" && r.side == "slotd-3" {
			three = append(three, r)
		}
	}
	if len(three) > 0 {
		sb.WriteString("\n## A slotd cluster of 3 primaries vs a Redis cluster of 3 primaries (memtier --cluster-mode, unpinned)\n\n")
		sb.WriteString("| load | slotd rps | redis rps | rps ratio | slotd p99 ms | redis p99 ms | slotd CPU µs/req | redis CPU µs/req | CPU ratio |\n")
		sb.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
		for _, s := range three {
			rd, _ := find("three", 0, "redis-3", s.pt)
			fmt.Fprintf(&sb, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", s.pt, f0(s.rps), f0(rd.rps),
				f2(s.rpsVsCluster), f3(s.p99), f3(rd.p99), f2(s.cpu), f2(rd.cpu), f2(s.cpuVsCluster))
		}
	}
	fmt.Fprintf(&sb, "\nMedians of %d alternating rounds; ratios are medians of per-round ratios (slotd/other: above 1 "+
		"is better for rps, worse for CPU). Scaling is rps(c)/(c·rps(1)). CPU is the servers' user+system time per "+
		"request (/proc, 10 ms ticks). At c = 1 the Redis cluster is the one redis-server. The load generator runs "+
		"on the CPUs the servers do not use, or on all CPUs when c = every CPU (then it competes with the servers).\n",
		st.o.rounds)
	return sb.String()
}

func pct(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.Itoa(int(math.Round(v*100))) + " %"
}

// machine describes where and when the study ran.
func (st *study) machine() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	commit := "unknown commit"
	if b, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		commit = strings.TrimSpace(string(b))
	}
	redis := ""
	if b, err := exec.Command(st.o.redisBin, "--version").Output(); err == nil {
		redis = strings.TrimSpace(string(b))
	}
	return fmt.Sprintf("%s, %d CPUs (%s), %s/%s; slotd at %s; %s; %s, %d rounds in %s; load average %s at the "+
		"start, %s at the end (other work on the machine).\n\nCommand: `go run ./bench/scale %s`",
		st.started.Format("2006-01-02"), len(st.o.cpus), model, runtime.GOOS, runtime.GOARCH, commit, redis,
		fmt.Sprintf("redis-benchmark -n %d (×min(P,10)), memtier %d s per run, %d clients, %d keys, zipf %g",
			st.o.n, st.o.testTime, st.o.clients, st.o.keys, st.o.zipf),
		st.o.rounds, time.Since(st.started).Round(time.Second), st.load, loadAvg(), strings.Join(os.Args[1:], " "))
}

// loadAvg is the 1-minute load average (/proc/loadavg), "?" when unknown.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}
