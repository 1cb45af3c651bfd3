package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// -instructions: server instructions per request, counted by valgrind's
// callgrind instead of timed. An instruction count does not depend on what
// else the machine is doing, so it answers "did this change make the server
// do more work per request" on a shared machine where rps and CPU time move
// by 10 % between identical runs.
//
// Each side runs under callgrind twice per test and pipeline depth, once for
// -n/4 requests and once for -n; the figure is the slope between the two
// totals, (I(n) - I(n/4)) / (3n/4), so start-up, shutdown and the first GC
// cycles cancel out. What remains is every instruction the server process
// executes in user space per request (parsing, dispatch, the command, the
// reply, the runtime's scheduling and GC), not the kernel's share of the
// syscalls. Go's asynchronous preemption signals crash callgrind, so the
// servers run with GODEBUG=asyncpreemptoff=1 (redis-server ignores it).
// The count still varies by about 1-2 % between runs (idle spinning in the
// schedulers depends on timing): use -rounds 3 or more and read medians.
//
//	go run ./bench -instructions -n 400000 -rounds 3 -tests get,set -pipelines 1,16 \
//	    -slotd /tmp/slotd-new -redis-cmd "/tmp/slotd-old --port {port} --bind 127.0.0.1 --save '' --appendonly no"

// instrRow is one test at one pipeline depth.
type instrRow struct {
	test     string
	pipeline int
}

func runInstructions(ctx context.Context, o options, slotdCmd, redisCmd, tmp string) error {
	if _, err := exec.LookPath("valgrind"); err != nil {
		return errors.New("-instructions needs valgrind on PATH (apt-get install valgrind)")
	}
	for _, t := range o.tests {
		if t != "get" && t != "set" {
			return fmt.Errorf("-instructions runs get and set only, not %s", t)
		}
	}
	// valgrind runs one thread at a time anyway; pinned to one core, a Go
	// server under it can stall for minutes.
	o.cpuPin = false
	os.Setenv("GODEBUG", "asyncpreemptoff=1")
	readyTimeout = 3 * time.Minute
	lo, hi := o.n/4, o.n
	if lo < 1000 {
		return errors.New("-instructions needs -n of at least 4000")
	}
	fmt.Printf("instructions per request: callgrind slope between %d and %d requests, clients=%d rounds=%d\n",
		lo, hi, o.clients, o.rounds)
	sides := []struct{ name, cmd string }{{"slotd", slotdCmd}, {"redis", redisCmd}}
	var rows []instrRow
	per := map[instrRow]map[string][]float64{}
	for r := 0; r < o.rounds; r++ {
		order := []int{0, 1}
		if r%2 == 1 {
			order = []int{1, 0}
		}
		for _, p := range o.pipelines {
			for _, t := range o.tests {
				row := instrRow{t, p}
				if per[row] == nil {
					per[row] = map[string][]float64{}
					rows = append(rows, row)
				}
				for _, i := range order {
					side := sides[i]
					a, err := countInstructions(ctx, o, side.name, side.cmd, tmp, t, p, lo)
					if err != nil {
						return err
					}
					b, err := countInstructions(ctx, o, side.name, side.cmd, tmp, t, p, hi)
					if err != nil {
						return err
					}
					v := float64(b-a) / float64(hi-lo)
					per[row][side.name] = append(per[row][side.name], v)
					fmt.Printf("round %d/%d %-4s P%-2d %-5s %8.0f instructions/request\n", r+1, o.rounds, t, p, side.name, v)
				}
			}
		}
	}
	table := [][]string{{"test", "P", "slotd instr/req", "redis instr/req", "ratio"}}
	for _, row := range rows {
		s, rd := per[row]["slotd"], per[row]["redis"]
		var ratios []float64
		for i := range min(len(s), len(rd)) {
			if rd[i] > 0 {
				ratios = append(ratios, s[i]/rd[i])
			}
		}
		ratio := "-"
		if len(ratios) > 0 {
			ratio = fmt.Sprintf("%.3f", med(ratios))
		}
		table = append(table, []string{row.test, strconv.Itoa(row.pipeline),
			fmt.Sprintf("%.0f", med(append([]float64(nil), s...))), fmt.Sprintf("%.0f", med(append([]float64(nil), rd...))), ratio})
	}
	md := markdownTable(table, 2)
	fmt.Println()
	fmt.Println(md)
	if o.out != "" {
		return os.WriteFile(o.out, []byte("# server instructions per request (callgrind)\n\n"+md), 0o644)
	}
	return nil
}

// countInstructions starts cmd under callgrind, runs n requests of test at
// pipeline p, stops it and returns the total instructions it executed.
func countInstructions(ctx context.Context, o options, name, cmd, tmp, test string, p, n int) (int64, error) {
	out := filepath.Join(tmp, fmt.Sprintf("callgrind.%s.%d.out", name, time.Now().UnixNano()))
	defer os.Remove(out)
	s, err := startServer(ctx, name, "valgrind --tool=callgrind --callgrind-out-file="+shellQuote(out)+" "+cmd, tmp, false)
	if err != nil {
		return 0, err
	}
	_, _, err = loadCommand(ctx, o, s, "redis-benchmark", "-h", "127.0.0.1", "-p", strconv.Itoa(s.port),
		"-t", test, "-n", strconv.Itoa(n), "-c", strconv.Itoa(o.clients), "-P", strconv.Itoa(p), "-r", "100000", "-q")
	if err != nil {
		s.stop()
		return 0, fmt.Errorf("%s: redis-benchmark %s P%d: %w", name, test, p, err)
	}
	// callgrind writes its totals at exit. A signal to a Go program under
	// callgrind can trip a callgrind assertion, so the server is asked to
	// exit: SHUTDOWN NOSAVE (no reply when it works).
	if err := shutdownNoSave(s.port); err != nil {
		s.stop()
		return 0, fmt.Errorf("%s: SHUTDOWN NOSAVE: %w", name, err)
	}
	select {
	case <-s.done:
	case <-time.After(2 * time.Minute):
		s.stop()
		return 0, fmt.Errorf("%s under callgrind did not exit after SHUTDOWN", name)
	}
	total, err := callgrindTotal(out)
	if err != nil {
		return 0, fmt.Errorf("%w; %s exited: %v\n--- %s ---\n%s", err, name, s.cmd.ProcessState, s.log, tail(s.log))
	}
	return total, nil
}

// callgrindTotal reads the instruction total ("summary:" or "totals:" line)
// of a callgrind output file.
func callgrindTotal(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		for _, p := range []string{"summary:", "totals:"} {
			if rest, ok := strings.CutPrefix(line, p); ok {
				fields := strings.Fields(rest)
				if len(fields) > 0 {
					return strconv.ParseInt(fields[0], 10, 64)
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	st, _ := f.Stat()
	return 0, fmt.Errorf("%s: no instruction total (%d bytes)", path, st.Size())
}

// shutdownNoSave sends SHUTDOWN NOSAVE and waits for the connection to close.
func shutdownNoSave(port int) error {
	line, err := request(port, "*2\r\n$8\r\nSHUTDOWN\r\n$6\r\nNOSAVE\r\n", 2*time.Minute)
	switch {
	case errors.Is(err, errNoReply):
		return nil // closed: the server is exiting
	case err != nil:
		return err
	}
	return fmt.Errorf("replied %q", line)
}
