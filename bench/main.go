// Command bench compares slotd against redis-server on this machine.
//
// It builds slotd (unless -slotd or -slotd-cmd is given), starts slotd and a
// redis-server on free 127.0.0.1 ports, and drives the same load against both
// with redis-benchmark and, when it is on PATH, memtier_benchmark. Runs
// alternate between the two servers (A,B then B,A, ...) for -rounds rounds so
// that drift in machine state hits both equally, and the table reports the
// median of each metric over the rounds:
//
//   - throughput (requests/s), p50 and p99 latency as reported by the tool;
//   - server CPU per request: utime+stime of the server process from
//     /proc/<pid>/stat (100 Hz USER_HZ ticks) across the run, divided by the
//     number of requests in the run.
//
// Ratios are always slotd/redis (above 1 is better for rps, worse for latency
// and CPU), taken as the median of the per-round ratios: the two runs of a
// round are back to back, so this cancels drift between rounds. On a shared
// or virtualised machine rps and p99 drift a lot; CPU per request is the
// steadiest column.
//
// With -cpu-pin (default when at least 2 CPUs are available) the servers are
// started under `taskset -c 0` and the load generators under `taskset -c 1`.
// The load generator needs a whole core of its own; left unpinned it competes
// with the server for CPU and the comparison measures the scheduler instead of
// the server. Note that a pinned slotd sees one CPU, so it runs one event loop
// and one shard actor (plus a spare Go P, see netio.ReserveSpareP), which
// matches single-threaded redis-server; use -cpu-pin=false to let slotd
// spread over all cores.
//
// Usage (from the module root):
//
//	go run ./bench [-n 200000] [-rounds 3] [-pipelines 1,16] [-clients 50]
//	    [-tests get,set] [-shard-actors K] [-cpu-pin] [-out FILE]
//	    [-slotd PATH | -slotd-cmd "CMD ... {port} ..."] [-redis PATH]
//	    [-appendfsync always|everysec|no] [-redis-cmd "CMD ... {port} ..."]
//	    [-scrape-hz F] [-instructions]
//
// -instructions counts the servers' instructions per request under
// callgrind instead of timing them: steady on a busy machine (see
// bench/instructions.go).
//
// -redis-cmd replaces the reference side (the "redis" column) with any
// server, e.g. another slotd build. In -slotd-cmd and -redis-cmd,
// {metricsport} is replaced by a second free port. -scrape-hz scrapes the
// slotd side's /metrics (on {metricsport}) during the whole run.
//
// Cost of tracing and metrics (issue #23), slotd against itself:
//
//	go build -o /tmp/slotd ./cmd/slotd
//	go build -tags slotd_notrace -o /tmp/slotd-notrace ./cmd/slotd
//	# tracing off against tracing compiled out (target: within 3 % at P16)
//	go run ./bench -tests get,set -pipelines 16 -rounds 5 \
//	    -slotd /tmp/slotd -redis-cmd "/tmp/slotd-notrace --port {port} --bind 127.0.0.1 --save '' --appendonly no"
//	# a scrape a second against the port open and not scraped (target: < 1 %)
//	go run ./bench -tests get,set -pipelines 16 -rounds 5 -scrape-hz 1 \
//	    -slotd-cmd "/tmp/slotd --port {port} --bind 127.0.0.1 --save '' --metrics-port {metricsport}" \
//	    -redis-cmd "/tmp/slotd --port {port} --bind 127.0.0.1 --save '' --metrics-port {metricsport}"
//
// -appendfsync runs both servers with appendonly yes and that policy, each
// with its own data dir (SET throughput with the AOF on, e.g.
// go run ./bench -tests set -appendfsync always).
//
// Only 127.0.0.1 is ever used.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/slotd/slotd/bench/benchkit"
)

type options struct {
	n           int
	rounds      int
	pipelines   []int
	clients     int
	tests       []string
	shardActors int
	cpuPin      bool
	out         string
	slotdBin    string
	slotdCmd    string
	redisBin    string
	redisCmd    string
	scrapeHz    float64
	appendfsync string
	instr       bool
}

func main() {
	var o options
	var pipelines, tests string
	flag.IntVar(&o.n, "n", 200000, "requests per run")
	flag.IntVar(&o.rounds, "rounds", 3, "number of alternating A/B rounds; the table shows medians")
	flag.StringVar(&pipelines, "pipelines", "1,16", "comma-separated pipeline depths")
	flag.IntVar(&o.clients, "clients", 50, "concurrent connections (memtier: 2 threads x clients/2, or 1 thread when pinned)")
	flag.StringVar(&tests, "tests", "get,set", "comma-separated tests: get, set, xadd, xreadgroup (bench/streams.go)")
	flag.IntVar(&o.shardActors, "shard-actors", 0, "passed to slotd as --shard-actors (0: slotd's default)")
	flag.BoolVar(&o.cpuPin, "cpu-pin", runtime.NumCPU() >= 2, "pin servers to core 0 and load generators to core 1 with taskset")
	flag.StringVar(&o.out, "out", "", "also write the table as Markdown to this file")
	flag.StringVar(&o.slotdBin, "slotd", "", "slotd binary to use instead of building ./cmd/slotd")
	flag.StringVar(&o.slotdCmd, "slotd-cmd", "", "full command line for the slotd side; {port} is replaced by the port")
	flag.StringVar(&o.redisBin, "redis", "redis-server", "redis-server binary")
	flag.StringVar(&o.redisCmd, "redis-cmd", "", "full command line for the reference side (the redis column), e.g. "+
		"another slotd build; {port} is replaced by the port")
	flag.Float64Var(&o.scrapeHz, "scrape-hz", 0, "GET the slotd side's /metrics this many times a second during "+
		"the whole run (its command must have --metrics-port {metricsport})")
	flag.StringVar(&o.appendfsync, "appendfsync", "", "run both servers with appendonly yes and this appendfsync "+
		"(always, everysec, no), each in its own data dir; empty: no AOF")
	flag.BoolVar(&o.instr, "instructions", false, "count server instructions per request under valgrind's "+
		"callgrind instead of timing (bench/instructions.go)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: go run ./bench [flags]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()

	var err error
	if o.pipelines, err = benchkit.ParseInts(pipelines); err != nil {
		fatal(fmt.Errorf("-pipelines: %w", err))
	}
	if o.tests, err = parseTests(tests); err != nil {
		fatal(fmt.Errorf("-tests: %w", err))
	}
	switch o.appendfsync {
	case "", "always", "everysec", "no":
	default:
		fatal(errors.New("-appendfsync must be always, everysec or no"))
	}
	if o.n <= 0 || o.rounds <= 0 || o.clients <= 0 {
		fatal(errors.New("-n, -rounds and -clients must be positive"))
	}

	benchkit.Main("bench", func(ctx context.Context) error { return run(ctx, o) })
}

func fatal(err error) { benchkit.Fatal("bench", err) }

func run(ctx context.Context, o options) error {
	if _, err := exec.LookPath("redis-benchmark"); err != nil {
		return errors.New("redis-benchmark not found on PATH (apt-get install redis-tools)")
	}
	if o.cpuPin {
		if _, err := exec.LookPath("taskset"); err != nil {
			fmt.Println("note: taskset not found, running without CPU pinning")
			o.cpuPin = false
		}
	}
	memtier := true
	if _, err := exec.LookPath("memtier_benchmark"); err != nil {
		memtier = false
	}
	for _, t := range o.tests {
		if streamTests[t] {
			memtier = false // memtier's SET:GET mix has no stream form
		}
	}

	tmp, err := os.MkdirTemp("", "slotd-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	slotdCmd, err := slotdCommand(ctx, o, tmp)
	if err != nil {
		return err
	}
	redisCmd := o.redisBin + " --port {port} --bind 127.0.0.1 --save '' --appendonly no"
	if o.redisCmd != "" {
		redisCmd = o.redisCmd
	}
	if o.instr {
		return runInstructions(ctx, o, slotdCmd, redisCmd, tmp)
	}
	aofNote := ""
	if o.appendfsync != "" {
		// The same AOF settings on both sides; the later --appendonly wins.
		for _, side := range []struct {
			cmd  *string
			name string
		}{{&slotdCmd, "slotd"}, {&redisCmd, "redis"}} {
			d := filepath.Join(tmp, side.name+"-data")
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
			*side.cmd += " --dir " + shellQuote(d) + " --appendonly yes --appendfsync " + o.appendfsync
		}
		aofNote = fmt.Sprintf("\nappendonly yes, appendfsync %s on both servers", o.appendfsync)
	}

	// Servers are stopped by the deferred calls on every exit path,
	// including SIGINT (which cancels ctx and makes run return).
	slotd, err := startServer(ctx, "slotd", slotdCmd, tmp, o.cpuPin)
	if err != nil {
		return err
	}
	defer slotd.stop()
	redis, err := startServer(ctx, "redis", redisCmd, tmp, o.cpuPin)
	if err != nil {
		return err
	}
	defer redis.stop()

	fmt.Printf("slotd: %s (pid %d, port %d)\n", quoteArgs(slotd.argv), slotd.pid(), slotd.port)
	fmt.Printf("redis: %s (pid %d, port %d)\n", quoteArgs(redis.argv), redis.pid(), redis.port)
	header := fmt.Sprintf("n=%d rounds=%d clients=%d pipelines=%v tests=%v cpus=%d cpu-pin=%v",
		o.n, o.rounds, o.clients, o.pipelines, o.tests, runtime.NumCPU(), o.cpuPin)
	header += aofNote
	if !memtier {
		header += "\nmemtier_benchmark not found on PATH: redis-benchmark only"
	}
	if o.scrapeHz > 0 {
		if slotd.metricsPort == 0 {
			return errors.New("-scrape-hz: the slotd command has no --metrics-port {metricsport}")
		}
		sc := startScraper(ctx, slotd.metricsPort, o.scrapeHz)
		defer func() { fmt.Println(sc.stop()) }()
		header += fmt.Sprintf("\nslotd side scraped: GET /metrics %.3g times a second", o.scrapeHz)
	}
	fmt.Println(header)

	res := newResults()
	servers := []*server{slotd, redis}
	for r := 0; r < o.rounds; r++ {
		// Alternate which server goes first in each round.
		order := servers
		if r%2 == 1 {
			order = []*server{redis, slotd}
		}
		for _, p := range o.pipelines {
			// SET runs before GET so that GET mostly hits keys.
			for _, t := range o.tests {
				for _, s := range order {
					run := redisBenchmark
					if streamTests[t] {
						run = streamBenchmark
					}
					m, err := run(ctx, o, s, t, p)
					if err != nil {
						return fmt.Errorf("%s: redis-benchmark %s P%d: %w", s.name, t, p, err)
					}
					res.add(key{"redis-benchmark", t, p}, s.name, m)
					fmt.Printf("round %d/%d redis-benchmark %-7s P%-2d %-5s %s\n", r+1, o.rounds, t, p, s.name, m)
				}
			}
			if !memtier {
				continue
			}
			for _, s := range order {
				m, err := memtierBenchmark(ctx, o, s, p, tmp)
				if err != nil {
					return fmt.Errorf("%s: memtier_benchmark P%d: %w", s.name, p, err)
				}
				t := strings.Join(o.tests, "+")
				res.add(key{"memtier", t, p}, s.name, m)
				fmt.Printf("round %d/%d memtier         %-7s P%-2d %-5s %s\n", r+1, o.rounds, t, p, s.name, m)
			}
		}
	}

	table := res.markdown(o, memtier)
	fmt.Println()
	fmt.Println(table)
	if o.out != "" {
		doc := "# slotd vs redis-server\n\n" + strings.ReplaceAll(header, "\n", "  \n") + "\n\n" + table
		if err := os.WriteFile(o.out, []byte(doc), 0o644); err != nil {
			return err
		}
		fmt.Println("wrote", o.out)
	}
	return nil
}

// slotdCommand returns the command line template for the slotd side,
// building ./cmd/slotd into tmp when neither -slotd nor -slotd-cmd is set.
func slotdCommand(ctx context.Context, o options, tmp string) (string, error) {
	if o.slotdCmd != "" {
		return o.slotdCmd, nil
	}
	bin := o.slotdBin
	if bin == "" {
		var err error
		if bin, err = benchkit.BuildSlotd(ctx, tmp); err != nil {
			return "", err
		}
	}
	cmd := shellQuote(bin) + " --port {port} --bind 127.0.0.1 --save '' --appendonly no"
	if o.shardActors > 0 {
		cmd += " --shard-actors " + strconv.Itoa(o.shardActors)
	}
	return cmd, nil
}

// parseTests returns the requested tests in execution order: set before get,
// so that GET runs find most keys present.
func parseTests(s string) ([]string, error) {
	want := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		t := strings.ToLower(strings.TrimSpace(f))
		if t != "get" && t != "set" && !streamTests[t] {
			return nil, fmt.Errorf("unknown test %q (want get, set, xadd, xreadgroup)", f)
		}
		want[t] = true
	}
	var out []string
	for _, t := range []string{"set", "get", "xadd", "xreadgroup"} {
		if want[t] {
			out = append(out, t)
		}
	}
	return out, nil
}
