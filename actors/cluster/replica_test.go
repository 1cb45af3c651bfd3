package cluster_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
	"github.com/slotd/slotd/slots"
)

// Replicas in cluster mode, as clients see them: CLUSTER REPLICATE, the
// replication link it starts, redirections on a replica, READONLY reads,
// WAIT, and manual failover.

// primaryWithReplica starts a primary serving every slot and a node that
// replicates it, and waits until the replica's link is up.
func primaryWithReplica(t *testing.T, directives ...string) (primary, replica *nodetest.Node) {
	t.Helper()
	primary = startCluster(t, directives...)
	pc := primary.Client(t, 2)
	require.NoError(t, pc.Do(ctx, "cluster", "addslotsrange", 0, slots.NumSlots-1).Err())
	replica = startCluster(t, directives...)
	rc := replica.Client(t, 2)
	require.Equal(t, "OK", rc.ClusterMeet(ctx, "127.0.0.1", strconv.Itoa(primary.Port)).Val())
	waitOK(t, primary, replica)
	pid := pc.ClusterMyID(ctx).Val()
	require.NoError(t, rc.Do(ctx, "cluster", "replicate", pid).Err())
	waitLinkUp(t, replica)
	// The primary learns the pairing from the replica's heartbeats; only
	// then does it vote for it.
	nodetest.Eventually(t, 10*time.Second, func() bool {
		return strings.Contains(pc.ClusterNodes(ctx).Val(), "slave "+pid)
	}, "primary sees its replica")
	return primary, replica
}

func waitLinkUp(t *testing.T, nd *nodetest.Node) {
	t.Helper()
	c := nd.Client(t, 2)
	nodetest.Eventually(t, 20*time.Second, func() bool {
		info, err := c.Info(ctx, "replication").Result()
		return err == nil && strings.Contains(info, "master_link_status:up")
	}, "replication link of "+nd.Addr+" up")
}

func role(c *redis.Client) string {
	v, err := c.Do(ctx, "role").Slice()
	if err != nil || len(v) == 0 {
		return ""
	}
	s, _ := v[0].(string)
	return s
}

func TestClusterReplicaFollowsPrimary(t *testing.T) {
	t.Parallel()
	primary, replica := primaryWithReplica(t)
	pc, rc := primary.Client(t, 2), replica.Client(t, 2)
	pid := pc.ClusterMyID(ctx).Val()

	// Both nodes show the pairing in CLUSTER NODES.
	for _, c := range []*redis.Client{pc, rc} {
		nodetest.Eventually(t, 10*time.Second, func() bool {
			return strings.Contains(c.ClusterNodes(ctx).Val(), "slave "+pid)
		}, "replica listed as slave of the primary")
	}
	assert.Equal(t, []string{rc.ClusterMyID(ctx).Val()}, replicaIDs(t, pc, pid))

	for i := 0; i < 500; i++ {
		require.NoError(t, pc.Set(ctx, "k"+strconv.Itoa(i), i, 0).Err())
	}
	n, err := pc.Do(ctx, "wait", 1, 2000).Int()
	require.NoError(t, err)
	assert.Equal(t, 1, n, "WAIT 1 counts the replica")
	nodetest.Eventually(t, 10*time.Second, func() bool {
		return pc.Do(ctx, "debug", "digest").Val() == rc.Do(ctx, "debug", "digest").Val()
	}, "replica digest equals the primary's")

	// Without READONLY a replica redirects reads and writes to the primary.
	slot := slots.HashSlotString("k1")
	moved := "MOVED " + strconv.Itoa(slot) + " " + primary.Addr
	assert.EqualError(t, rc.Get(ctx, "k1").Err(), moved)
	assert.EqualError(t, rc.Set(ctx, "k1", "x", 0).Err(), moved)

	// With READONLY it serves reads of its primary's slots; writes still
	// go to the primary.
	ro := replica.Client(t, 2)
	require.NoError(t, ro.ReadOnly(ctx).Err())
	assert.Equal(t, "1", ro.Get(ctx, "k1").Val())
	assert.EqualError(t, ro.Set(ctx, "k1", "x", 0).Err(), moved)
	assert.EqualError(t, ro.Do(ctx, "flushall").Err(), "READONLY You can't write against a read only replica.")
	// A script that declares flags is a write unless it says no-writes,
	// so it is redirected before it runs; one without a shebang runs and
	// fails on its write, as in Redis. (go-redis drops a connection that
	// got READONLY: every connection of this client sends READONLY.)
	ro = redis.NewClient(&redis.Options{Addr: replica.Addr, Protocol: 2, MaxRetries: -1,
		OnConnect: func(ctx context.Context, cn *redis.Conn) error { return cn.ReadOnly(ctx).Err() }})
	t.Cleanup(func() { _ = ro.Close() })
	assert.EqualError(t, ro.Eval(ctx, "#!lua\nreturn redis.call('del', KEYS[1])", []string{"k1"}).Err(), moved)
	assert.Equal(t, "1", ro.Eval(ctx, "#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])",
		[]string{"k1"}).Val())
	assert.ErrorContains(t, ro.Eval(ctx, "return redis.call('del', KEYS[1])", []string{"k1"}).Err(),
		"READONLY You can't write against a read only replica.")
	var queued *redis.Cmd
	_, err = ro.TxPipelined(ctx, func(p redis.Pipeliner) error {
		queued = p.Eval(ctx, "#!lua\nreturn redis.call('del', KEYS[1])", []string{"k1"})
		return nil
	})
	assert.EqualError(t, queued.Err(), moved, "queued in MULTI, it is redirected like a write")
	assert.EqualError(t, err, "EXECABORT Transaction discarded because of previous errors.")

	assert.Equal(t, "master", role(pc))
	assert.Equal(t, "slave", role(rc))
	info := rc.Info(ctx, "replication").Val()
	assert.Contains(t, info, "master_port:"+strconv.Itoa(primary.Port))
}

func replicaIDs(t *testing.T, c *redis.Client, id string) []string {
	t.Helper()
	var lines []string
	nodetest.Eventually(t, 10*time.Second, func() bool {
		var err error
		lines, err = c.Do(ctx, "cluster", "replicas", id).StringSlice()
		return err == nil && len(lines) > 0
	}, "CLUSTER REPLICAS lists the replica")
	var ids []string
	for _, l := range lines {
		ids = append(ids, strings.Fields(l)[0])
	}
	return ids
}

func TestClusterReplicateRefusals(t *testing.T) {
	t.Parallel()
	a := startCluster(t)
	ac := a.Client(t, 2)
	me := ac.ClusterMyID(ctx).Val()
	assert.EqualError(t, ac.Do(ctx, "cluster", "replicate", "abc").Err(), "ERR Unknown node abc")
	assert.EqualError(t, ac.Do(ctx, "cluster", "replicate", me).Err(), "ERR Can't replicate myself")
	assert.EqualError(t, ac.Do(ctx, "cluster", "failover").Err(), "ERR You should send CLUSTER FAILOVER to a replica")
	assert.EqualError(t, ac.Do(ctx, "cluster", "failover", "foo").Err(), "ERR syntax error")
	assert.EqualError(t, ac.Do(ctx, "cluster", "failover", "force", "x").Err(),
		"ERR unknown subcommand or wrong number of arguments for 'failover'. Try CLUSTER HELP.")

	// A primary with slots (or keys) cannot become a replica.
	b := startCluster(t)
	bc := b.Client(t, 2)
	require.NoError(t, bc.Do(ctx, "cluster", "addslots", 1).Err())
	require.Equal(t, "OK", bc.ClusterMeet(ctx, "127.0.0.1", strconv.Itoa(a.Port)).Val())
	nodetest.Eventually(t, 20*time.Second, func() bool {
		text := bc.ClusterNodes(ctx).Val()
		return strings.Contains(text, me) && !strings.Contains(text, "handshake")
	}, "b knows a")
	assert.EqualError(t, bc.Do(ctx, "cluster", "replicate", me).Err(),
		"ERR To set a master the node must be empty and without assigned slots.")
}

// TestClusterManualFailover: CLUSTER FAILOVER on the replica under a
// write load; the roles swap and every acknowledged write is on the new
// primary.
func TestClusterManualFailover(t *testing.T) {
	t.Parallel()
	primary, replica := primaryWithReplica(t)
	pc, rc := primary.Client(t, 2), replica.Client(t, 2)
	oldID, newID := pc.ClusterMyID(ctx).Val(), rc.ClusterMyID(ctx).Val()

	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{primary.Addr}, MaxRedirects: 16,
		MinRetryBackoff: time.Millisecond, MaxRetryBackoff: 20 * time.Millisecond})
	t.Cleanup(func() { _ = cc.Close() })

	var acked sync.Map
	var stop atomic.Bool
	var wg sync.WaitGroup
	var writes atomic.Int64
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				k := "w" + strconv.Itoa(w) + ":" + strconv.Itoa(i)
				if err := cc.Set(ctx, k, i, 0).Err(); err == nil {
					acked.Store(k, strconv.Itoa(i))
					writes.Add(1)
				}
			}
		}(w)
	}
	nodetest.Eventually(t, 10*time.Second, func() bool { return writes.Load() > 200 }, "writes flowing")
	require.NoError(t, rc.Do(ctx, "cluster", "failover").Err())
	nodetest.Eventually(t, 20*time.Second, func() bool {
		return role(rc) == "master" && strings.Contains(pc.ClusterNodes(ctx).Val(), "myself,slave "+newID)
	}, "replica promoted, old primary follows it")
	before := writes.Load()
	nodetest.Eventually(t, 10*time.Second, func() bool { return writes.Load() > before+200 }, "writes resume")
	stop.Store(true)
	wg.Wait()

	waitLinkUp(t, primary)
	nodetest.Eventually(t, 10*time.Second, func() bool {
		return strings.Contains(rc.ClusterNodes(ctx).Val(), "slave "+newID)
	}, "old primary "+oldID+" listed as replica by the new one")
	lost := 0
	acked.Range(func(k, v any) bool {
		got, err := rc.Get(ctx, k.(string)).Result()
		if err != nil || got != v.(string) {
			lost++
		}
		return true
	})
	assert.Zero(t, lost, "acknowledged writes missing on the new primary (of %d)", writes.Load())
	info := rc.ClusterInfo(ctx).Val()
	assert.Equal(t, "ok", infoField(info, "cluster_state"))

	// The counters tell the story: the replica sent MFSTART and asked for
	// a vote, the primary received the one and granted the other, and the
	// winner's configEpoch is the cluster's current epoch.
	oldInfo := pc.ClusterInfo(ctx).Val()
	assert.Equal(t, "1", infoField(info, "cluster_stats_messages_mfstart_sent"))
	assert.Equal(t, "1", infoField(oldInfo, "cluster_stats_messages_mfstart_received"))
	assert.Equal(t, "1", infoField(info, "cluster_stats_messages_auth-req_sent"))
	assert.Equal(t, "1", infoField(oldInfo, "cluster_stats_messages_auth-ack_sent"))
	assert.Equal(t, "1", infoField(info, "cluster_stats_messages_auth-ack_received"))
	assert.Equal(t, infoField(info, "cluster_current_epoch"), infoField(info, "cluster_my_epoch"))
	assert.Equal(t, infoField(info, "cluster_current_epoch"), infoField(oldInfo, "cluster_current_epoch"))
}

// TestClusterFailoverTakeover: TAKEOVER promotes without an election, so
// it works even with the primary unreachable... here simply without its
// agreement; FORCE runs an election without the handshake.
func TestClusterFailoverForceAndTakeover(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"force", "takeover"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			primary, replica := primaryWithReplica(t)
			pc, rc := primary.Client(t, 2), replica.Client(t, 2)
			require.NoError(t, pc.Set(ctx, "before", "1", 0).Err())
			require.NoError(t, pc.Do(ctx, "wait", 1, 5000).Err())
			require.NoError(t, rc.Do(ctx, "cluster", "failover", mode).Err())
			deadline := time.Now().Add(20 * time.Second)
			for !(role(rc) == "master" && role(pc) == "slave") {
				if time.Now().After(deadline) {
					t.Fatalf("roles not swapped:\nprimary %s:\n%s\n%v\nreplica %s:\n%s\n%v", primary.Addr,
						pc.ClusterNodes(ctx).Val(), pc.Do(ctx, "role").Val(), replica.Addr, rc.ClusterNodes(ctx).Val(),
						rc.Do(ctx, "role").Val())
				}
				time.Sleep(20 * time.Millisecond)
			}
			info := rc.ClusterInfo(ctx).Val()
			assert.Equal(t, infoField(info, "cluster_current_epoch"), infoField(info, "cluster_my_epoch"))
			assert.Equal(t, "1", rc.Get(ctx, "before").Val())
			err := pc.Set(ctx, "after", "1", 0).Err()
			var re redis.Error
			require.True(t, errors.As(err, &re))
			assert.True(t, strings.HasPrefix(err.Error(), "MOVED "), err.Error())
		})
	}
}
