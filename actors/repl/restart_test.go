package repl_test

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReplicaRestartPartialResync: a replica shut down with SHUTDOWN SAVE
// records its replication id and offsets in dump.rdb; restarted from it
// (replicaof in its configuration) it continues with a partial resync of
// what the primary wrote meanwhile, and ends up equal to the primary.
func TestReplicaRestartPartialResync(t *testing.T) {
	p := start(t, 2)
	workload(t, p.Client(t), 1)
	r := start(t, 2, "replicaof", "127.0.0.1 "+strconv.Itoa(p.Port))
	waitUp(t, r)
	waitConverged(t, p, r)
	before := syncStats(t, p)

	require.Error(t, r.Client(t, 2).Do(ctx, "SHUTDOWN", "SAVE").Err()) // no reply: it exits
	require.NoError(t, r.Wait())
	workload(t, p.Client(t), 2) // written while the replica is down

	r2 := start(t, 2, "dir", r.Dir, "replicaof", "127.0.0.1 "+strconv.Itoa(p.Port))
	waitUp(t, r2)
	waitConverged(t, p, r2)
	after := syncStats(t, p)
	require.Equal(t, before[0], after[0], "no new full sync")
	ok0, _ := strconv.Atoi(before[1])
	ok1, _ := strconv.Atoi(after[1])
	require.Equal(t, ok0+1, ok1, "one partial resync")
}
