package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// SIGTERM saves a final snapshot when save rules exist, and not otherwise;
// the restarted process loads it.
func TestSigtermSavesWhenSaveRulesExist(t *testing.T) {
	ctx := context.Background()
	port, dir := freePorts(t, 1), t.TempDir()
	standalone := []string{"--cluster-enabled", "no"}

	p := startProc(t, port, dir, append(standalone, "--save", "3600 1")...)
	c := p.client(2)
	require.NoError(t, c.Set(ctx, "saved", "1", 0).Err())
	require.NoError(t, c.RPush(ctx, "list", "a", "b").Err())
	_ = c.Close()
	p.stop()
	assert.Equal(t, 0, p.cmd.ProcessState.ExitCode(), p.output())
	_, err := os.Stat(filepath.Join(dir, "dump.rdb"))
	require.NoError(t, err)

	p = startProc(t, port, dir, standalone...) // --save "": no final save
	c = p.client(3)
	assert.Equal(t, "1", c.Get(ctx, "saved").Val())
	assert.Equal(t, []string{"a", "b"}, c.LRange(ctx, "list", 0, -1).Val())
	require.NoError(t, c.Set(ctx, "lost", "1", 0).Err())
	_ = c.Close()
	p.stop()
	assert.Equal(t, 0, p.cmd.ProcessState.ExitCode(), p.output())

	p = startProc(t, port, dir, standalone...)
	c = p.client(3)
	defer c.Close()
	assert.Equal(t, int64(0), c.Exists(ctx, "lost").Val())
	assert.Equal(t, "1", c.Get(ctx, "saved").Val())
}

// A snapshot that cannot be read stops start-up with a message and a
// non-zero exit.
func TestCorruptSnapshotStopsStartup(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "dump.rdb"), []byte("REDIS0010\xfe\x00\x00\x03key"), 0o644))
	out, err := run(t, 20e9, slotdBinary(t), "--port", "0", "--bind", "127.0.0.1", "--dir", dir, "--save", "")
	require.Error(t, err, out)
	assert.Contains(t, out, "dump.rdb")
}

// CONFIG SET + CONFIG REWRITE + restart keeps the value; the file keeps
// its comments.
func TestConfigRewriteSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	port, dir := freePorts(t, 1), t.TempDir()
	file := filepath.Join(dir, "slotd.conf")
	require.NoError(t, os.WriteFile(file, []byte("# operator notes\nport "+strconv.Itoa(port)+
		"\nbind 127.0.0.1\nsave ''\nloglevel warning\nhz 10\nhz 15\n"), 0o644))
	start := func() (*exec.Cmd, *redis.Client) {
		cmd := exec.Command(slotdBinary(t), file)
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
		c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), MaxRetries: -1})
		t.Cleanup(func() { _ = c.Close() })
		eventually(t, 20*time.Second, func() bool { return c.Ping(ctx).Err() == nil }, "slotd up")
		return cmd, c
	}
	cmd, c := start()
	assert.Equal(t, map[string]string{"hz": "15"}, c.ConfigGet(ctx, "hz").Val())
	require.NoError(t, c.ConfigSet(ctx, "maxmemory-policy", "allkeys-lru").Err())
	require.NoError(t, c.ConfigSet(ctx, "hz", "42").Err())
	require.Equal(t, "OK", c.ConfigRewrite(ctx).Val())
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	_, _ = cmd.Process.Wait()

	_, c = start()
	assert.Equal(t, map[string]string{"hz": "42"}, c.ConfigGet(ctx, "hz").Val())
	assert.Equal(t, map[string]string{"maxmemory-policy": "allkeys-lru"}, c.ConfigGet(ctx, "maxmemory-policy").Val())
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Contains(t, string(b), "# operator notes\n")
}

// daemonize yes detaches a child that writes the pid file and serves; it
// removes the file when it stops.
func TestDaemonizeAndPidfile(t *testing.T) {
	ctx := context.Background()
	port, dir := freePorts(t, 1), t.TempDir()
	pidfile := filepath.Join(dir, "slotd.pid")
	out, err := run(t, 20*time.Second, slotdBinary(t), "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--dir", dir, "--save", "", "--daemonize", "yes", "--pidfile", pidfile, "--logfile", filepath.Join(dir, "log"))
	require.NoError(t, err, out)
	var pid int
	eventually(t, 20*time.Second, func() bool {
		b, err := os.ReadFile(pidfile)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	}, "pid file written")
	proc, err := os.FindProcess(pid)
	require.NoError(t, err)
	t.Cleanup(func() { _ = proc.Signal(syscall.SIGKILL) })
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), MaxRetries: -1})
	defer c.Close()
	eventually(t, 20*time.Second, func() bool { return c.Ping(ctx).Err() == nil }, "daemon serves")

	// A second server on the same port fails with Redis's message.
	out, err = run(t, 20*time.Second, slotdBinary(t), "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--dir", t.TempDir(), "--save", "")
	require.Error(t, err)
	assert.Contains(t, out, "Failed listening on port "+strconv.Itoa(port)+" (tcp), aborting")

	require.NoError(t, proc.Signal(syscall.SIGTERM))
	eventually(t, 20*time.Second, func() bool {
		_, err := os.Stat(pidfile)
		return os.IsNotExist(err)
	}, "pid file removed at exit")
}
