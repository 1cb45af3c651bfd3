// Command pubsub compares PUBLISH throughput of slotd and redis-server with
// 1 and with 50 subscribers of the published channel.
//
// It builds slotd (unless -slotd is given), starts it and a redis-server on
// free 127.0.0.1 ports, opens the subscriber connections (RESP2, drained by
// goroutines that count delivered bytes), and drives PUBLISH with
// redis-benchmark. Runs alternate between the servers (A,B then B,A, ...);
// a run counts only when every subscriber received every message. The table
// shows the median publish rate per server and the median of the per-round
// slotd/redis ratios, and the servers' CPU time per run (user+system from
// /proc, from the first PUBLISH until every subscriber has everything): on
// a busy machine the CPU ratio is steadier than the rate ratio.
//
// Usage (from the module root):
//
//	go run ./bench/pubsub [-n 200000] [-rounds 3] [-clients 50] [-pipeline 1] [-subs 1,50]
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/slotd/slotd/bench/benchkit"
)

func main() {
	n := flag.Int("n", 200000, "PUBLISH commands per run")
	rounds := flag.Int("rounds", 3, "alternating rounds")
	clients := flag.Int("clients", 50, "publisher connections")
	pipeline := flag.Int("pipeline", 1, "publisher pipeline depth")
	subsFlag := flag.String("subs", "1,50", "subscriber counts")
	slotdBin := flag.String("slotd", "", "slotd binary (default: build ./cmd/slotd)")
	flag.Parse()
	if err := run(*n, *rounds, *clients, *pipeline, *subsFlag, *slotdBin); err != nil {
		fmt.Fprintln(os.Stderr, "pubsub bench:", err)
		os.Exit(1)
	}
}

type server struct {
	name string
	port int
	cmd  *exec.Cmd
}

func start(name string, argv ...string) (*server, error) {
	port, err := benchkit.FreePort()
	if err != nil {
		return nil, err
	}
	for i, a := range argv {
		argv[i] = strings.ReplaceAll(a, "{port}", strconv.Itoa(port))
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{name: name, port: port, cmd: cmd}
	for i := 0; i < 200; i++ {
		if c, err := net.Dial("tcp", s.addr()); err == nil {
			_ = c.Close()
			return s, nil
		}
		time.Sleep(25 * time.Millisecond) // start-up poll of an external process
	}
	s.stop()
	return nil, fmt.Errorf("%s did not start", name)
}

func (s *server) addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

func (s *server) stop() {
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
}

// subscribers opens k subscriber connections and returns a counter of the
// bytes they received after their subscribe confirmation, and a closer.
func subscribers(addr string, k int) (*atomic.Int64, func(), error) {
	var got atomic.Int64
	var conns []net.Conn
	closeAll := func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}
	confirm := "*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n"
	for i := 0; i < k; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		conns = append(conns, c)
		if _, err := c.Write([]byte("*2\r\n$9\r\nSUBSCRIBE\r\n$2\r\nch\r\n")); err != nil {
			closeAll()
			return nil, nil, err
		}
		buf := make([]byte, len(confirm))
		if _, err := readFull(c, buf); err != nil || string(buf) != confirm {
			closeAll()
			return nil, nil, fmt.Errorf("subscribe: %q %v", buf, err)
		}
		go func() {
			b := make([]byte, 64<<10)
			for {
				m, err := c.Read(b)
				got.Add(int64(m))
				if err != nil {
					return
				}
			}
		}()
	}
	return &got, closeAll, nil
}

func readFull(c net.Conn, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := c.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// cpuTime is the process's user+system CPU time so far (0 when /proc is
// not readable).
func cpuTime(pid int) time.Duration {
	d, _ := benchkit.ProcCPU(pid)
	return d
}

// once runs one measured PUBLISH run and returns publishes per second and
// the server's CPU time for it.
func once(s *server, n, clients, pipeline, subs int) (float64, time.Duration, error) {
	got, closeSubs, err := subscribers(s.addr(), subs)
	if err != nil {
		return 0, 0, err
	}
	defer closeSubs()
	cpu0 := cpuTime(s.cmd.Process.Pid)
	const payload = "0123456789abcdef"
	msgLen := int64(len("*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$16\r\n" + payload + "\r\n"))
	out, err := exec.Command("redis-benchmark", "-h", "127.0.0.1", "-p", strconv.Itoa(s.port),
		"-n", strconv.Itoa(n), "-c", strconv.Itoa(clients), "-P", strconv.Itoa(pipeline), "--csv",
		"publish", "ch", payload).CombinedOutput()
	if err != nil {
		return 0, 0, fmt.Errorf("redis-benchmark: %v\n%s", err, out)
	}
	want := int64(n) * int64(subs) * msgLen
	deadline := time.Now().Add(60 * time.Second)
	for got.Load() < want {
		if time.Now().After(deadline) {
			return 0, 0, fmt.Errorf("%s: subscribers got %d of %d bytes", s.name, got.Load(), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cpu := cpuTime(s.cmd.Process.Pid) - cpu0
	r, err := benchkit.RedisBenchmarkCSV(out, "publish")
	return r.RPS, cpu, err
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func run(n, rounds, clients, pipeline int, subsFlag, slotdBin string) error {
	var subCounts []int
	for _, f := range strings.Split(subsFlag, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || k < 1 {
			return fmt.Errorf("bad -subs %q", subsFlag)
		}
		subCounts = append(subCounts, k)
	}
	tmp, err := os.MkdirTemp("", "slotd-pubsub-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if slotdBin == "" {
		slotdBin = filepath.Join(tmp, "slotd")
		if out, err := exec.Command("go", "build", "-o", slotdBin, "./cmd/slotd").CombinedOutput(); err != nil {
			return fmt.Errorf("building slotd: %v\n%s", err, out)
		}
	}
	slotd, err := start("slotd", slotdBin, "--port", "{port}", "--bind", "127.0.0.1", "--save", "",
		"--dir", tmp, "--loglevel", "warning")
	if err != nil {
		return err
	}
	defer slotd.stop()
	redis, err := start("redis", "redis-server", "--port", "{port}", "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no")
	if err != nil {
		return err
	}
	defer redis.stop()

	fmt.Printf("n=%d rounds=%d clients=%d pipeline=%d\n", n, rounds, clients, pipeline)
	fmt.Println("| subscribers | slotd publish/s | redis publish/s | ratio slotd/redis | slotd CPU ms | redis CPU ms | CPU ratio slotd/redis |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|")
	for _, k := range subCounts {
		rates := map[string][]float64{}
		cpus := map[string][]float64{}
		var ratios, cpuRatios []float64
		for r := 0; r < rounds; r++ {
			order := []*server{slotd, redis}
			if r%2 == 1 {
				order = []*server{redis, slotd}
			}
			got, gotCPU := map[string]float64{}, map[string]float64{}
			for _, s := range order {
				v, cpu, err := once(s, n, clients, pipeline, k)
				if err != nil {
					return err
				}
				ms := float64(cpu) / float64(time.Millisecond)
				got[s.name], gotCPU[s.name] = v, ms
				rates[s.name] = append(rates[s.name], v)
				cpus[s.name] = append(cpus[s.name], ms)
			}
			ratios = append(ratios, got["slotd"]/got["redis"])
			if gotCPU["redis"] > 0 {
				cpuRatios = append(cpuRatios, gotCPU["slotd"]/gotCPU["redis"])
			}
		}
		fmt.Printf("| %d | %.0f | %.0f | %.2f | %.0f | %.0f | %.2f |\n", k, median(rates["slotd"]), median(rates["redis"]),
			median(ratios), median(cpus["slotd"]), median(cpus["redis"]), median(cpuRatios))
	}
	return nil
}
