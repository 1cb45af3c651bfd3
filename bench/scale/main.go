// Command scale is the multi-core scaling study: slotd on c cores against
// what a Redis user runs on the same c cores, for c = 1..N.
//
// For each core count c it starts, on 127.0.0.1 free ports:
//
//   - slotd: one cluster-mode node owning all 16384 slots, under
//     `taskset -c 0..c-1` (so its event loops and shard actors default to c);
//   - redis: one cluster-mode redis-server owning all slots on the same cores
//     (single-threaded: what one Redis process gives on c cores);
//   - redis-cluster: a Redis cluster of c primaries, primary i pinned to core
//     i (what users scale with today; for c = 1 it is the redis row);
//   - valkey: one valkey-server with io-threads c, when valkey-server is on
//     PATH (skipped with a message otherwise).
//
// and drives each with the cluster-aware load generators at every pipeline
// depth (default 1 and 16): redis-benchmark --cluster (SET, GET; keys
// uniform over -keys with -r) and memtier_benchmark --cluster-mode (SET:GET
// 1:1, keys uniform, --key-pattern R:R, and Zipf-hot, --key-pattern Z:Z with
// --key-zipf-exp -zipf: with exponent 1 over 100000 keys the hottest key takes
// ~8 % of the requests and the top 100 keys ~43 %). redis-benchmark has no
// skewed key generator, so the hot-key rows are memtier's. redis-benchmark
// refuses --cluster against a one-node cluster, so a single node (slotd,
// redis) gets plain redis-benchmark, keys "key:N" spread over all slots; a
// cluster gets --cluster, where each client is bound to one primary and its
// keys carry the hash tag of that primary's first slot (c slots in all).
//
// The load generator runs on the cores the servers do not use (c < N), else
// on all N cores, shared with the servers: on a 2-core machine the c = 2
// points measure a server that competes with its load generator, so
// throughput cannot scale linearly there; server CPU per request is the
// column that stays meaningful.
//
// Runs alternate between the servers (forward order in even rounds,
// reversed in odd ones) for -rounds rounds; the summary holds the median of
// each metric and the median of the per-round ratios against redis-cluster
// and redis. Server CPU per request is the utime+stime of every process of
// the server side (/proc/<pid>/stat) during the run divided by the requests.
//
// Last, with -three, it compares a slotd cluster of 3 primaries with a Redis
// cluster of 3 primaries (memtier --cluster-mode, unpinned, everything on all
// cores), the row of the README's bench table.
//
// Output (in -out, default bench/scale/results): runs.csv (every run),
// summary.csv (medians and ratios), table.md, and the plots rps.png,
// p99.png and cpu.png.
//
// Usage (from the module root):
//
//	go run ./bench/scale [-cores 1,2] [-rounds 5] [-pipelines 1,16]
//	    [-n 200000] [-test-time 3] [-clients 50] [-keys 100000] [-zipf 1]
//	    [-three] [-out DIR] [-slotd PATH] [-redis PATH] [-valkey PATH]
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
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/slotd/slotd/bench/benchkit"
)

type options struct {
	cores     []int
	rounds    int
	pipelines []int
	n         int
	testTime  int
	clients   int
	keys      int
	zipf      float64
	three     bool
	out       string
	slotdBin  string
	redisBin  string
	valkeyBin string
	cpus      []int // the CPUs this process may run on
}

func main() {
	var o options
	var err error
	if o.cpus, err = allowedCPUs(); err != nil {
		fatal(err)
	}
	var cores, pipelines string
	flag.StringVar(&cores, "cores", defaultCores(len(o.cpus)), "comma-separated core counts c")
	flag.IntVar(&o.rounds, "rounds", 5, "alternating rounds; the summary holds medians")
	flag.StringVar(&pipelines, "pipelines", "1,16", "comma-separated pipeline depths")
	flag.IntVar(&o.n, "n", 200000, "redis-benchmark requests per run at pipeline 1 (×min(P,10) at pipeline P)")
	flag.IntVar(&o.testTime, "test-time", 3, "memtier_benchmark seconds per run")
	flag.IntVar(&o.clients, "clients", 50, "connections per load generator (memtier: per primary)")
	flag.IntVar(&o.keys, "keys", 100000, "key space (redis-benchmark -r, memtier --key-maximum)")
	flag.Float64Var(&o.zipf, "zipf", 1, "memtier --key-zipf-exp of the hot-key rows")
	flag.BoolVar(&o.three, "three", true, "also compare a slotd and a Redis cluster of 3 primaries")
	flag.StringVar(&o.out, "out", filepath.Join("bench", "scale", "results"), "output directory")
	flag.StringVar(&o.slotdBin, "slotd", "", "slotd binary (default: build ./cmd/slotd)")
	flag.StringVar(&o.redisBin, "redis", "redis-server", "redis-server binary")
	flag.StringVar(&o.valkeyBin, "valkey", "valkey-server", "valkey-server binary (skipped when not found)")
	flag.Parse()
	if o.cores, err = benchkit.ParseInts(cores); err != nil {
		fatal(fmt.Errorf("-cores: %w", err))
	}
	for _, c := range o.cores {
		if c > len(o.cpus) {
			fatal(fmt.Errorf("-cores: %d is more than the %d CPUs this process may use", c, len(o.cpus)))
		}
	}
	if o.pipelines, err = benchkit.ParseInts(pipelines); err != nil {
		fatal(fmt.Errorf("-pipelines: %w", err))
	}
	if o.rounds <= 0 || o.n <= 0 || o.testTime <= 0 || o.clients <= 0 || o.keys <= 0 || o.zipf <= 0 || o.zipf >= 5 {
		fatal(errors.New("-rounds, -n, -test-time, -clients, -keys must be positive; -zipf in (0, 5)"))
	}
	benchkit.Main("scale", func(ctx context.Context) error { return run(ctx, o) })
}

func fatal(err error) { benchkit.Fatal("scale", err) }

func run(ctx context.Context, o options) error {
	for _, tool := range []string{"redis-benchmark", "memtier_benchmark", "taskset", o.redisBin} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%s not found on PATH", tool)
		}
	}
	valkey := true
	if _, err := exec.LookPath(o.valkeyBin); err != nil {
		valkey = false
		fmt.Printf("note: %s not on PATH: skipping the valkey (io-threads) rows\n", o.valkeyBin)
	}
	tmp, err := os.MkdirTemp("", "slotd-scale-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if o.slotdBin == "" {
		if o.slotdBin, err = benchkit.BuildSlotd(ctx, tmp); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	st := &study{o: o, tmp: tmp, started: time.Now(), load: loadAvg()}
	for _, c := range o.cores {
		if err := st.coreCount(ctx, c, valkey); err != nil {
			return err
		}
	}
	if o.three {
		if err := st.threePrimaries(ctx); err != nil {
			return err
		}
	}
	return st.write()
}

// allowedCPUs returns the CPUs this process may run on, in order.
func allowedCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	var cpus []int
	for i := 0; i < len(set)*64; i++ {
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	return cpus, nil
}

func defaultCores(n int) string {
	s := make([]string, n)
	for i := range s {
		s[i] = strconv.Itoa(i + 1)
	}
	return strings.Join(s, ",")
}

// cpuList renders CPUs for taskset -c.
func cpuList(cpus []int) string {
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, ",")
}
