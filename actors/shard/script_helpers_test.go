package shard_test

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

// scrReadReply reads one reply verbatim (shared helper).
var scrReadReply = nodetest.ReadReply

// scrRedis starts a real redis-server for side-by-side comparisons; the
// test is skipped when none is installed.
func scrRedis(t *testing.T, directives ...string) string {
	return nodetest.StartRedis(t, directives...)
}

func scrBulk(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }
func scrErr(s string) string  { return "-" + s + "\r\n" }
