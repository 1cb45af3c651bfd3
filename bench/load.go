package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/slotd/slotd/bench/benchkit"
)

// measurement is one run of one test against one server.
type measurement struct {
	rps      float64 // requests per second
	p50, p99 float64 // latency, milliseconds
	cpuUS    float64 // server CPU microseconds per request
}

func (m measurement) String() string {
	return fmt.Sprintf("%10.0f rps  p50 %6.3f ms  p99 %6.3f ms  cpu %6.2f µs/req", m.rps, m.p50, m.p99, m.cpuUS)
}

// loadCommand runs a load generator, pinned to core 1 when requested, and
// returns its stdout and the server CPU time used during the run.
func loadCommand(ctx context.Context, o options, s *server, argv ...string) ([]byte, time.Duration, error) {
	if o.cpuPin {
		argv = append([]string{"taskset", "-c", "1"}, argv...)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	before, err := s.cpuTime()
	if err != nil {
		return nil, 0, err
	}
	err = cmd.Run()
	after, cerr := s.cpuTime()
	if ctx.Err() != nil {
		return nil, 0, ctx.Err()
	}
	select {
	case <-s.done:
		return nil, 0, fmt.Errorf("server exited (%v)\n--- %s ---\n%s", s.cmd.ProcessState, s.log, tail(s.log))
	default:
	}
	if err != nil {
		return nil, 0, fmt.Errorf("%v\n%s%s", err, stdout.Bytes(), stderr.Bytes())
	}
	if cerr != nil {
		return nil, 0, fmt.Errorf("server CPU time: %w (did the server exit?)", cerr)
	}
	return stdout.Bytes(), after - before, nil
}

// redisBenchmark runs one redis-benchmark test and parses its --csv output:
// "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
func redisBenchmark(ctx context.Context, o options, s *server, test string, pipeline int) (measurement, error) {
	out, cpu, err := loadCommand(ctx, o, s, "redis-benchmark",
		"-h", "127.0.0.1", "-p", strconv.Itoa(s.port),
		"-t", test, "-n", strconv.Itoa(o.n), "-c", strconv.Itoa(o.clients),
		"-P", strconv.Itoa(pipeline), "-r", "100000", "--csv")
	if err != nil {
		return measurement{}, err
	}
	r, err := benchkit.RedisBenchmarkCSV(out, test)
	if err != nil {
		return measurement{}, err
	}
	return measurement{rps: r.RPS, p50: r.P50, p99: r.P99, cpuUS: perRequest(cpu, o.n)}, nil
}

// memtierBenchmark runs one memtier_benchmark run (SET:GET ratio 1:1 when
// both tests are selected) and returns its totals. memtier 2.3's JSON gives
// the Sets and Gets entries of a mixed run identical latency figures, so the
// run is reported as a single mixed row; CPU is per request of the whole run.
//
// memtier normally gets 2 threads of clients/2 connections; when pinned to
// one core it gets 1 thread of all connections instead, because two threads
// time-slicing one core roughly double its own p99.
func memtierBenchmark(ctx context.Context, o options, s *server, pipeline int, dir string) (measurement, error) {
	threads := 2
	if o.cpuPin {
		threads = 1
	}
	clients := max(1, o.clients/threads)
	perClient := max(1, o.n/(clients*threads))
	ratio := "1:1"
	if len(o.tests) == 1 {
		ratio = map[string]string{"set": "1:0", "get": "0:1"}[o.tests[0]]
	}
	jsonFile := filepath.Join(dir, "memtier.json")
	// memtier now and then writes a JSON file without totals (seen twice in
	// 28 P16 runs, against slotd and redis-server alike): such a run is run
	// again once, and a second one fails the bench with the file's start.
	var err error
	for try := 0; try < 2; try++ {
		os.Remove(jsonFile)
		var cpu time.Duration
		_, cpu, err = loadCommand(ctx, o, s, "memtier_benchmark",
			"-s", "127.0.0.1", "-p", strconv.Itoa(s.port), "--protocol=redis",
			"-c", strconv.Itoa(clients), "-t", strconv.Itoa(threads),
			"--pipeline", strconv.Itoa(pipeline), "--ratio", ratio,
			"--key-maximum", "100000", "-n", strconv.Itoa(perClient),
			"--distinct-client-seed", "--hide-histogram", "--json-out-file", jsonFile)
		if err != nil {
			return measurement{}, err
		}
		var t benchkit.Result
		if t, err = benchkit.MemtierTotals(jsonFile); err == nil {
			return measurement{rps: t.RPS, p50: t.P50, p99: t.P99, cpuUS: perRequest(cpu, int(t.Count))}, nil
		}
		if b, rerr := os.ReadFile(jsonFile); rerr == nil {
			err = fmt.Errorf("%w: %.400s", err, b)
		}
	}
	return measurement{}, err
}

func perRequest(cpu time.Duration, n int) float64 {
	return float64(cpu.Microseconds()) / float64(n)
}
