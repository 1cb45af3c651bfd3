// Command replica measures what replication costs a primary: SET
// throughput of a standalone primary without replicas (A), with one real
// replica process of the same kind (B1), and with one "remote" replica
// simulated in this process (B2), for slotd and redis-server side by side.
//
// B2's replica does the replica handshake (REPLCONF, PSYNC ? -1), then
// reads and discards the stream and acknowledges its offset every second,
// so it isolates the primary's own cost of replication from the replica's
// cost of applying it, which on a small machine competes for the same
// cores as the primary and the load generator.
//
// Every run gets a fresh primary (a primary that ever had a replica keeps
// its backlog on, which A must not pay). B runs start measuring once the
// initial sync is done (the primary reports the replica online), and
// count only if afterwards the replica acknowledged the primary's final
// offset on the same link: no new full or partial sync, still one
// connected replica; for B1 also equal DEBUG DIGEST and DBSIZE on both
// sides. Runs that fail the check are reported as invalid and left out.
//
// Runs alternate between the server kinds and between scenario orders
// (A,B1,B2 then B2,B1,A) round by round; the table gives median rates and
// the medians of the per-round ratios B1/A and B2/A.
//
// With -cpu-pin (default on 2+ CPUs) primaries run on core 0, the load
// generator and this process (the B2 replica) on core 1 (taskset); the
// real replica runs where -replica-cpus says (default: any CPU).
// -cpuprofile DIR makes slotd primaries write a Go CPU profile per run
// into DIR.
//
// Usage (from the module root):
//
//	go run ./bench/replica [-rounds 5] [-n 200000] [-clients 50] [-pipelines 1,16]
//	    [-tools redis-benchmark,memtier] [-scenarios A,B1,B2] [-kinds slotd,redis]
//	    [-slotd PATH] [-redis PATH] [-cpu-pin] [-replica-cpus LIST] [-cpuprofile DIR]
//	    [-slotd-args "ARGS"] [-redis-args "ARGS"]
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

type options struct {
	n, rounds, clients int
	pipelines          []int
	tools, scenarios   []string
	kinds              []string
	slotdBin, redisBin string
	primaryCPU         string
	loadCPU            string
	replicaCPU         string
	cpuProfile         string              // set per run when profiling
	extra              map[string][]string // per kind: directives for its servers
	profileDir         string
}

func main() {
	var o options
	var pipelines, tools, scenarios, kinds string
	var pin bool
	flag.IntVar(&o.n, "n", 200000, "SET requests per run")
	flag.IntVar(&o.rounds, "rounds", 3, "alternating rounds; the table shows medians")
	flag.IntVar(&o.clients, "clients", 50, "load generator connections")
	flag.StringVar(&pipelines, "pipelines", "1,16", "pipeline depths")
	defTools := "redis-benchmark"
	if _, err := exec.LookPath("memtier_benchmark"); err == nil {
		defTools += ",memtier"
	}
	flag.StringVar(&tools, "tools", defTools, "load generators: redis-benchmark, memtier")
	flag.StringVar(&scenarios, "scenarios", "A,B1,B2", "A: no replica, B1: real replica process, B2: simulated replica")
	flag.StringVar(&kinds, "kinds", "slotd,redis", "server kinds")
	flag.StringVar(&o.slotdBin, "slotd", "", "slotd binary (default: build ./cmd/slotd)")
	flag.StringVar(&o.redisBin, "redis", "redis-server", "redis-server binary")
	flag.BoolVar(&pin, "cpu-pin", runtime.NumCPU() >= 2, "pin primaries to core 0 and the load generator to core 1")
	flag.StringVar(&o.replicaCPU, "replica-cpus", "", "taskset CPU list for the B1 replica (empty: all CPUs)")
	flag.StringVar(&o.profileDir, "cpuprofile", "", "directory for slotd primaries' CPU profiles (one per run)")
	slotdArgs := flag.String("slotd-args", "", "extra arguments for every slotd (space-separated, e.g. \"--repl-backlog-size 16kb\")")
	redisArgs := flag.String("redis-args", "", "extra arguments for every redis-server (space-separated)")
	flag.Parse()
	o.extra = map[string][]string{"slotd": strings.Fields(*slotdArgs), "redis": strings.Fields(*redisArgs)}
	if err := o.parse(pipelines, tools, scenarios, kinds, pin); err != nil {
		fatal(err)
	}
	if err := run(&o); err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "replica bench:", err)
	os.Exit(1)
}

func (o *options) parse(pipelines, tools, scenarios, kinds string, pin bool) error {
	for _, f := range strings.Split(pipelines, ",") {
		p, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || p < 1 {
			return fmt.Errorf("bad -pipelines %q", pipelines)
		}
		o.pipelines = append(o.pipelines, p)
	}
	var err error
	if o.tools, err = pick(tools, "redis-benchmark", "memtier"); err != nil {
		return err
	}
	if o.scenarios, err = pick(scenarios, "A", "B1", "B2"); err != nil {
		return err
	}
	if o.kinds, err = pick(kinds, "slotd", "redis"); err != nil {
		return err
	}
	if o.n < 1 || o.rounds < 1 || o.clients < 1 {
		return errors.New("-n, -rounds and -clients must be positive")
	}
	if pin {
		if _, err := exec.LookPath("taskset"); err != nil {
			fmt.Println("note: no taskset, running unpinned")
		} else {
			o.primaryCPU, o.loadCPU = "0", "1"
			// This process (the B2 replica) shares the load generator's
			// core: left unpinned, where the scheduler happens to put it
			// on a busy machine changed A and B2 rates by 2-4x.
			out, err := exec.Command("taskset", "-a", "-p", "-c", o.loadCPU, strconv.Itoa(os.Getpid())).CombinedOutput()
			if err != nil {
				return fmt.Errorf("pinning the bench process: %v\n%s", err, out)
			}
			if o.replicaCPU == "" {
				o.replicaCPU = fmt.Sprintf("0-%d", runtime.NumCPU()-1) // undo the inherited pin
			}
		}
	}
	return nil
}

// pick splits a comma list and checks each item against the allowed
// values, keeping their canonical spelling and order of mention.
func pick(list string, allowed ...string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		ok := false
		for _, a := range allowed {
			if strings.EqualFold(f, a) {
				out, ok = append(out, a), true
			}
		}
		if !ok {
			return nil, fmt.Errorf("unknown %q (want %s)", f, strings.Join(allowed, ", "))
		}
	}
	return out, nil
}

// cell identifies one table row.
type cell struct {
	kind, tool string
	pipeline   int
}

type results struct {
	rates   map[cell]map[string][]float64 // scenario -> rates of valid runs
	cpu     map[cell]map[string][]float64 // scenario -> primary CPU µs per SET
	ratios  map[cell]map[string][]float64 // "B1/A", "cpu B1", ... -> per-round ratios
	invalid map[cell]int
	order   []cell
}

func run(o *options) error {
	tmp, err := os.MkdirTemp("", "slotd-replica-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if o.slotdBin == "" && contains(o.kinds, "slotd") {
		o.slotdBin = filepath.Join(tmp, "slotd")
		fmt.Println("building slotd: go build -o", o.slotdBin, "./cmd/slotd")
		if out, err := exec.Command("go", "build", "-o", o.slotdBin, "./cmd/slotd").CombinedOutput(); err != nil {
			return fmt.Errorf("building slotd: %v\n%s", err, out)
		}
	}
	if o.profileDir != "" {
		if err := os.MkdirAll(o.profileDir, 0o755); err != nil {
			return err
		}
	}
	fmt.Printf("n=%d rounds=%d clients=%d pipelines=%v tools=%v cpus=%d primary-cpus=%q load-cpus=%q replica-cpus=%q\n",
		o.n, o.rounds, o.clients, o.pipelines, o.tools, runtime.NumCPU(), o.primaryCPU, o.loadCPU, o.replicaCPU)
	res := &results{rates: map[cell]map[string][]float64{}, ratios: map[cell]map[string][]float64{},
		cpu: map[cell]map[string][]float64{}, invalid: map[cell]int{}}
	shown := map[string]bool{}
	for r := 0; r < o.rounds; r++ {
		kinds, scen := o.kinds, o.scenarios
		if r%2 == 1 {
			kinds, scen = reversed(kinds), reversed(scen)
		}
		for _, k := range kinds {
			for _, tool := range o.tools {
				for _, p := range o.pipelines {
					c := cell{k, tool, p}
					if res.rates[c] == nil {
						res.rates[c], res.ratios[c] = map[string][]float64{}, map[string][]float64{}
						res.cpu[c] = map[string][]float64{}
						res.order = append(res.order, c)
					}
					got := map[string]measured{}
					for _, s := range scen {
						o.cpuProfile = ""
						if o.profileDir != "" && k == "slotd" {
							o.cpuProfile, _ = filepath.Abs(filepath.Join(o.profileDir,
								fmt.Sprintf("%s-%s-P%d-r%d.prof", s, tool, p, r+1)))
						}
						m, lines, err := once(o, tmp, k, s, tool, p)
						for _, l := range lines {
							// Once per role and load (ports and dirs change per run).
							role, _, _ := strings.Cut(l, ": ")
							if strings.HasPrefix(l, "load") {
								role += fmt.Sprint(k, tool, p)
							}
							if !shown[role] {
								shown[role] = true
								fmt.Println("  " + l)
							}
						}
						var inv *invalidRun
						if errors.As(err, &inv) {
							res.invalid[c]++
							fmt.Printf("round %d %-5s %-15s P%-2d %-2s INVALID: %v\n", r+1, k, tool, p, s, inv.why)
							continue
						}
						if err != nil {
							return fmt.Errorf("%s %s P%d %s: %w", k, tool, p, s, err)
						}
						got[s] = m
						res.rates[c][s] = append(res.rates[c][s], m.rps)
						res.cpu[c][s] = append(res.cpu[c][s], m.cpuUS)
						fmt.Printf("round %d %-5s %-15s P%-2d %-2s %10.0f rps %6.2f µs/SET\n", r+1, k, tool, p, s, m.rps, m.cpuUS)
					}
					for _, b := range []string{"B1", "B2"} {
						a, bm := got["A"], got[b]
						if a.rps > 0 && bm.rps > 0 {
							res.ratios[c][b+"/A"] = append(res.ratios[c][b+"/A"], bm.rps/a.rps)
						}
						if a.cpuUS > 0 && bm.cpuUS > 0 {
							res.ratios[c]["cpu "+b] = append(res.ratios[c]["cpu "+b], a.cpuUS/bm.cpuUS)
						}
					}
				}
			}
		}
	}
	fmt.Println()
	fmt.Println("| server | tool | P | A rps | B1 rps | B2 rps | B1/A | B2/A | " +
		"A µs/SET | B1 µs/SET | B2 µs/SET | cpu A/B1 | cpu A/B2 | invalid runs |")
	fmt.Println("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, c := range res.order {
		fmt.Printf("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d |\n",
			c.kind, c.tool, c.pipeline,
			rate(res.rates[c]["A"]), rate(res.rates[c]["B1"]), rate(res.rates[c]["B2"]),
			ratio(res.ratios[c]["B1/A"]), ratio(res.ratios[c]["B2/A"]),
			ratio(res.cpu[c]["A"]), ratio(res.cpu[c]["B1"]), ratio(res.cpu[c]["B2"]),
			ratio(res.ratios[c]["cpu B1"]), ratio(res.ratios[c]["cpu B2"]), res.invalid[c])
	}
	fmt.Println("\nrps: the load generator's SET rate; µs/SET: primary CPU (user+sys) per SET during the run;" +
		"\ncpu A/B: median per-round ratio of µs/SET, the rate ratio a CPU-bound primary would reach.")
	return nil
}

// measured is one valid run: the load generator's SET rate and the
// primary's CPU time per SET (user+system, all threads, 10 ms ticks).
type measured struct{ rps, cpuUS float64 }

// invalidRun is a B run whose replication check failed.
type invalidRun struct{ why string }

func (e *invalidRun) Error() string { return e.why }

// once runs one scenario on a fresh primary and returns its SET rate and
// the command lines it used.
func once(o *options, tmp, kind, scenario, tool string, pipeline int) (run measured, lines []string, err error) {
	prim, err := launch(o, kind, tmp, o.primaryCPU)
	if err != nil {
		return run, nil, err
	}
	defer prim.stop()
	lines = []string{kind + " primary: " + strings.Join(quoted(prim.argv), " ")}
	var rep *proc
	var fake *fakeReplica
	switch scenario {
	case "B1":
		rep, err = launch(o, kind, tmp, o.replicaCPU, "--replicaof", "127.0.0.1", strconv.Itoa(prim.port))
		if err != nil {
			return run, lines, err
		}
		defer rep.stop()
		lines = append(lines, kind+" replica: "+strings.Join(quoted(rep.argv), " "))
		err = poll(60*time.Second, func() (bool, error) {
			m, err := rep.info("replication")
			return err == nil && m["master_link_status"] == "up" && m["master_sync_in_progress"] == "0", nil
		})
		if err != nil {
			return run, lines, fmt.Errorf("replica did not sync: %w\n%s", err, rep.tail())
		}
	case "B2":
		if fake, err = dialFake(kind, prim.addr()); err != nil {
			return run, lines, err
		}
		defer fake.close()
		if err := fake.waitSynced(60 * time.Second); err != nil {
			return run, lines, err
		}
	}
	if scenario != "A" {
		err = poll(30*time.Second, func() (bool, error) {
			m, err := prim.info("replication")
			return err == nil && replicaField(m, "state") == "online", nil
		})
		if err != nil {
			return run, lines, fmt.Errorf("primary does not report its replica online: %w", err)
		}
	}
	before, err := prim.info("stats")
	if err != nil {
		return run, lines, err
	}
	jsonOut := filepath.Join(tmp, "memtier.json")
	argv := loadArgv(o, tool, prim.port, pipeline, jsonOut)
	lines = append(lines, "load ("+kind+" "+scenario+"): "+strings.Join(quoted(argv), " "))
	cpu0, err := prim.cpu()
	if err != nil {
		return run, lines, err
	}
	run.rps, err = runLoad(argv, tool, jsonOut)
	if err != nil {
		return run, lines, err
	}
	cpu1, err := prim.cpu()
	if err != nil {
		return run, lines, err
	}
	run.cpuUS = float64((cpu1 - cpu0).Microseconds()) / float64(o.n)
	if !prim.alive() {
		return run, lines, fmt.Errorf("primary exited\n%s", prim.tail())
	}
	if scenario != "A" {
		if why := verify(prim, rep, fake, before); why != "" {
			return run, lines, &invalidRun{why}
		}
	}
	return run, lines, nil
}

// verify checks that the replica followed the whole run on the link it
// had at the start; it returns why not, or "".
func verify(prim, rep *proc, fake *fakeReplica, before map[string]string) string {
	var last string
	err := poll(30*time.Second, func() (bool, error) {
		m, err := prim.info("replication")
		if err != nil {
			return false, err
		}
		off := m["master_repl_offset"]
		acked := replicaField(m, "offset")
		last = fmt.Sprintf("master_repl_offset=%s acked=%s connected_slaves=%s", off, acked, m["connected_slaves"])
		if m["connected_slaves"] != "1" {
			return false, errors.New("primary has no connected replica: " + last)
		}
		if fake != nil {
			if err := fake.broken(); err != nil {
				return false, fmt.Errorf("link dropped: %v", err)
			}
			last += fmt.Sprintf(" read=%d", fake.offset.Load())
			if strconv.FormatInt(fake.offset.Load(), 10) != off {
				return false, nil
			}
		}
		if rep != nil {
			if !rep.alive() {
				return false, errors.New("replica exited")
			}
			rm, err := rep.info("replication")
			if err != nil {
				return false, err
			}
			if rm["master_link_status"] != "up" {
				return false, errors.New("replica link is down")
			}
			last += " replica slave_repl_offset=" + rm["slave_repl_offset"]
			if rm["slave_repl_offset"] != off {
				return false, nil
			}
		}
		return acked == off, nil
	})
	if err != nil {
		return fmt.Sprintf("%v (%s)", err, last)
	}
	after, err := prim.info("stats")
	if err != nil {
		return err.Error()
	}
	for _, k := range []string{"sync_full", "sync_partial_ok"} {
		if before[k] != after[k] {
			return fmt.Sprintf("%s went from %s to %s: the replica resynced", k, before[k], after[k])
		}
	}
	if rep != nil {
		for _, cmd := range [][]string{{"DBSIZE"}, {"DEBUG", "DIGEST"}} {
			a, err1 := query(prim.addr(), cmd...)
			b, err2 := query(rep.addr(), cmd...)
			if err1 != nil || err2 != nil || a != b {
				return fmt.Sprintf("%s differs: primary %q %v, replica %q %v", strings.Join(cmd, " "), a, err1, b, err2)
			}
		}
	}
	return ""
}

func rate(v []float64) string {
	if len(v) == 0 {
		return "-"
	}
	return strconv.FormatFloat(median(v), 'f', 0, 64)
}

func ratio(v []float64) string {
	if len(v) == 0 {
		return "-"
	}
	return strconv.FormatFloat(median(v), 'f', 2, 64)
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func reversed(v []string) []string {
	out := make([]string, len(v))
	for i, x := range v {
		out[len(v)-1-i] = x
	}
	return out
}

func contains(v []string, s string) bool {
	for _, x := range v {
		if x == s {
			return true
		}
	}
	return false
}

// quoted renders argv for copying into a shell.
func quoted(argv []string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " '\"\\$") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return out
}
