package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/slotd/slotd/bench/benchkit"
)

// point is one load: a tool, a test, a pipeline depth and a key
// distribution ("uniform" or "zipf").
type point struct {
	tool     string // "redis-benchmark" or "memtier"
	test     string // "SET", "GET" or "SET+GET"
	pipeline int
	keys     string
}

func (p point) String() string {
	return fmt.Sprintf("%s %s P%d %s", p.tool, p.test, p.pipeline, p.keys)
}

// points lists the loads of the study, in run order per pipeline depth
// (SET before GET, so that GET mostly finds its keys).
func (o options) points() []point {
	var out []point
	for _, p := range o.pipelines {
		out = append(out,
			point{"redis-benchmark", "SET", p, "uniform"},
			point{"redis-benchmark", "GET", p, "uniform"},
			point{"memtier", "SET+GET", p, "uniform"},
			point{"memtier", "SET+GET", p, "zipf"})
	}
	return out
}

// measurement is one run of one point against one side.
type measurement struct {
	rps, p50, p99 float64 // requests/s; latency in ms
	cpuUS         float64 // server CPU µs per request (all processes of the side)
	requests      int64
}

func (m measurement) String() string {
	return fmt.Sprintf("%9.0f rps  p50 %6.3f ms  p99 %6.3f ms  cpu %6.2f µs/req", m.rps, m.p50, m.p99, m.cpuUS)
}

// measure runs pt against s with the load generator on loadCPUs.
func (st *study) measure(ctx context.Context, s *side, pt point, loadCPUs []int) (measurement, error) {
	threads := len(loadCPUs)
	var argv []string
	jsonOut := filepath.Join(st.tmp, "memtier.json")
	requests := int64(0)
	switch pt.tool {
	case "redis-benchmark":
		requests = int64(st.o.n * min(pt.pipeline, 10))
		argv = []string{"redis-benchmark", "-h", "127.0.0.1", "-p", strconv.Itoa(s.entry().Port)}
		if len(s.procs) > 1 {
			// redis-benchmark refuses --cluster for a one-node cluster
			// (which needs no routing anyway).
			argv = append(argv, "--cluster")
		}
		argv = append(argv, "-t", strings.ToLower(pt.test), "-n", strconv.FormatInt(requests, 10), "-c", strconv.Itoa(st.o.clients),
			"-P", strconv.Itoa(pt.pipeline), "-r", strconv.Itoa(st.o.keys), "--csv")
		if threads > 1 {
			argv = append(argv, "--threads", strconv.Itoa(threads))
		}
	case "memtier":
		_ = os.Remove(jsonOut)
		pattern := "R:R"
		if pt.keys == "zipf" {
			pattern = "Z:Z"
		}
		argv = []string{"memtier_benchmark", "--cluster-mode", "-s", "127.0.0.1", "-p", strconv.Itoa(s.entry().Port),
			"--protocol=redis", "-t", strconv.Itoa(threads), "-c", strconv.Itoa(max(1, st.o.clients/threads)),
			"--pipeline", strconv.Itoa(pt.pipeline), "--ratio", "1:1", "--key-pattern", pattern,
			"--key-minimum", "1", "--key-maximum", strconv.Itoa(st.o.keys),
			"--test-time", strconv.Itoa(st.o.testTime), "--distinct-client-seed", "--hide-histogram",
			"--json-out-file", jsonOut}
		if pt.keys == "zipf" {
			argv = append(argv, "--key-zipf-exp", strconv.FormatFloat(st.o.zipf, 'g', -1, 64))
		}
	}
	argv = append([]string{"taskset", "-c", cpuList(loadCPUs)}, argv...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	before, err := s.cpu()
	if err != nil {
		return measurement{}, err
	}
	runErr := cmd.Run()
	after, cpuErr := s.cpu()
	if ctx.Err() != nil {
		return measurement{}, ctx.Err()
	}
	if err := s.check(); err != nil {
		return measurement{}, err
	}
	if runErr != nil {
		return measurement{}, fmt.Errorf("%s: %v\n%s%s", strings.Join(argv, " "), runErr, stdout.Bytes(), stderr.Bytes())
	}
	if cpuErr != nil {
		return measurement{}, cpuErr
	}
	var r benchkit.Result
	if pt.tool == "redis-benchmark" {
		r, err = benchkit.RedisBenchmarkCSV(stdout.Bytes(), strings.ToLower(pt.test))
	} else {
		r, err = benchkit.MemtierTotals(jsonOut)
		requests = r.Count
	}
	if err != nil {
		return measurement{}, err
	}
	return measurement{rps: r.RPS, p50: r.P50, p99: r.P99, requests: requests,
		cpuUS: float64((after - before).Microseconds()) / float64(requests)}, nil
}
