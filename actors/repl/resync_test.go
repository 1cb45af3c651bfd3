package repl_test

import (
	"bufio"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// syncStats reads INFO stats sync_full, sync_partial_ok, sync_partial_err.
func syncStats(t *testing.T, n *nodetest.Node) [3]string {
	c := n.Client(t, 2)
	return [3]string{info(t, c, "stats", "sync_full"), info(t, c, "stats", "sync_partial_ok"),
		info(t, c, "stats", "sync_partial_err")}
}

// cutAndWrite kills the replica's connection from the primary's side and,
// in the same pipeline (so before the replica can reconnect), writes n
// values of size bytes.
func cutAndWrite(t *testing.T, p *nodetest.Node, n, size int) {
	pc := p.Client(t, 2)
	pipe := pc.Pipeline()
	kill := pipe.Do(ctx, "CLIENT", "KILL", "TYPE", "replica")
	val := strings.Repeat("x", size)
	for i := 0; i < n; i++ {
		pipe.Set(ctx, "cut:"+strconv.Itoa(i), val, 0)
	}
	_, err := pipe.Exec(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(1), kill.Val())
}

// TestPartialResyncAfterLinkCut: a replica whose link is cut for a short
// while continues from the backlog (CONTINUE), not with a full sync.
func TestPartialResyncAfterLinkCut(t *testing.T) {
	for _, tc := range []struct {
		name string
		p, r int
	}{{"same-shards", 2, 2}, {"other-shards", 3, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			p := start(t, tc.p)
			r := start(t, tc.r)
			workload(t, p.Client(t), 1)
			replicate(t, r, p)
			waitConverged(t, p, r)
			// The replica first offered its own (primary's) history: like
			// Redis, that counts as a refused partial resync.
			require.Equal(t, [3]string{"1", "0", "1"}, syncStats(t, p))
			before := info(t, r.Client(t, 2), "replication", "master_replid")

			cutAndWrite(t, p, 200, 100)
			workload(t, p.Client(t), 2)
			nodetest.Eventually(t, 10*time.Second, func() bool {
				return syncStats(t, p)[1] == "1"
			}, "partial resync accepted")
			waitUp(t, r)
			waitConverged(t, p, r)
			assert.Equal(t, [3]string{"1", "1", "1"}, syncStats(t, p))
			assert.Equal(t, before, info(t, r.Client(t, 2), "replication", "master_replid"))
			assert.Equal(t, "200", strconv.FormatInt(int64(len(r.Client(t).Keys(ctx, "cut:*").Val())), 10))
		})
	}
}

// TestBacklogOverflowFullResync: when the writes made during the cut no
// longer fit in the backlog, the replica gets a full sync.
func TestBacklogOverflowFullResync(t *testing.T) {
	p := start(t, 2, "repl-backlog-size", "32kb")
	r := start(t, 2)
	replicate(t, r, p)
	require.NoError(t, p.Client(t).Set(ctx, "a", "1", 0).Err())
	waitConverged(t, p, r)
	cutAndWrite(t, p, 400, 1000) // 400KB through 2 x 16KB of backlog
	nodetest.Eventually(t, 10*time.Second, func() bool {
		return syncStats(t, p)[0] == "2"
	}, "second full sync")
	waitUp(t, r)
	waitConverged(t, p, r)
	assert.Equal(t, [3]string{"2", "0", "2"}, syncStats(t, p))
	assert.Equal(t, int64(401), r.Client(t).DBSize(ctx).Val())
}

// TestPrimaryRestartFullResync: a primary that restarts (empty, new
// replication id) is followed with a full sync: the replica ends up with
// the new primary's data only.
func TestPrimaryRestartFullResync(t *testing.T) {
	p := start(t, 2)
	r := start(t, 2)
	require.NoError(t, p.Client(t).Set(ctx, "old", "1", 0).Err())
	replicate(t, r, p)
	waitConverged(t, p, r)
	oldID := info(t, r.Client(t, 2), "replication", "master_replid")
	port := p.Port
	p.Stop()
	rc := r.Client(t, 2)
	nodetest.Eventually(t, 10*time.Second, func() bool {
		return info(t, rc, "replication", "master_link_status") == "down"
	}, "link down")
	assert.Equal(t, "1", rc.Get(ctx, "old").Val(), "stale data is served meanwhile")

	p2 := start(t, 2, "port", strconv.Itoa(port))
	p2.Port, p2.Addr = port, "127.0.0.1:"+strconv.Itoa(port)
	require.NoError(t, p2.Client(t).Set(ctx, "new", "2", 0).Err())
	waitUp(t, r)
	waitConverged(t, p2, r)
	assert.Equal(t, int64(1), rc.DBSize(ctx).Val())
	assert.Equal(t, "2", rc.Get(ctx, "new").Val())
	assert.NotEqual(t, oldID, info(t, rc, "replication", "master_replid"))
	assert.Equal(t, "1", syncStats(t, p2)[0])
	assert.Equal(t, "1", syncStats(t, p2)[2], "the old history was refused")
}

// TestPromotionSiblingContinues: after REPLICAOF NO ONE on one replica,
// its sibling follows it with a partial resync (replid2), and the old
// history remains valid.
func TestPromotionSiblingContinues(t *testing.T) {
	p := start(t, 2)
	r1 := start(t, 2)
	r2 := start(t, 2)
	workload(t, p.Client(t), 1)
	replicate(t, r1, p)
	replicate(t, r2, p)
	waitConverged(t, p, r1)
	waitConverged(t, p, r2)
	r1c := r1.Client(t, 2)
	oldID := info(t, r1c, "replication", "master_replid")
	nodetest.Eventually(t, 5*time.Second, func() bool {
		return info(t, r1c, "replication", "slave_repl_offset") == info(t, p.Client(t, 2), "replication", "master_repl_offset")
	}, "r1 acknowledged everything")

	require.Equal(t, "OK", r1c.Do(ctx, "REPLICAOF", "NO", "ONE").Val())
	nodetest.Eventually(t, 5*time.Second, func() bool {
		return info(t, r1c, "replication", "master_replid2") == oldID
	}, "r1 keeps the old id as replid2")
	assert.Equal(t, "master", info(t, r1c, "replication", "role"))
	off, _ := strconv.ParseInt(info(t, r1c, "replication", "master_repl_offset"), 10, 64)
	assert.Equal(t, strconv.FormatInt(off+1, 10), info(t, r1c, "replication", "second_repl_offset"))
	require.NoError(t, r1c.Set(ctx, "promoted", "yes", 0).Err())

	replicate(t, r2, r1)
	waitConverged(t, r1, r2)
	assert.Equal(t, [3]string{"0", "1", "0"}, syncStats(t, r1), "the sibling continued")
	assert.Equal(t, "yes", r2.Client(t).Get(ctx, "promoted").Val())
}

// TestSlowReplicaDisconnected: a replica that does not read is cut off by
// client-output-buffer-limit replica; nothing grows without bound.
func TestSlowReplicaDisconnected(t *testing.T) {
	p := start(t, 2, "client-output-buffer-limit", "replica 256kb 128kb 1")
	conn, err := net.Dial("tcp", p.Addr)
	require.NoError(t, err)
	defer conn.Close()
	br := bufio.NewReader(conn)
	send := func(args ...string) string {
		var b strings.Builder
		b.WriteString("*" + strconv.Itoa(len(args)) + "\r\n")
		for _, a := range args {
			b.WriteString("$" + strconv.Itoa(len(a)) + "\r\n" + a + "\r\n")
		}
		_, err := conn.Write([]byte(b.String()))
		require.NoError(t, err)
		line, err := br.ReadString('\n')
		require.NoError(t, err)
		return line
	}
	assert.Equal(t, "+OK\r\n", send("REPLCONF", "listening-port", "1"))
	assert.Equal(t, "+OK\r\n", send("REPLCONF", "capa", "slotd"))
	assert.True(t, strings.HasPrefix(send("PSYNC", "?", "-1"), "+FULLRESYNC "))
	// This replica never reads again.
	pc := p.Client(t, 2)
	nodetest.Eventually(t, 5*time.Second, func() bool {
		return info(t, pc, "replication", "slave0") != ""
	}, "replica listed")
	val := strings.Repeat("v", 10000)
	nodetest.Eventually(t, 20*time.Second, func() bool {
		pipe := pc.Pipeline()
		for i := 0; i < 100; i++ {
			pipe.Set(ctx, "big"+strconv.Itoa(i), val, 0)
		}
		_, err := pipe.Exec(ctx)
		require.NoError(t, err)
		return info(t, pc, "replication", "connected_slaves") == "0"
	}, "slow replica disconnected")
}

// TestPSyncProtocolErrors: PSYNC is only for slotd replicas.
func TestPSyncProtocolErrors(t *testing.T) {
	p := start(t, 2)
	c := p.Client(t, 2)
	assert.EqualError(t, c.Do(ctx, "PSYNC", "?", "-1").Err(), "ERR slotd replicates only to slotd replicas")
	c2 := p.Client(t, 2)
	assert.EqualError(t, c2.Do(ctx, "REPLCONF", "foo", "bar").Err(), "ERR Unrecognized REPLCONF option: foo")
	assert.EqualError(t, c2.Do(ctx, "REPLCONF", "foo").Err(), "ERR syntax error")
	assert.Equal(t, "OK", c2.Do(ctx, "REPLCONF", "listening-port", "5").Val())
	assert.EqualError(t, c2.Do(ctx, "SYNC").Err(),
		"ERR SYNC is not supported: slotd replicates to slotd replicas with PSYNC")
}
