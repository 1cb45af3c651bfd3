package repl_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// FAILOVER hands a standalone primary's role to its replica under a write
// load with no acknowledged write lost: writes are paused while the
// replica catches up, the old primary then replicates from the new one
// (a partial resync on both sides, no full sync), and the writes the pause
// held get READONLY. Without TO it picks any caught-up replica (back
// again); the error texts are Redis 7.0's.
func TestFailover(t *testing.T) {
	p, r := start(t, 2), start(t, 2)
	pc, rc := p.Client(t, 2), r.Client(t, 2)
	assert.EqualError(t, pc.Do(ctx, "FAILOVER").Err(), "ERR FAILOVER requires connected replicas.")
	assert.EqualError(t, pc.Do(ctx, "FAILOVER", "ABORT").Err(), "ERR No failover in progress.")
	replicate(t, r, p)
	assert.EqualError(t, rc.Do(ctx, "FAILOVER").Err(), "ERR FAILOVER is not valid when server is a replica.")
	assert.EqualError(t, pc.Do(ctx, "FAILOVER", "TO", "127.0.0.1", strconv.Itoa(p.Port)).Err(),
		"ERR FAILOVER target HOST and PORT is not a replica.")
	assert.EqualError(t, pc.Do(ctx, "FAILOVER", "TO", "127.0.0.1", strconv.Itoa(r.Port), "FORCE").Err(),
		"ERR FAILOVER with force option requires both a timeout and target HOST and IP.")
	assert.EqualError(t, pc.Do(ctx, "FAILOVER", "TIMEOUT", "0").Err(), "ERR FAILOVER timeout must be greater than 0")

	acked := make(chan int64, 1)
	go func() {
		wc := p.Client(t, 2)
		last := int64(0)
		for {
			n, err := wc.Incr(ctx, "ctr").Result()
			if err != nil {
				acked <- last
				return
			}
			last = n
		}
	}()
	nodetest.Eventually(t, 5*time.Second, func() bool { return pc.Get(ctx, "ctr").Val() >= "1" }, "writes flow")
	require.NoError(t, pc.Do(ctx, "FAILOVER", "TO", "127.0.0.1", strconv.Itoa(r.Port)).Err())
	nodetest.Eventually(t, 10*time.Second, func() bool {
		return info(t, pc, "replication", "master_failover_state") == "no-failover"
	}, "failover ends")
	last := <-acked
	assert.Equal(t, "slave", info(t, pc, "replication", "role"))
	assert.Equal(t, "master", info(t, rc, "replication", "role"))
	assert.Equal(t, strconv.FormatInt(last, 10), rc.Get(ctx, "ctr").Val(), "every acknowledged INCR, no other")
	assert.Equal(t, "1", info(t, rc, "stats", "sync_partial_ok"))
	assert.Equal(t, "0", info(t, rc, "stats", "sync_full"))
	waitUp(t, p)
	waitConverged(t, r, p)

	// FAILOVER without TO: the one caught-up replica, back to p.
	require.NoError(t, rc.Set(ctx, "after", "1", 0).Err())
	require.NoError(t, rc.Do(ctx, "FAILOVER").Err())
	nodetest.Eventually(t, 10*time.Second, func() bool {
		return info(t, rc, "replication", "role") == "slave" &&
			info(t, rc, "replication", "master_failover_state") == "no-failover"
	}, "second failover ends")
	assert.Equal(t, "master", info(t, pc, "replication", "role"))
	assert.Equal(t, "1", pc.Get(ctx, "after").Val())
}
