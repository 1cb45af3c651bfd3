// Package benchkit holds what the benchmark commands (bench, bench/replica,
// bench/pubsub, bench/scale) share: starting and stopping server processes
// on loopback ports, a process's CPU time, the tail of its log, building
// slotd, and the load generators' results (redis-benchmark --csv, memtier's
// JSON totals).
package benchkit

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// userHZ is the kernel's USER_HZ, the unit of utime/stime in /proc/<pid>/stat.
const userHZ = 100

// ProcCPU returns a process's user+system CPU time so far (all threads).
func ProcCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; after it come field 3
	// (state) on, so utime and stime (14, 15) are the 12th and 13th.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("malformed /proc stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("short /proc stat")
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("malformed utime/stime")
	}
	return time.Duration(ut+st) * time.Second / userHZ, nil
}

// Tail returns the last n lines of a log file.
func Tail(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Result is one load generator run: requests per second and latency
// percentiles in milliseconds; Count is memtier's request total.
type Result struct {
	RPS, P50, P99 float64
	Count         int64
}

// RedisBenchmarkCSV reads the row of test from redis-benchmark --csv output
// ("test","rps","avg","min","p50","p95","p99","max"). A custom command's
// row is named by its whole command line, so test may be its first word.
// Other lines (--cluster prints the primaries first) are skipped.
func RedisBenchmarkCSV(out []byte, test string) (Result, error) {
	r := csv.NewReader(bytes.NewReader(out))
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil {
		return Result{}, fmt.Errorf("parsing csv: %w\n%s", err, out)
	}
	for _, row := range rows {
		if len(row) < 8 {
			continue
		}
		name, want := strings.ToLower(row[0]), strings.ToLower(test)
		if name != want && !strings.HasPrefix(name, want+" ") {
			continue
		}
		var v [7]float64
		for i := range v {
			if v[i], err = strconv.ParseFloat(row[i+1], 64); err != nil {
				return Result{}, fmt.Errorf("parsing csv row %q: %w", row, err)
			}
		}
		return Result{RPS: v[0], P50: v[3], P99: v[5]}, nil
	}
	return Result{}, fmt.Errorf("no %s row in output:\n%s", test, out)
}

// MemtierTotals reads the totals of a memtier_benchmark --json-out-file.
func MemtierTotals(path string) (Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Result{}, err
	}
	var doc struct {
		All struct {
			Totals struct {
				Count  int64          `json:"Count"`
				OpsSec float64        `json:"Ops/sec"`
				Pct    map[string]any `json:"Percentile Latencies"`
			} `json:"Totals"`
		} `json:"ALL STATS"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return Result{}, fmt.Errorf("parsing %s: %w", path, err)
	}
	t := doc.All.Totals
	p50, ok1 := t.Pct["p50.00"].(float64)
	p99, ok2 := t.Pct["p99.00"].(float64)
	if t.Count == 0 || t.OpsSec == 0 || !ok1 || !ok2 {
		return Result{}, fmt.Errorf("no totals/p50/p99 in %s", path)
	}
	return Result{RPS: t.OpsSec, P50: p50, P99: p99, Count: t.Count}, nil
}
