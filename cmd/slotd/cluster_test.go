package main

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/slots"
)

var bg = context.Background()

// waitClusterOK waits until every node reports cluster_state:ok and knows
// n nodes.
func waitClusterOK(t *testing.T, d time.Duration, procs ...*proc) {
	t.Helper()
	for _, p := range procs {
		cli := p.client(2)
		eventually(t, d, func() bool {
			info := clusterInfo(cli)
			return info["cluster_state"] == "ok" && info["cluster_known_nodes"] == strconv.Itoa(len(procs))
		}, "cluster_state:ok on "+p.addr())
		_ = cli.Close()
	}
}

// myselfLine returns the myself line of CLUSTER NODES split in fields.
func myselfLine(t *testing.T, cli *redis.Client) []string {
	t.Helper()
	nodes, err := cli.ClusterNodes(bg).Result()
	require.NoError(t, err)
	for _, l := range strings.Split(nodes, "\n") {
		f := strings.Fields(l)
		if len(f) >= 8 && strings.Contains(f[2], "myself") {
			return f
		}
	}
	t.Fatalf("no myself line in %q", nodes)
	return nil
}

// keyOn returns a key whose slot the node with the given CLUSTER NODES
// myself line serves.
func keyOn(t *testing.T, line []string) (string, int) {
	t.Helper()
	require.Greater(t, len(line), 8, "node serves no slot: %v", line)
	lo, _, _ := strings.Cut(line[8], "-")
	first, err := strconv.Atoi(lo)
	require.NoError(t, err)
	for i := 0; ; i++ {
		k := "k" + strconv.Itoa(i)
		if slots.HashSlotString(k) == first {
			return k, first
		}
	}
}

// TestClusterCreate forms a three-node cluster with redis-cli --cluster
// create and drives it with the real tools: check, a go-redis
// ClusterClient, redis-cli -c, redis-benchmark --cluster; then kills a node
// with SIGKILL and restarts it on the same dir.
func TestClusterCreate(t *testing.T) {
	needTools(t, "redis-cli", "redis-benchmark")
	t.Parallel()
	base := freePorts(t, 3)
	var procs []*proc
	var addrs []string
	for i := 0; i < 3; i++ {
		p := startProc(t, base+i, t.TempDir())
		procs = append(procs, p)
		addrs = append(addrs, p.addr())
	}

	out, err := run(t, 60*time.Second, "redis-cli", append(append([]string{"--cluster", "create"}, addrs...),
		"--cluster-yes")...)
	require.NoError(t, err, out)
	require.Contains(t, out, "[OK] All 16384 slots covered.", out)
	waitClusterOK(t, 30*time.Second, procs...)

	out, err = run(t, 30*time.Second, "redis-cli", "--cluster", "check", addrs[0])
	require.NoError(t, err, out)
	assert.Contains(t, out, "[OK] All nodes agree about slots configuration.")
	assert.Contains(t, out, "[OK] All 16384 slots covered.")
	assert.NotContains(t, out, "[ERR]")
	assert.NotContains(t, out, "[WARNING]")

	// Every node sees the same three masters with the same slots.
	var lines [][]string
	for _, p := range procs {
		cli := p.client(2)
		lines = append(lines, myselfLine(t, cli))
		_ = cli.Close()
	}

	t.Run("go-redis ClusterClient", func(t *testing.T) {
		for _, proto := range []int{2, 3} {
			cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, Protocol: proto,
				ReadTimeout: 10 * time.Second, MaxRedirects: 8})
			const n = 10000
			pipe := cc.Pipeline()
			for i := 0; i < n; i++ {
				pipe.Set(bg, fmt.Sprintf("key:%d:%d", proto, i), i, 0)
			}
			_, err := pipe.Exec(bg)
			require.NoError(t, err)
			pipe = cc.Pipeline()
			gets := make([]*redis.StringCmd, n)
			for i := 0; i < n; i++ {
				gets[i] = pipe.Get(bg, fmt.Sprintf("key:%d:%d", proto, i))
			}
			_, err = pipe.Exec(bg)
			require.NoError(t, err)
			for i, g := range gets {
				require.Equal(t, strconv.Itoa(i), g.Val(), "key %d", i)
			}
			// The keys landed on every node.
			for _, p := range procs {
				cli := p.client(proto)
				size, err := cli.DBSize(bg).Result()
				require.NoError(t, err)
				assert.Greater(t, size, int64(n/6), "keys on %s", p.addr())
				_ = cli.Close()
			}
			require.NoError(t, cc.Close())
		}
	})

	t.Run("MOVED and redis-cli -c", func(t *testing.T) {
		for i := 1; i < 3; i++ {
			key, slot := keyOn(t, lines[i])
			// Without -c the first node redirects.
			out, err := run(t, 10*time.Second, "redis-cli", "-p", strconv.Itoa(procs[0].port), "set", key, "v")
			require.NoError(t, err)
			assert.Equal(t, "MOVED "+strconv.Itoa(slot)+" "+addrs[i], strings.TrimSpace(out))
			// With -c it follows.
			out, err = run(t, 10*time.Second, "redis-cli", "-c", "-p", strconv.Itoa(procs[0].port), "set", key,
				"v"+strconv.Itoa(i))
			require.NoError(t, err, out)
			assert.Equal(t, "OK", strings.TrimSpace(out))
			out, err = run(t, 10*time.Second, "redis-cli", "-c", "-p", strconv.Itoa(procs[0].port), "get", key)
			require.NoError(t, err, out)
			assert.Equal(t, "v"+strconv.Itoa(i), strings.TrimSpace(out))
		}
	})

	t.Run("redis-benchmark --cluster", func(t *testing.T) {
		out, err := run(t, 60*time.Second, "redis-benchmark", "--cluster", "-p", strconv.Itoa(procs[0].port),
			"-t", "set,get", "-n", "20000", "-q")
		require.NoError(t, err, out)
		assert.Contains(t, out, "SET: ")
		assert.Contains(t, out, "GET: ")
		assert.NotContains(t, strings.ToLower(out), "error")
	})

	t.Run("kill -9 and restart", func(t *testing.T) {
		victim := procs[1]
		cli := victim.client(2)
		id, err := cli.ClusterMyID(bg).Result()
		require.NoError(t, err)
		_ = cli.Close()
		victim.kill()

		// The others notice the link is down (CLUSTER NODES "disconnected").
		cli0 := procs[0].client(2)
		defer cli0.Close()
		eventually(t, 20*time.Second, func() bool {
			nodes, err := cli0.ClusterNodes(bg).Result()
			return err == nil && regexp.MustCompile(`(?m)^`+id+` .* disconnected`).MatchString(nodes)
		}, "node 0 sees the killed node disconnected")

		restarted := startProc(t, victim.port, victim.dir)
		procs[1] = restarted
		cli = restarted.client(2)
		defer cli.Close()
		id2, err := cli.ClusterMyID(bg).Result()
		require.NoError(t, err)
		assert.Equal(t, id, id2, "same node id after restart")
		assert.Equal(t, lines[1][8:], myselfLine(t, cli)[8:], "same slots after restart")
		waitClusterOK(t, 30*time.Second, procs...)
		eventually(t, 20*time.Second, func() bool {
			nodes, err := cli0.ClusterNodes(bg).Result()
			return err == nil && regexp.MustCompile(`(?m)^`+id+` .* connected`).MatchString(nodes) &&
				!strings.Contains(nodes, "disconnected")
		}, "node 0 sees the restarted node connected")

		// It serves its slots again.
		key, _ := keyOn(t, lines[1])
		out, err := run(t, 10*time.Second, "redis-cli", "-c", "-p", strconv.Itoa(procs[0].port), "set", key, "again")
		require.NoError(t, err, out)
		assert.Equal(t, "OK", strings.TrimSpace(out))
		out, err = run(t, 30*time.Second, "redis-cli", "--cluster", "check", addrs[2])
		require.NoError(t, err, out)
		assert.Contains(t, out, "[OK] All 16384 slots covered.")
		assert.NotContains(t, out, "[ERR]")
	})
}

// TestDemo runs "slotd demo" on a free port range and talks to it with
// redis-cli -c, then stops it with SIGTERM.
func TestDemo(t *testing.T) {
	needTools(t, "redis-cli")
	t.Parallel()
	base := freePorts(t, 6)
	// The defaults: 3 primaries with one replica each.
	cmd := exec.Command(slotdBinary(t), "demo", "--port", strconv.Itoa(base))
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &lockedStrings{b: &stderr}
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	var seen []string
	deadline := time.After(60 * time.Second)
	want := "redis-cli -c -p " + strconv.Itoa(base)
	for ready := false; !ready; {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("demo exited early:\n%s\n%s", strings.Join(seen, "\n"), stderr.String())
			}
			seen = append(seen, l)
			ready = strings.TrimSpace(l) == want
		case <-deadline:
			t.Fatalf("demo not ready in time:\n%s\n%s", strings.Join(seen, "\n"), stderr.String())
		}
	}
	out, err := run(t, 10*time.Second, "redis-cli", "-c", "-p", strconv.Itoa(base), "set", "foo", "bar")
	require.NoError(t, err, out)
	assert.Equal(t, "OK", strings.TrimSpace(out))
	out, err = run(t, 10*time.Second, "redis-cli", "-c", "-p", strconv.Itoa(base+2), "get", "foo")
	require.NoError(t, err, out)
	assert.Equal(t, "bar", strings.TrimSpace(out))
	out, err = run(t, 30*time.Second, "redis-cli", "--cluster", "check", "127.0.0.1:"+strconv.Itoa(base))
	require.NoError(t, err, out)
	assert.Equal(t, 3, strings.Count(out, "1 additional replica(s)"), out)

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	go func() {
		for range lines { // keep the reader going until the demo exits
		}
	}()
	select {
	case err := <-exited:
		assert.NoError(t, err, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("demo did not stop after SIGTERM")
	}
	// Every node is gone: nothing answers on the ports.
	for i := 0; i < 6; i++ {
		out, err := run(t, 5*time.Second, "redis-cli", "-p", strconv.Itoa(base+i), "ping")
		assert.Error(t, err, "node %d still answers: %s", base+i, out)
	}
}

type lockedStrings struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (l *lockedStrings) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
