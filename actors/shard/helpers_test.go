package shard_test

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/actors/node/nodetest"
)

// respConn is the raw RESP connection of the command tests: every reply
// comes back as its exact bytes, so tests see reply types (bulk vs simple,
// $-1 vs _, RESP3 sets and doubles) as a client does.
type respConn struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

// respTimeout bounds one write or reply; generous because some replies
// (DUMP of large values, scripts that run until killed) take a while on a
// busy machine.
const respTimeout = 30 * time.Second

// respDial connects to addr; proto 3 switches the connection with HELLO 3.
func respDial(t *testing.T, addr string, proto int) *respConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	rc := &respConn{t: t, c: c, r: bufio.NewReaderSize(c, 1<<16)}
	if proto == 3 {
		require.True(t, strings.HasPrefix(rc.Do("HELLO", "3"), "%"), "HELLO 3")
	}
	return rc
}

// Send writes commands without reading their replies.
func (rc *respConn) Send(args ...string) { rc.send(args) }

func (rc *respConn) send(cmds ...[]string) {
	rc.t.Helper()
	require.NoError(rc.t, rc.c.SetWriteDeadline(time.Now().Add(respTimeout)))
	var req []byte
	for _, args := range cmds {
		req = append(req, nodetest.Command(args...)...)
	}
	_, err := rc.c.Write(req)
	require.NoError(rc.t, err)
}

// Read reads one reply, waiting at most d.
func (rc *respConn) Read(d time.Duration) string {
	rc.t.Helper()
	return rc.read(d, nil)
}

func (rc *respConn) read(d time.Duration, args []string) string {
	rc.t.Helper()
	require.NoError(rc.t, rc.c.SetReadDeadline(time.Now().Add(d)))
	reply, err := nodetest.ReadReply(rc.r)
	require.NoError(rc.t, err, "reading the reply to %.100q", args)
	return reply
}

// Do sends one command and returns its raw reply.
func (rc *respConn) Do(args ...string) string {
	rc.t.Helper()
	rc.send(args)
	return rc.read(respTimeout, args)
}

// Pipe sends several commands in one write and returns their raw replies.
func (rc *respConn) Pipe(cmds ...[]string) []string {
	rc.t.Helper()
	rc.send(cmds...)
	out := make([]string, len(cmds))
	for i, args := range cmds {
		out[i] = rc.read(respTimeout, args)
	}
	return out
}

// shardsNode starts a slotd node with several shard actors, so that
// multi-slot commands really fan out; directives are appended.
func shardsNode(t *testing.T, directives ...string) *nodetest.Node {
	t.Helper()
	return nodetest.Start(t, append([]string{"shard-actors", "4"}, directives...)...)
}
