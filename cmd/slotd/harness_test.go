package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// How Redis's own test harnesses start a server, done with slotd: the
// unit framework waits for " PID: <pid>" on stdout, then counts "Ready to
// accept" lines; the legacy cluster framework starts `server
// redis_N/redis.conf` with a relative dir and CONFIG REWRITEs that file.

// startIn starts slotd with args in the working directory wd and waits
// until it answers PING.
func startIn(t *testing.T, wd string, port int, args ...string) (*exec.Cmd, *lockedWriter) {
	t.Helper()
	cmd := exec.Command(slotdBinary(t), args...)
	cmd.Dir = wd
	out := &lockedWriter{w: &bytes.Buffer{}}
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	cli := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), MaxRetries: -1})
	defer cli.Close()
	eventually(t, 20*time.Second, func() bool {
		select {
		case <-done:
			t.Fatalf("slotd exited during start-up:\n%s", out.String())
		default:
		}
		return cli.Ping(context.Background()).Err() == nil
	}, "slotd accepts connections")
	return cmd, out
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.String()
}

var logLine = regexp.MustCompile(`^\d+:[MS] \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d\.\d{3} [.\-*#] `)

func TestStartupBannerAndLogFormatOnStdout(t *testing.T) {
	dir := t.TempDir()
	port := freePorts(t, 1)
	conf := filepath.Join(dir, "redis.conf")
	require.NoError(t, os.WriteFile(conf, []byte("always-show-logo yes\nlogfile ''\nloglevel verbose\nbind 127.0.0.1\n"+
		"port "+strconv.Itoa(port)+"\ndir "+dir+"\nsave ''\npropagation-error-behavior panic\ncluster-enabled yes\n"+
		"cluster-node-timeout 500\nunixsocket "+dir+"/socket\nenable-module-command yes\n"), 0o644))
	cmd, out := startIn(t, dir, port, conf)
	s := out.String()
	pid := strconv.Itoa(cmd.Process.Pid)
	at := strings.Index(s, " PID: "+pid+"\n")
	require.GreaterOrEqual(t, at, 0, "no PID line in:\n%s", s)
	initAt := strings.Index(s, "Server initialized")
	readyAt := strings.Index(s, "Ready to accept connections")
	assert.Less(t, at, initAt, "PID line before Server initialized")
	assert.Less(t, initAt, readyAt)
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "Server initialized") || strings.Contains(l, "Ready to accept") {
			assert.Regexp(t, logLine, l)
			assert.True(t, strings.HasPrefix(l, pid+":M "), l)
		}
	}
}

func TestLegacyHarnessRelativeDirConfig(t *testing.T) {
	top := t.TempDir()
	port := freePorts(t, 1)
	require.NoError(t, os.Mkdir(filepath.Join(top, "redis_0"), 0o755))
	conf := "port " + strconv.Itoa(port) + "\nbind 127.0.0.1\ndir ./redis_0\nlogfile log.txt\ncluster-enabled yes\n" +
		"appendonly yes\nenable-protected-configs yes\nenable-debug-command yes\n"
	require.NoError(t, os.WriteFile(filepath.Join(top, "redis_0", "redis.conf"), []byte(conf), 0o644))
	startIn(t, top, port, "redis_0/redis.conf")
	cli := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port)})
	defer cli.Close()
	ctx := context.Background()
	for _, kv := range [][2]string{{"cluster-node-timeout", "3000"}, {"loading-process-events-interval-bytes", "2097152"},
		{"key-load-delay", "0"}, {"repl-diskless-load", "disabled"}} {
		require.NoError(t, cli.ConfigSet(ctx, kv[0], kv[1]).Err(), kv[0])
	}
	require.NoError(t, cli.ConfigRewrite(ctx).Err())
	b, err := os.ReadFile(filepath.Join(top, "redis_0", "redis.conf"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "cluster-node-timeout 3000")
	log, err := os.ReadFile(filepath.Join(top, "redis_0", "log.txt"))
	require.NoError(t, err)
	assert.Contains(t, string(log), "Ready to accept connections")
	assert.Contains(t, string(log), "Running mode=cluster, port="+strconv.Itoa(port)+".")
}
