package netio_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/actors/trace"
	"github.com/slotd/slotd/cmd/node"
	"github.com/slotd/slotd/cmd/node/nodetest"
	"github.com/slotd/slotd/netio/config"
)

// CONFIG on a node without a config file. Not parallel: it switches the
// process-wide actor tracer.
func TestConfig(t *testing.T) {
	n := nodetest.Start(t)
	w := dialWire(t, n.Addr)
	// redis-benchmark reads these two and needs 2-element arrays.
	require.Equal(t, "*2\r\n$4\r\nsave\r\n$0\r\n\r\n", w.do("CONFIG", "GET", "save"))
	require.Equal(t, "*2\r\n$10\r\nappendonly\r\n$2\r\nno\r\n", w.do("CONFIG", "GET", "appendonly"))
	require.Equal(t, "*4\r\n$10\r\nappendonly\r\n$2\r\nno\r\n$4\r\nsave\r\n$0\r\n\r\n",
		w.do("CONFIG", "GET", "save", "appendonly"))
	require.Equal(t, "*0\r\n", w.do("CONFIG", "GET", "nosuch"))
	require.Equal(t, "*2\r\n$15\r\nslave-read-only\r\n$3\r\nyes\r\n", w.do("config", "get", "SLAVE-READ-ONLY"))
	require.Equal(t, "-ERR wrong number of arguments for 'config|get' command\r\n", w.do("CONFIG", "GET"))
	w.do("HELLO", "3")
	require.Equal(t, "%1\r\n$4\r\nsave\r\n$0\r\n\r\n", w.do("CONFIG", "GET", "save"))

	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		c := n.Client(t, proto)
		m, err := c.ConfigGet(ctx, "maxmemory*").Result()
		require.NoError(t, err)
		require.Equal(t, "0", m["maxmemory"])
		require.Equal(t, "noeviction", m["maxmemory-policy"])
		m, err = c.ConfigGet(ctx, "port").Result()
		require.NoError(t, err)
		require.Equal(t, map[string]string{"port": strconv.Itoa(n.Port)}, m)
	}

	// CONFIG SET, RESETSTAT, REWRITE, HELP.
	w = dialWire(t, n.Addr)
	require.Equal(t, "+OK\r\n", w.do("CONFIG", "SET", "maxmemory", "1mb", "maxmemory-policy", "allkeys-lru"))
	require.Equal(t, "*2\r\n$9\r\nmaxmemory\r\n$7\r\n1048576\r\n", w.do("CONFIG", "GET", "maxmemory"))
	require.Contains(t, w.do("INFO", "memory"), "maxmemory_policy:allkeys-lru\r\n")
	require.Equal(t, "-ERR wrong number of arguments for 'config|set' command\r\n", w.do("CONFIG", "SET", "maxmemory"))
	require.Equal(t, "-ERR syntax error\r\n", w.do("CONFIG", "SET", "maxmemory", "1", "hz"))
	require.Equal(t, "-ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'\r\n",
		w.do("CONFIG", "SET", "nosuch", "1"))
	require.Equal(t, "-ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value\r\n",
		w.do("CONFIG", "SET", "maxmemory", "x"))
	// All or nothing.
	require.Contains(t, w.do("CONFIG", "SET", "maxmemory", "2mb", "hz", "x"), "-ERR CONFIG SET failed")
	require.Equal(t, "*2\r\n$9\r\nmaxmemory\r\n$7\r\n1048576\r\n", w.do("CONFIG", "GET", "maxmemory"))

	// trace-actors switches actor tracing at run time.
	t.Cleanup(func() { trace.Configure("") })
	require.Equal(t, "+OK\r\n", w.do("CONFIG", "SET", "trace-actors", "shard"))
	require.True(t, trace.Enabled("shard"))
	require.Equal(t, "+OK\r\n", w.do("CONFIG", "SET", "trace-actors", ""))
	require.False(t, trace.Enabled("shard"))

	require.Equal(t, "+OK\r\n", w.do("CONFIG", "RESETSTAT"))
	require.Equal(t, "-ERR wrong number of arguments for 'config|resetstat' command\r\n", w.do("CONFIG", "RESETSTAT", "x"))
	require.Equal(t, "-ERR The server is running without a config file\r\n", w.do("CONFIG", "REWRITE"))
	require.Equal(t, "-ERR unknown subcommand 'FOO'. Try CONFIG HELP.\r\n", w.do("CONFIG", "FOO"))
	help := w.do("CONFIG", "HELP")
	require.True(t, strings.HasPrefix(help, "*11\r\n+CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n"), help)
}

func TestConfigRewriteWithFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "slotd.conf")
	port := nodetest.FreePort(t)
	require.NoError(t, os.WriteFile(file, []byte("port "+strconv.Itoa(port)+"\nbind 127.0.0.1\nsave \"\"\n"+
		"loglevel warning\ndir "+dir+"\n"), 0o644))
	cfg := config.New()
	require.NoError(t, cfg.LoadArgs([]string{file}))
	nd, err := node.Start(cfg)
	require.NoError(t, err)
	t.Cleanup(nd.Stop)
	w := dialWire(t, "127.0.0.1:"+strconv.Itoa(port))
	require.Contains(t, w.do("INFO", "server"), "config_file:"+file+"\r\n")
	require.Equal(t, "+OK\r\n", w.do("CONFIG", "SET", "hz", "33"))
	require.Equal(t, "+OK\r\n", w.do("CONFIG", "REWRITE"))
	again := config.New()
	require.NoError(t, again.LoadArgs([]string{file}))
	require.Equal(t, "33", again.String("hz"))
}

// redis-benchmark reads CONFIG GET save/appendonly, then sends its load
// (inline PING included); any error reply makes it exit non-zero.
func TestRedisBenchmarkRuns(t *testing.T) {
	t.Parallel()
	bench, err := exec.LookPath("redis-benchmark")
	if err != nil {
		t.Skip("redis-benchmark not installed")
	}
	n := nodetest.Start(t)
	out, err := exec.Command(bench, "-p", strconv.Itoa(n.Port), "-n", "200", "-c", "2", "-q",
		"-t", "ping,set,get").CombinedOutput()
	require.NoError(t, err, string(out))
	require.Contains(t, string(out), "PING_INLINE")
	require.Contains(t, string(out), "GET")
}
