package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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
	if tool == "redis-benchmark" {
		rows, err := csv.NewReader(bytes.NewReader(out.Bytes())).ReadAll()
		if err != nil {
			return 0, fmt.Errorf("redis-benchmark csv: %v\n%s", err, out.Bytes())
		}
		for _, r := range rows {
			if len(r) > 1 && strings.EqualFold(r[0], "set") {
				return strconv.ParseFloat(r[1], 64)
			}
		}
		return 0, fmt.Errorf("no SET row:\n%s", out.Bytes())
	}
	b, err := os.ReadFile(jsonOut)
	if err != nil {
		return 0, err
	}
	var doc struct {
		All struct {
			Totals struct {
				OpsSec float64 `json:"Ops/sec"`
			} `json:"Totals"`
		} `json:"ALL STATS"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || doc.All.Totals.OpsSec == 0 {
		return 0, fmt.Errorf("memtier totals in %s: %v", filepath.Base(jsonOut), err)
	}
	return doc.All.Totals.OpsSec, nil
}
