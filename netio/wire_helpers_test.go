package netio_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// wireConn is a raw RESP connection for asserting exact reply bytes.
type wireConn struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func dialWire(t *testing.T, addr string) *wireConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return &wireConn{t: t, c: c, r: bufio.NewReader(c)}
}

// send writes one command as a multibulk without reading the reply.
func (w *wireConn) send(args ...string) {
	w.t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	w.write(b.String())
}

func (w *wireConn) write(s string) {
	w.t.Helper()
	_, err := w.c.Write([]byte(s))
	require.NoError(w.t, err)
}

// do sends a command and returns its complete reply, raw.
func (w *wireConn) do(args ...string) string {
	w.t.Helper()
	w.send(args...)
	return w.read()
}

// read returns the next complete reply, raw.
func (w *wireConn) read() string {
	w.t.Helper()
	_ = w.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	s, err := readWireReply(w.r)
	require.NoError(w.t, err)
	return s
}

// readEOF asserts that the server closes the connection.
func (w *wireConn) readEOF() {
	w.t.Helper()
	_ = w.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	b, err := w.r.ReadByte()
	require.ErrorIs(w.t, err, io.EOF, "expected the connection to close, got %q", b)
}

func readWireReply(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return line, err
	}
	if len(line) < 3 {
		return line, fmt.Errorf("short line %q", line)
	}
	body := line[1 : len(line)-2]
	switch line[0] {
	case '$', '=', '!':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return line, err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return line, err
		}
		return line + string(buf), nil
	case '*', '~', '>', '%', '|':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return line, err
		}
		if line[0] == '%' || line[0] == '|' {
			n *= 2
		}
		out := line
		for i := 0; i < n; i++ {
			s, err := readWireReply(r)
			out += s
			if err != nil {
				return out, err
			}
		}
		return out, nil
	}
	return line, nil
}
