package difftest

import (
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// StartRedis starts a real redis-server on a free loopback port, without
// persistence, with the given extra arguments ("--name", "value", ...), and
// kills it at the end of the test. The test is skipped when no redis-server
// is installed.
func StartRedis(t testing.TB, args ...string) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not installed")
	}
	port := nodetest.FreePort(t)
	dir := t.TempDir()
	all := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", dir, "--logfile", filepath.Join(dir, "redis.log")}, args...)
	cmd := exec.Command(bin, all...)
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addr := "127.0.0.1:" + strconv.Itoa(port)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			_ = c.Close()
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server did not start on %s", addr)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// settingNames are the directives that change observable behaviour of the
// commands generated here (encodings and hence reply order, HLL sparse
// limit, string size limit, script time limit): the reference gets the
// values of the server under test.
var settingNames = []string{"hash-max-listpack-entries", "hash-max-listpack-value", "set-max-intset-entries",
	"zset-max-listpack-entries", "zset-max-listpack-value", "list-max-listpack-size", "list-compress-depth",
	"hll-sparse-max-bytes", "proto-max-bulk-len", "lua-time-limit", "maxmemory-policy", "notify-keyspace-events"}

// Settings reads those directives from the server at addr and returns them
// as redis-server arguments.
func Settings(addr string) ([]string, error) {
	c, err := dial(addr, 2)
	if err != nil {
		return nil, err
	}
	defer c.close()
	var cmds []Cmd
	for _, n := range settingNames {
		cmds = append(cmds, Cmd{"CONFIG", "GET", n})
	}
	rs, err := c.do(cmds)
	if err != nil {
		return nil, err
	}
	var out []string
	for i, r := range rs {
		if !r.IsAgg() || len(r.Elems) != 2 {
			return nil, fmt.Errorf("CONFIG GET %s: %s", settingNames[i], r)
		}
		out = append(out, "--"+settingNames[i], r.Elems[1].Str)
	}
	return out, nil
}

// OpCommands lists every command some generator op needs.
func OpCommands() []string {
	seen := map[string]bool{}
	var out []string
	for _, o := range allOps() {
		if !seen[o.cmd] {
			seen[o.cmd] = true
			out = append(out, o.cmd)
		}
	}
	for _, s := range Scripts {
		if s.Needs != "" && !seen[s.Needs] {
			seen[s.Needs] = true
			out = append(out, s.Needs)
		}
	}
	return out
}

// Commands asks the server at addr (COMMAND INFO) which of names it
// implements.
func Commands(addr string, names []string) (map[string]bool, error) {
	c, err := dial(addr, 2)
	if err != nil {
		return nil, err
	}
	defer c.close()
	rs, err := c.do([]Cmd{append(Cmd{"COMMAND", "INFO"}, names...)})
	if err != nil {
		return nil, err
	}
	if !rs[0].IsAgg() || len(rs[0].Elems) != len(names) {
		return nil, fmt.Errorf("COMMAND INFO: %s", rs[0])
	}
	has := map[string]bool{}
	for i, e := range rs[0].Elems {
		has[names[i]] = e.IsAgg()
	}
	return has, nil
}
