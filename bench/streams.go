package main

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"

	"github.com/slotd/slotd/bench/benchkit"
)

// Stream tests, run with redis-benchmark's arbitrary-command mode:
//
//   - xadd: XADD bench:stream * field value (auto IDs, one stream);
//   - xreadgroup: XREADGROUP GROUP g c COUNT 1 STREAMS bench:stream >, each
//     call delivering one new entry and adding it to the group's pending
//     list; the stream is refilled (unmeasured) with more entries than the
//     run reads before each run.
var streamTests = map[string]bool{"xadd": true, "xreadgroup": true}

const benchStream = "bench:stream"

func streamBenchmark(ctx context.Context, o options, s *server, test string, pipeline int) (measurement, error) {
	port := strconv.Itoa(s.port)
	cli := func(args ...string) error {
		out, err := exec.CommandContext(ctx, "redis-cli", append([]string{"-h", "127.0.0.1", "-p", port}, args...)...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("redis-cli %v: %v: %s", args, err, out)
		}
		return nil
	}
	if err := cli("DEL", benchStream); err != nil {
		return measurement{}, err
	}
	cmd := []string{"XADD", benchStream, "*", "field", "value"}
	if test == "xreadgroup" {
		if err := cli("XGROUP", "CREATE", benchStream, "g", "0", "MKSTREAM"); err != nil {
			return measurement{}, err
		}
		fill := exec.CommandContext(ctx, "redis-benchmark", "-h", "127.0.0.1", "-p", port,
			"-n", strconv.Itoa(o.n+o.n/5), "-c", "20", "-P", "64", "-q", "XADD", benchStream, "*", "field", "value")
		if out, err := fill.CombinedOutput(); err != nil {
			return measurement{}, fmt.Errorf("filling the stream: %v: %s", err, out)
		}
		cmd = []string{"XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", benchStream, ">"}
	}
	argv := append([]string{"redis-benchmark", "-h", "127.0.0.1", "-p", port, "-n", strconv.Itoa(o.n),
		"-c", strconv.Itoa(o.clients), "-P", strconv.Itoa(pipeline), "--csv"}, cmd...)
	out, cpu, err := loadCommand(ctx, o, s, argv...)
	if err != nil {
		return measurement{}, err
	}
	r, err := benchkit.RedisBenchmarkCSV(out, test)
	if err != nil {
		return measurement{}, err
	}
	return measurement{rps: r.RPS, p50: r.P50, p99: r.P99, cpuUS: perRequest(cpu, o.n)}, nil
}
