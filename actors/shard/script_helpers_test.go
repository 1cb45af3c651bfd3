package shard_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/actors/node/nodetest"
)

// scrConn is a raw RESP connection: each reply comes back as its exact
// bytes, so the scripting tests compare reply types as well as values.
type scrConn struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func scrDial(t *testing.T, addr string, proto int) *scrConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	sc := &scrConn{t: t, c: c, r: bufio.NewReader(c)}
	if proto == 3 {
		require.True(t, strings.HasPrefix(sc.Do("HELLO", "3"), "%"), "HELLO 3")
	}
	return sc
}

// Send writes one command without reading its reply.
func (sc *scrConn) Send(args ...string) {
	sc.t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	require.NoError(sc.t, sc.c.SetWriteDeadline(time.Now().Add(10*time.Second)))
	_, err := io.WriteString(sc.c, b.String())
	require.NoError(sc.t, err)
}

// Read reads one reply, waiting at most d.
func (sc *scrConn) Read(d time.Duration) string {
	sc.t.Helper()
	require.NoError(sc.t, sc.c.SetReadDeadline(time.Now().Add(d)))
	reply, err := scrReadReply(sc.r)
	require.NoError(sc.t, err)
	return reply
}

// Do sends one command and returns its raw reply.
func (sc *scrConn) Do(args ...string) string {
	sc.t.Helper()
	sc.Send(args...)
	return sc.Read(10 * time.Second)
}

func scrReadReply(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	if len(line) < 3 {
		return "", fmt.Errorf("short line %q", line)
	}
	out := line
	head := line[1 : len(line)-2]
	switch line[0] {
	case '$', '=', '!':
		n, err := strconv.Atoi(head)
		if err != nil || n < 0 {
			return out, err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", err
		}
		return out + string(buf), nil
	case '*', '~', '>', '%', '|':
		n, err := strconv.Atoi(head)
		if err != nil || n < 0 {
			return out, err
		}
		if line[0] == '%' || line[0] == '|' {
			n *= 2
		}
		for i := 0; i < n; i++ {
			el, err := scrReadReply(r)
			if err != nil {
				return "", err
			}
			out += el
		}
		return out, nil
	default:
		return out, nil
	}
}

// scrRedis starts a real redis-server for side-by-side comparisons; the
// test is skipped when none is installed.
func scrRedis(t *testing.T, directives ...string) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not installed")
	}
	port := nodetest.FreePort(t)
	dir := t.TempDir()
	args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", dir, "--logfile", filepath.Join(dir, "redis.log")}, directives...)
	cmd := exec.Command(bin, args...)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addr := "127.0.0.1:" + strconv.Itoa(port)
	nodetest.Eventually(t, 10*time.Second, func() bool {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return false
		}
		_ = c.Close()
		return true
	}, "redis-server did not start")
	return addr
}

func scrBulk(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }
func scrErr(s string) string  { return "-" + s + "\r\n" }
