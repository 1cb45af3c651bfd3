package repl_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// A full sync is received before the old data goes: meanwhile the replica
// serves what it had (repl-diskless-load swapdb says so with INFO
// async_loading:1), and a transfer that fails leaves that data as it was
// (Redis's 17-diskless-load-swapdb). rdb-key-save-delay on the primary
// slows the transfer down.
func TestFullSyncKeepsOldDataUntilReceived(t *testing.T) {
	for _, mode := range []string{"swapdb", "disabled"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			p := start(t, 2)
			pc := p.Client(t, 2)
			require.NoError(t, pc.Do(ctx, "DEBUG", "POPULATE", "200", "key", "10").Err())
			require.NoError(t, pc.ConfigSet(ctx, "rdb-key-save-delay", "20000").Err()) // 4 s of transfer

			r := start(t, 2, "repl-diskless-load", mode)
			rc := r.Client(t, 2)
			require.NoError(t, rc.Set(ctx, "old", "kept", 0).Err())
			require.NoError(t, rc.Do(ctx, "REPLICAOF", "127.0.0.1", p.Port).Err())
			nodetest.Eventually(t, 10*time.Second, func() bool {
				return info(t, rc, "replication", "master_sync_in_progress") == "1"
			}, "transfer started")
			wantAsync := "0"
			if mode == "swapdb" {
				wantAsync = "1"
			}
			assert.Equal(t, wantAsync, info(t, rc, "persistence", "async_loading"))
			assert.Equal(t, "0", info(t, rc, "persistence", "loading"))
			assert.Equal(t, "kept", rc.Get(ctx, "old").Val(), "old data served during the transfer")
			assert.Equal(t, int64(0), r.Repl.ReplOffset(), "no offset while syncing")

			p.Stop() // the transfer fails
			nodetest.Eventually(t, 10*time.Second, func() bool {
				return info(t, rc, "replication", "master_link_status") == "down" &&
					info(t, rc, "persistence", "async_loading") == "0"
			}, "transfer abandoned")
			assert.Equal(t, "kept", rc.Get(ctx, "old").Val())
			assert.Equal(t, int64(1), rc.DBSize(ctx).Val())
		})
	}
}

// key-load-delay slows the load of a received full sync: the replica is
// loading meanwhile (INFO loading:1, offset 0, so its peers show it
// loading), a command gets LOADING at the next events point (every
// loading-process-events-interval-bytes loaded), and setting the delay
// back to 0 lets it finish.
func TestKeyLoadDelaySlowsTheLoad(t *testing.T) {
	t.Parallel()
	p := start(t, 2)
	pc := p.Client(t, 2)
	require.NoError(t, pc.Do(ctx, "DEBUG", "POPULATE", "500", "key", "10").Err())
	r := start(t, 2, "key-load-delay", "20000", // 20 ms per key
		"loading-process-events-interval-bytes", "1024")
	rc := r.Client(t, 2)
	require.NoError(t, rc.Do(ctx, "REPLICAOF", "127.0.0.1", p.Port).Err())
	nodetest.Eventually(t, 10*time.Second, func() bool {
		return info(t, rc, "persistence", "loading") == "1"
	}, "loading")
	assert.Equal(t, int64(0), r.Repl.ReplOffset())
	assert.Equal(t, "LOADING Redis is loading the dataset in memory", rc.Get(ctx, "key:1").Err().Error())
	require.NoError(t, rc.ConfigSet(ctx, "key-load-delay", "0").Err())
	waitUp(t, r)
	assert.Equal(t, "0", info(t, rc, "persistence", "loading"))
	assert.Equal(t, int64(500), rc.DBSize(ctx).Val())
}

// Between two events points of a load clients wait, as Redis's main thread
// is busy loading: below loading-process-events-interval-bytes a client
// never sees LOADING, its command runs once the load is done.
func TestCommandsWaitForTheLoadBetweenEventsPoints(t *testing.T) {
	t.Parallel()
	p := start(t, 2)
	pc := p.Client(t, 2)
	require.NoError(t, pc.Do(ctx, "DEBUG", "POPULATE", "100", "key", "10").Err())
	r := start(t, 2, "key-load-delay", "10000") // 10 ms per key: about a second
	rc := r.Client(t, 2)
	require.NoError(t, rc.Do(ctx, "REPLICAOF", "127.0.0.1", p.Port).Err())
	nodetest.Eventually(t, 10*time.Second, func() bool {
		return info(t, rc, "persistence", "loading") == "1"
	}, "loading")
	n, err := rc.DBSize(ctx).Result()
	require.NoError(t, err, "no LOADING: the load is smaller than the interval")
	assert.Equal(t, int64(100), n, "answered once the load is done")
	assert.Equal(t, "0", info(t, rc, "persistence", "loading"))
}

// A quiet primary puts a PING in its stream every repl-ping-replica-period
// seconds, so its replicas' offsets move past 0 (a replica at offset 0 is
// loading to its peers) and they see their primary alive.
func TestPrimaryPingsItsReplicas(t *testing.T) {
	t.Parallel()
	p := start(t, 2, "repl-ping-replica-period", "1")
	r := start(t, 2)
	replicate(t, r, p)
	rc := r.Client(t, 2)
	nodetest.Eventually(t, 10*time.Second, func() bool {
		off, _ := strconv.ParseInt(info(t, rc, "replication", "slave_repl_offset"), 10, 64)
		return off > 0 && r.Repl.ReplOffset() > 0
	}, "replica offset past 0 without writes")
}

// A replica frozen by DEBUG SLEEP does not reconnect to its primary before
// it wakes, as a sleeping redis-server does nothing: its link killed in
// the same MULTI stays down for the whole sleep (Redis's
// 05-slave-selection relies on it to leave one replica behind).
func TestSleepingReplicaDoesNotReconnect(t *testing.T) {
	t.Parallel()
	p := start(t, 2)
	r := start(t, 2)
	replicate(t, r, p)
	pc := p.Client(t, 2)
	slaves := func() string { return info(t, pc, "replication", "connected_slaves") }
	require.Equal(t, "1", slaves())

	rc := r.Client(t, 2)
	done := make(chan error, 1)
	go func() {
		_, err := rc.TxPipelined(ctx, func(tx redis.Pipeliner) error {
			tx.Do(ctx, "DEBUG", "SLEEP", "2")
			tx.Do(ctx, "CLIENT", "KILL", "TYPE", "master")
			return nil
		})
		done <- err
	}()
	nodetest.Eventually(t, 10*time.Second, func() bool { return slaves() == "0" }, "link killed")
	for {
		select {
		case err := <-done:
			require.NoError(t, err)
			waitUp(t, r)
			return
		default:
			require.Equal(t, "0", slaves(), "no reconnection while the replica sleeps")
		}
	}
}
