package netio_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// startReplica starts a primary and a replica of it (standalone REPLICAOF)
// and waits for the link.
func startReplica(t *testing.T) (p, r *nodetest.Node) {
	t.Helper()
	p, r = nodetest.Start(t), nodetest.Start(t)
	ctx := context.Background()
	rc := r.Client(t)
	require.NoError(t, rc.Do(ctx, "REPLICAOF", "127.0.0.1", p.Port).Err())
	nodetest.Eventually(t, 10*time.Second, func() bool {
		return strings.Contains(rc.Info(ctx, "replication").Val(), "master_link_status:up")
	}, "replica link up")
	return p, r
}

// Writes that reach a replica through the replication stream invalidate
// the keys its tracking clients read there, as Redis does for the
// primary's writes (the replica runs them as the master client).
func TestTrackingReplicaAppliedWrites(t *testing.T) {
	t.Parallel()
	p, r := startReplica(t)
	pw := dialWire(t, p.Addr)
	a := dialWire(t, r.Addr)
	a.do("HELLO", "3")
	require.Equal(t, "+OK\r\n", a.do("CLIENT", "TRACKING", "ON"))
	require.Equal(t, "_\r\n", a.do("GET", "k"))

	require.Equal(t, "+OK\r\n", pw.do("SET", "k", "v1"))
	require.Equal(t, invK, a.read())
	// Read again (once the write has arrived) and change it with another
	// command type.
	nodetest.Eventually(t, 5*time.Second, func() bool { return a.do("GET", "k") == "$2\r\nv1\r\n" }, "write not replicated")
	require.Equal(t, ":1\r\n", pw.do("APPEND", "other", "x"))
	require.Equal(t, ":3\r\n", pw.do("APPEND", "k", "x"))
	require.Equal(t, invK, a.read())
	// Keys expired by the primary reach the replica as DEL.
	require.Equal(t, "$3\r\nv1x\r\n", a.do("GET", "k"))
	require.Equal(t, ":1\r\n", pw.do("PEXPIRE", "k", "10"))
	require.Equal(t, invK, a.read())
	// FLUSHALL of a tracked key. Redis sends one null invalidation; slotd's
	// replica drops the flushed slots and invalidates their tracked keys
	// one by one (the stream carries per-shard slot flushes).
	nodetest.Eventually(t, 5*time.Second, func() bool { return a.do("GET", "k") == "_\r\n" }, "expiry not replicated")
	require.Equal(t, "+OK\r\n", pw.do("SET", "k", "v"))
	require.Equal(t, invK, a.read())
	nodetest.Eventually(t, 5*time.Second, func() bool { return a.do("GET", "k") == "$1\r\nv\r\n" }, "write not replicated")
	require.Equal(t, "+OK\r\n", pw.do("FLUSHALL"))
	require.Equal(t, invK, a.read())
}

// NOLOOP on a replica: the client's own reads must not make it the
// "writer" of the primary's writes applied afterwards.
func TestTrackingReplicaNoLoop(t *testing.T) {
	t.Parallel()
	p, r := startReplica(t)
	pw := dialWire(t, p.Addr)
	a := dialWire(t, r.Addr)
	a.do("HELLO", "3")
	require.Equal(t, "+OK\r\n", a.do("CLIENT", "TRACKING", "ON", "NOLOOP"))
	require.Equal(t, "_\r\n", a.do("GET", "k"))
	require.Equal(t, "+OK\r\n", pw.do("SET", "k", "v1"))
	require.Equal(t, invK, a.read())
}

// RESP2 tracking on a replica with REDIRECT to a subscriber of
// __redis__:invalidate, and BCAST.
func TestTrackingReplicaRedirectAndBcast(t *testing.T) {
	t.Parallel()
	p, r := startReplica(t)
	pw := dialWire(t, p.Addr)
	sub := dialWire(t, r.Addr)
	id := strings.TrimSuffix(strings.TrimPrefix(sub.do("CLIENT", "ID"), ":"), "\r\n")
	require.Equal(t, "*3\r\n$9\r\nsubscribe\r\n$20\r\n__redis__:invalidate\r\n:1\r\n", sub.do("SUBSCRIBE", "__redis__:invalidate"))
	a := dialWire(t, r.Addr)
	require.Equal(t, "+OK\r\n", a.do("CLIENT", "TRACKING", "ON", "REDIRECT", id))
	require.Equal(t, "$-1\r\n", a.do("GET", "k"))
	b := dialWire(t, r.Addr)
	b.do("HELLO", "3")
	require.Equal(t, "+OK\r\n", b.do("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "k"))

	require.Equal(t, "+OK\r\n", pw.do("SET", "k", "v"))
	require.Equal(t, "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n*1\r\n$1\r\nk\r\n", sub.read())
	require.Equal(t, invK, b.read())
}
