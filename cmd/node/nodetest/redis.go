package nodetest

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
)

// StartRedis starts Debian's redis-server (the reference implementation
// the differential tests compare with) on a free loopback port, without
// persistence, and stops it when the test ends. args are extra
// command-line arguments ("--hash-max-listpack-entries", "128", ...). The
// test is skipped when redis-server is not installed.
func StartRedis(t testing.TB, args ...string) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not installed")
	}
	port := FreePort(t)
	dir := t.TempDir()
	all := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", dir, "--logfile", filepath.Join(dir, "redis.log")}, args...)
	cmd := exec.Command(bin, all...)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addr := "127.0.0.1:" + strconv.Itoa(port)
	Eventually(t, 10*time.Second, func() bool {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return false
		}
		_ = c.Close()
		return true
	}, "redis-server did not start")
	return addr
}

// Command encodes args as one RESP multibulk request.
func Command(args ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.String()
}

// ReadReply reads one complete RESP2/RESP3 reply and returns its exact
// bytes, so tests see reply types ($-1 vs _, bulk vs simple) as a client
// does.
func ReadReply(r *bufio.Reader) (string, error) {
	var out strings.Builder
	err := readReply(r, &out)
	return out.String(), err
}

func readReply(r *bufio.Reader, out *strings.Builder) error {
	line, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	if len(line) < 3 {
		return fmt.Errorf("short line %q", line)
	}
	out.WriteString(line)
	head := line[1 : len(line)-2]
	switch line[0] {
	case '$', '=', '!':
		n, err := strconv.Atoi(head)
		if err != nil || n < 0 {
			return err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return err
		}
		out.Write(buf)
	case '*', '~', '>', '%', '|':
		n, err := strconv.Atoi(head)
		if err != nil || n < 0 {
			return err
		}
		if line[0] == '%' || line[0] == '|' {
			n *= 2
		}
		for i := 0; i < n; i++ {
			if err := readReply(r, out); err != nil {
				return err
			}
		}
	}
	return nil
}
