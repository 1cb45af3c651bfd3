package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/slotd/slotd/bench/benchkit"
)

// loadArgv is the load generator's command line for one SET run against
// port; jsonOut is where memtier writes its totals.
func loadArgv(o *options, tool string, port, pipeline int, jsonOut string) []string {
	var argv []string
	if o.loadCPU != "" {
		argv = []string{"taskset", "-c", o.loadCPU}
	}
	p := strconv.Itoa(port)
	if tool == "redis-benchmark" {
		return append(argv, "redis-benchmark", "-h", "127.0.0.1", "-p", p, "-t", "set",
			"-n", strconv.Itoa(o.n), "-c", strconv.Itoa(o.clients), "-P", strconv.Itoa(pipeline),
			"-r", "100000", "--csv")
	}
	// One memtier thread when it has a single core of its own (two
	// threads time-slicing one core measure the scheduler).
	threads := 2
	if o.loadCPU != "" && !strings.ContainsAny(o.loadCPU, ",-") {
		threads = 1
	}
	clients := max(1, o.clients/threads)
	return append(argv, "memtier_benchmark", "-s", "127.0.0.1", "-p", p, "--protocol=redis",
		"-c", strconv.Itoa(clients), "-t", strconv.Itoa(threads), "--pipeline", strconv.Itoa(pipeline),
		"--ratio", "1:0", "--key-maximum", "100000", "-n", strconv.Itoa(max(1, o.n/(clients*threads))),
		"--distinct-client-seed", "--hide-histogram", "--json-out-file", jsonOut)
}

// runLoad runs one SET load and returns the requests per second the tool
// reports.
func runLoad(argv []string, tool, jsonOut string) (float64, error) {
	_ = os.Remove(jsonOut)
	var out bytes.Buffer
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("%s: %v\n%s", tool, err, out.Bytes())
	}
	var r benchkit.Result
	var err error
	if tool == "redis-benchmark" {
		r, err = benchkit.RedisBenchmarkCSV(out.Bytes(), "set")
	} else {
		r, err = benchkit.MemtierTotals(jsonOut)
	}
	return r.RPS, err
}
