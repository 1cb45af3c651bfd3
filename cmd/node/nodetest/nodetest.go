// Package nodetest starts in-process slotd nodes on free loopback ports for
// tests that talk to them over TCP with real clients.
package nodetest

import (
	"context"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node"
	"github.com/slotd/slotd/netio/config"
)

// Node is a started test node.
type Node struct {
	*node.Node
	Addr string
	Port int
	Dir  string
}

// FreePort returns a loopback TCP port that was free a moment ago, and
// whose +10000 bus port was free too. Ports come from 12000–21999 so that
// neither falls in the kernel's ephemeral range (32768+), where an outgoing
// connection could grab the bus port between this check and the bind.
func FreePort(t testing.TB) int {
	for i := 0; i < 200; i++ {
		port := 12000 + rand.IntN(10000)
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			continue
		}
		l2, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+10000))
		_ = l.Close()
		if err != nil {
			continue
		}
		_ = l2.Close()
		return port
	}
	t.Fatal("no free port")
	return 0
}

// Start starts a node with the given directives ("name", "value", ...)
// on a free port in a temporary dir, logging only warnings, and stops it at
// the end of the test.
func Start(t testing.TB, directives ...string) *Node {
	t.Helper()
	dir := t.TempDir()
	port := FreePort(t)
	cfg := config.New()
	args := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir, "--loglevel", "warning",
		"--save", ""}
	for i := 0; i+1 < len(directives); i += 2 {
		args = append(args, "--"+directives[i], directives[i+1])
	}
	require.NoError(t, cfg.LoadArgs(args))
	n, err := node.Start(cfg)
	require.NoError(t, err)
	tn := &Node{Node: n, Addr: "127.0.0.1:" + strconv.Itoa(port), Port: port, Dir: dir}
	t.Cleanup(n.Stop)
	return tn
}

// Client returns a go-redis client (RESP3 unless proto 2 is asked for) that
// is closed at the end of the test.
func (n *Node) Client(t testing.TB, proto ...int) *redis.Client {
	p := 3
	if len(proto) > 0 {
		p = proto[0]
	}
	c := redis.NewClient(&redis.Options{Addr: n.Addr, Protocol: p, DialTimeout: 5 * time.Second,
		ReadTimeout: 10 * time.Second, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Eventually polls cond every few milliseconds until it holds or the
// deadline passes.
func Eventually(t testing.TB, d time.Duration, cond func() bool, msg string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v: %s", d, msg)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// InfoField returns one field of INFO section, "" when the section has no
// such field.
func InfoField(t testing.TB, c *redis.Client, section, field string) string {
	t.Helper()
	txt, err := c.Info(context.Background(), section).Result()
	require.NoError(t, err)
	for _, line := range strings.Split(txt, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return v
		}
	}
	return ""
}
