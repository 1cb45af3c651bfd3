package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// Multi-process tests: the slotd binary is built once per test run and
// started as real processes on 127.0.0.1, driven by real clients
// (redis-cli, redis-benchmark, go-redis).

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	buildDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// slotdBinary builds cmd/slotd once and returns its path.
func slotdBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "slotd-bin-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(buildDir, "slotd")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	require.NoError(t, buildErr)
	return binPath
}

// needTools skips the test when the Redis command-line tools are missing.
func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
}

// freePorts returns a base port such that base..base+n-1 and their +10000
// bus ports were all free a moment ago. Bases are drawn below the usual
// ephemeral range (32768+), so that outgoing connections of other tests
// do not grab a port between this check and the node's bind.
func freePorts(t *testing.T, n int) int {
	t.Helper()
	for try := 0; try < 500; try++ {
		base := 12000 + rand.IntN(32768-10000-12000-n)
		ok := true
		var held []net.Listener
		for i := 0; i < n && ok; i++ {
			for _, p := range []int{base + i, base + i + 10000} {
				l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
				if err != nil {
					ok = false
					break
				}
				held = append(held, l)
			}
		}
		for _, l := range held {
			_ = l.Close()
		}
		if ok {
			return base
		}
	}
	t.Fatal("no free port range")
	return 0
}

// proc is a slotd process.
type proc struct {
	t    *testing.T
	port int
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
	log  *bytes.Buffer
	bin  string
	args []string
}

// startProc starts slotd on port with its data in dir.
func startProc(t *testing.T, port int, dir string, extra ...string) *proc {
	t.Helper()
	args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
		"--dir", dir, "--save", "", "--cluster-node-timeout", "3000", "--loglevel", "warning"}, extra...)
	return launch(t, slotdBinary(t), port, dir, args)
}

// launch starts a server process (slotd or redis-server) and waits until
// it answers PING; it is killed at the end of the test.
func launch(t *testing.T, bin string, port int, dir string, args []string) *proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	p := &proc{t: t, port: port, dir: dir, cmd: cmd, done: make(chan struct{}), log: &bytes.Buffer{}, bin: bin,
		args: args}
	cmd.Stdout = &lockedWriter{w: p.log}
	cmd.Stderr = cmd.Stdout
	require.NoError(t, cmd.Start())
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() { p.kill() })
	cli := p.client(2)
	defer cli.Close()
	eventually(t, 20*time.Second, func() bool {
		select {
		case <-p.done:
			t.Fatalf("%s on %d exited during start-up:\n%s", bin, port, p.output())
		default:
		}
		return cli.Ping(context.Background()).Err() == nil
	}, bin+" "+strconv.Itoa(port)+" accepts connections")
	return p
}

func (p *proc) addr() string { return "127.0.0.1:" + strconv.Itoa(p.port) }

func (p *proc) output() string {
	lw := p.cmd.Stdout.(*lockedWriter)
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return p.log.String()
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *proc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// restart starts the same server again, with the same arguments (its
// earlier output is kept in front of the new one).
func (p *proc) restart() *proc {
	p.t.Helper()
	old := p.output()
	np := launch(p.t, p.bin, p.port, p.dir, p.args)
	lw := np.cmd.Stdout.(*lockedWriter)
	lw.mu.Lock()
	rest := np.log.String()
	np.log.Reset()
	np.log.WriteString(old + "--- restarted\n" + rest)
	lw.mu.Unlock()
	return np
}

// stop sends SIGTERM and waits.
func (p *proc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		p.kill()
	}
}

func (p *proc) client(proto int) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: p.addr(), Protocol: proto, DialTimeout: 2 * time.Second,
		ReadTimeout: 10 * time.Second, MaxRetries: -1, PoolSize: 2})
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// eventually polls cond until it holds or d passes.
func eventually(t *testing.T, d time.Duration, cond func() bool, msg string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", d, msg)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// run executes a command with a deadline and returns its combined output.
func run(t *testing.T, timeout time.Duration, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	return string(out), err
}

// clusterInfo returns CLUSTER INFO of the node on port as a map ("" map on
// error).
func clusterInfo(cli *redis.Client) map[string]string {
	out := map[string]string{}
	s, err := cli.ClusterInfo(context.Background()).Result()
	if err != nil {
		return out
	}
	for _, l := range strings.Split(s, "\r\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			out[k] = v
		}
	}
	return out
}
