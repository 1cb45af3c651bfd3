package cluster_test

import (
	"bufio"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
	"github.com/slotd/slotd/slots"
)

// Live resharding as clients see it, on two in-process nodes: SETSLOT,
// ASK/TRYAGAIN/ASKING routing, MIGRATE, and the slot changing hands.

// tagIn returns a hash tag whose slot is slot.
func tagIn(slot int) string {
	for i := 0; ; i++ {
		tag := "t" + strconv.Itoa(i)
		if slots.HashSlotString(tag) == slot {
			return tag
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestLiveResharding(t *testing.T) {
	t.Parallel()
	nodes := formCluster(t, 2)
	a, b := nodes[0], nodes[1] // a: 0-8191, b: 8192-16383
	for _, proto := range []int{2, 3} {
		t.Run("RESP"+strconv.Itoa(proto), func(t *testing.T) {
			liveResharding(t, a, b, proto, 100+proto)
		})
	}
}

func liveResharding(t *testing.T, a, b *nodetest.Node, proto, slot int) {
	ca, cb := a.Client(t, proto), b.Client(t, proto)
	idA, idB := ca.ClusterMyID(ctx).Val(), cb.ClusterMyID(ctx).Val()
	tag := "{" + tagIn(slot) + "}"
	k1, k2, missing := tag+"k1", tag+"k2", tag+"missing"
	require.NoError(t, ca.Set(ctx, k1, "v1", 0).Err())
	require.NoError(t, ca.RPush(ctx, k2, "a", "b", "c").Err())
	require.NoError(t, ca.PExpire(ctx, k2, time.Hour).Err())
	s := strconv.Itoa(slot)
	askB := "ASK " + s + " " + b.Addr
	movedA := "MOVED " + s + " " + a.Addr

	// A client blocked on a key of the slot before it moves is redirected
	// once the slot is gone.
	blockedErr := make(chan error, 1)
	blc := a.Client(t, proto)
	go func() { blockedErr <- blc.BLPop(ctx, 0, tag+"blocked").Err() }()
	nodetest.Eventually(t, 5*time.Second, func() bool {
		return strings.Contains(ca.Info(ctx, "clients").Val(), "blocked_clients:1")
	}, "BLPOP blocked")

	// Errors, as Redis 7.0 words them.
	assert.Equal(t, "ERR I'm not the owner of hash slot "+s, errText(cb.Do(ctx, "cluster", "setslot", slot,
		"migrating", idA).Err()))
	assert.Equal(t, "ERR I'm already the owner of hash slot "+s, errText(ca.Do(ctx, "cluster", "setslot", slot,
		"importing", idB).Err()))
	assert.Equal(t, "ERR I don't know about node nope", errText(ca.Do(ctx, "cluster", "setslot", slot,
		"migrating", "nope").Err()))
	assert.Equal(t, "ERR Can't assign hashslot "+s+" to a different node while I still hold keys for this hash slot.",
		errText(ca.Do(ctx, "cluster", "setslot", slot, "node", idB).Err()))

	require.Equal(t, "OK", cb.Do(ctx, "cluster", "setslot", slot, "importing", idA).Val())
	require.Equal(t, "OK", ca.Do(ctx, "cluster", "setslot", slot, "migrating", idB).Val())
	assert.Contains(t, myself(t, ca), " ["+s+"->-"+idB+"]")
	assert.Contains(t, myself(t, cb), " ["+s+"-<-"+idA+"]")

	// Source: existing keys served, missing ones redirected with ASK (reads
	// and writes that would create), a mix gets TRYAGAIN.
	assert.Equal(t, "v1", ca.Get(ctx, k1).Val())
	assert.Equal(t, askB, errText(ca.Get(ctx, missing).Err()))
	assert.Equal(t, askB, errText(ca.Set(ctx, missing, "x", 0).Err()))
	assert.Equal(t, "TRYAGAIN Multiple keys request during rehashing of slot",
		errText(ca.MGet(ctx, k1, missing).Err()))
	assert.Equal(t, []any{"v1", "v1"}, ca.MGet(ctx, k1, k1).Val())
	assert.Equal(t, askB, errText(ca.Do(ctx, "dump", missing).Err()))

	// A transaction touching a missing key: queued, then EXEC gets the ASK.
	conn := ca.Conn()
	_, err := conn.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Get(ctx, missing)
		return nil
	})
	assert.Equal(t, askB, errText(err))
	_ = conn.Close()

	// A cluster client follows the EXEC-time ASK: the transaction runs on
	// the target after ASKING.
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{a.Addr}, Protocol: proto})
	defer cc.Close()
	txKey := tag + "tx"
	_, err = cc.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, txKey, "in-tx", 0)
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, askB, errText(ca.Get(ctx, txKey).Err()), "the key was created on the target")

	// Target: MOVED without ASKING; with it, one command is served.
	assert.Equal(t, movedA, errText(cb.Get(ctx, missing).Err()))
	conn = cb.Conn()
	defer conn.Close()
	require.Equal(t, "OK", conn.Do(ctx, "asking").Val())
	assert.Equal(t, redis.Nil, conn.Get(ctx, missing).Err())
	assert.Equal(t, movedA, errText(conn.Get(ctx, missing).Err()), "ASKING is one-shot")
	require.Equal(t, "OK", conn.Do(ctx, "asking").Val())
	assert.Equal(t, "TRYAGAIN Multiple keys request during rehashing of slot",
		errText(conn.MGet(ctx, missing, k1).Err()))

	// MIGRATE: one key, then a KEYS batch; NOKEY when none is here.
	port := strconv.Itoa(b.Port)
	assert.Equal(t, "NOKEY", ca.Do(ctx, "migrate", "127.0.0.1", port, missing, 0, 5000).Val())
	require.Equal(t, "OK", ca.Do(ctx, "migrate", "127.0.0.1", port, k1, 0, 5000).Val())
	assert.Equal(t, askB, errText(ca.Get(ctx, k1).Err()))
	require.Equal(t, "OK", conn.Do(ctx, "asking").Val())
	assert.Equal(t, "v1", conn.Get(ctx, k1).Val())

	// BUSYKEY from the target, prefixed as Redis does; COPY keeps the key.
	require.Equal(t, "OK", ca.Do(ctx, "migrate", "127.0.0.1", port, "", 0, 5000, "copy", "keys", k2).Val())
	assert.Equal(t, int64(3), ca.LLen(ctx, k2).Val())
	assert.Equal(t, "ERR Target instance replied with error: BUSYKEY Target key name already exists.",
		errText(ca.Do(ctx, "migrate", "127.0.0.1", port, "", 0, 5000, "keys", k2).Err()))
	require.Equal(t, "OK", ca.Do(ctx, "migrate", "127.0.0.1", port, "", 0, 5000, "replace", "keys", k2, missing).Val())
	assert.Equal(t, int64(0), ca.Exists(ctx, k2).Val())
	require.Equal(t, "OK", conn.Do(ctx, "asking").Val())
	assert.Equal(t, []string{"a", "b", "c"}, conn.LRange(ctx, k2, 0, -1).Val())
	require.Equal(t, "OK", conn.Do(ctx, "asking").Val())
	ttl := conn.PTTL(ctx, k2).Val()
	assert.True(t, ttl > 59*time.Minute && ttl <= time.Hour, "TTL carried over: %v", ttl)

	// Errors of MIGRATE itself.
	assert.Equal(t, "ERR syntax error", errText(ca.Do(ctx, "migrate", "127.0.0.1", port, k1, 0, 10, "bogus").Err()))
	assert.Equal(t, "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string",
		errText(ca.Do(ctx, "migrate", "127.0.0.1", port, k1, 0, 10, "keys", k1).Err()))
	assert.Equal(t, "ERR value is not an integer or out of range",
		errText(ca.Do(ctx, "migrate", "127.0.0.1", port, k1, "x", 10).Err()))
	require.NoError(t, ca.Do(ctx, "asking").Err())

	// Close the slot: target first (bumps its epoch), then source.
	require.Equal(t, "OK", cb.Do(ctx, "cluster", "setslot", slot, "node", idB).Val())
	require.Equal(t, "OK", ca.Do(ctx, "cluster", "setslot", slot, "node", idB).Val())
	assert.NotContains(t, myself(t, ca), "[")
	assert.NotContains(t, myself(t, cb), "[")
	assert.Equal(t, "MOVED "+s+" "+b.Addr, errText(ca.Get(ctx, k1).Err()))
	select {
	case err := <-blockedErr:
		assert.Equal(t, "MOVED "+s+" "+b.Addr, errText(err))
	case <-time.After(5 * time.Second):
		t.Fatal("the blocked client was not redirected")
	}
	assert.Equal(t, "v1", cb.Get(ctx, k1).Val())
	assert.Equal(t, int64(0), ca.ClusterCountKeysInSlot(ctx, slot).Val())
	assert.Equal(t, int64(3), cb.ClusterCountKeysInSlot(ctx, slot).Val())
	assert.Equal(t, "in-tx", cb.Get(ctx, txKey).Val())
	// Both nodes agree, by gossip too.
	nodetest.Eventually(t, 10*time.Second, func() bool {
		return slotOwner(t, ca, slot) == idB && slotOwner(t, cb, slot) == idB
	}, "slot bound to b everywhere")
}

// slotOwner is the id CLUSTER SLOTS names for slot.
func slotOwner(t *testing.T, c *redis.Client, slot int) string {
	ranges, err := c.ClusterSlots(ctx).Result()
	require.NoError(t, err)
	for _, r := range ranges {
		if int(r.Start) <= slot && slot <= int(r.End) && len(r.Nodes) > 0 {
			return r.Nodes[0].ID
		}
	}
	return ""
}

func myself(t *testing.T, c *redis.Client) string { return nodeLine(t, c, "myself") }

func nodeLine(t *testing.T, c *redis.Client, sub string) string {
	text, err := c.ClusterNodes(ctx).Result()
	require.NoError(t, err)
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

// TestSetSlotOnReplica: a primary's SETSLOT reaches its replica through
// replication before the primary replies (Valkey 8); a READONLY client
// reading from the replica is then redirected for a migrating slot as the
// primary would redirect it.
func TestSetSlotOnReplica(t *testing.T) {
	t.Parallel()
	primary, replica, other := primaryReplicaOther(t)
	oc := other.Client(t, 2)
	otherID := oc.ClusterMyID(ctx).Val()

	pc, rc := primary.Client(t, 2), replica.Client(t, 2)
	const slot = 77
	tag := "{" + tagIn(slot) + "}"
	conn := replica.Client(t, 2).Conn()
	defer conn.Close()
	require.NoError(t, conn.ReadOnly(ctx).Err())
	require.NoError(t, pc.Set(ctx, tag+"here", "v", 0).Err())
	nodetest.Eventually(t, 5*time.Second, func() bool { return conn.Exists(ctx, tag+"here").Val() == 1 },
		"key replicated")

	replicate := func(args ...any) {
		t.Helper()
		require.Equal(t, "OK", pc.Do(ctx, append([]any{"cluster", "setslot"}, args...)...).Val())
	}
	replicate(slot, "migrating", otherID)
	// The primary replies once its replica applied it: no waiting.
	line := myself(t, rc)
	assert.True(t, strings.HasSuffix(line, "["+strconv.Itoa(slot)+"->-"+otherID+"]"), line)

	assert.Equal(t, "v", conn.Get(ctx, tag+"here").Val(), "existing keys are served")
	assert.Equal(t, "ASK "+strconv.Itoa(slot)+" "+other.Addr, errText(conn.Get(ctx, tag+"gone").Err()))
	assert.Equal(t, "TRYAGAIN Multiple keys request during rehashing of slot",
		errText(conn.MGet(ctx, tag+"here", tag+"gone").Err()))
	assert.Equal(t, "MOVED "+strconv.Itoa(slot)+" "+primary.Addr, errText(rc.Get(ctx, tag+"gone").Err()),
		"without READONLY: the primary")

	replicate(slot, "stable", "timeout", 5000)
	line = myself(t, rc)
	assert.NotContains(t, line, "->-", line)
	assert.Equal(t, redis.Nil, conn.Get(ctx, tag+"gone").Err())

	// The primary imports a slot: its replica keeps the state but takes no
	// ASKING write (or read) for it.
	const in = 78
	replicate(in, "node", otherID)
	replicate(in, "importing", otherID)
	assert.True(t, strings.HasSuffix(myself(t, rc), "["+strconv.Itoa(in)+"-<-"+otherID+"]"), myself(t, rc))
	key := "{" + tagIn(in) + "}k"
	for _, c := range []*redis.Conn{conn, rc.Conn()} {
		pipe := c.Pipeline()
		pipe.Do(ctx, "asking")
		set := pipe.Set(ctx, key, "x", 0)
		_, _ = pipe.Exec(ctx)
		assert.Equal(t, "MOVED "+strconv.Itoa(in)+" "+other.Addr, errText(set.Err()))
		pipe = c.Pipeline()
		pipe.Do(ctx, "asking")
		get := pipe.Get(ctx, key)
		_, _ = pipe.Exec(ctx)
		assert.Equal(t, "MOVED "+strconv.Itoa(in)+" "+other.Addr, errText(get.Err()))
	}
}

// TestSetSlotNoReplicas: a replica that does not acknowledge in time makes
// SETSLOT fail with -NOREPLICAS, and the primary does not run it.
func TestSetSlotNoReplicas(t *testing.T) {
	t.Parallel()
	nodes := formCluster(t, 2)
	a, b := nodes[0], nodes[1]
	ca := a.Client(t, 2)
	idB := b.Client(t, 2).ClusterMyID(ctx).Val()
	// A replica that syncs but never acknowledges.
	conn, err := net.Dial("tcp", a.Addr)
	require.NoError(t, err)
	defer conn.Close()
	br := bufio.NewReader(conn)
	for _, cmd := range []string{"*3\r\n$8\r\nREPLCONF\r\n$4\r\ncapa\r\n$5\r\nslotd\r\n",
		"*3\r\n$5\r\nPSYNC\r\n$1\r\n?\r\n$2\r\n-1\r\n"} {
		_, err := conn.Write([]byte(cmd))
		require.NoError(t, err)
		_, err = br.ReadString('\n')
		require.NoError(t, err)
	}
	go func() { _, _ = io.Copy(io.Discard, br) }()
	nodetest.Eventually(t, 10*time.Second, func() bool {
		info := ca.Info(ctx, "replication").Val()
		return strings.Contains(info, "connected_slaves:1") && strings.Contains(info, "state=online")
	}, "fake replica online")

	err = ca.Do(ctx, "cluster", "setslot", 10, "migrating", idB, "timeout", 200).Err()
	assert.Equal(t, "NOREPLICAS Not enough good replicas to write.", errText(err))
	assert.NotContains(t, myself(t, ca), "->-", "not run on the primary")
	// Errors of the command itself come first, without waiting.
	assert.Equal(t, "ERR I'm not the owner of hash slot 16000",
		errText(ca.Do(ctx, "cluster", "setslot", 16000, "migrating", idB).Err()))
}

// TestSetSlotSurvivesFailover: the replica of a migration's source had the
// MIGRATING state replicated; promoted by a manual failover it carries the
// migration on, redirecting missing keys with ASK to the target.
func TestSetSlotSurvivesFailover(t *testing.T) {
	t.Parallel()
	primary, replica, other := primaryReplicaOther(t)
	oc := other.Client(t, 2)
	otherID := oc.ClusterMyID(ctx).Val()
	pc, rc := primary.Client(t, 2), replica.Client(t, 2)
	newID := rc.ClusterMyID(ctx).Val()

	const slot = 91
	s := strconv.Itoa(slot)
	tag := "{" + tagIn(slot) + "}"
	require.NoError(t, pc.Set(ctx, tag+"here", "v", 0).Err())
	require.Equal(t, "OK", pc.Do(ctx, "cluster", "setslot", slot, "migrating", otherID).Val())
	require.Equal(t, "OK", oc.Do(ctx, "cluster", "setslot", slot, "importing", pc.ClusterMyID(ctx).Val()).Val())

	require.NoError(t, rc.Do(ctx, "cluster", "failover").Err())
	nodetest.Eventually(t, 20*time.Second, func() bool {
		return role(rc) == "master" && strings.Contains(pc.ClusterNodes(ctx).Val(), "myself,slave "+newID)
	}, "replica promoted")
	assert.True(t, strings.HasSuffix(myself(t, rc), "["+s+"->-"+otherID+"]"), myself(t, rc))
	assert.Equal(t, "v", rc.Get(ctx, tag+"here").Val())
	assert.Equal(t, "ASK "+s+" "+other.Addr, errText(rc.Get(ctx, tag+"gone").Err()))
	// The target re-pairs its import with the new primary (Valkey 8).
	nodetest.Eventually(t, 10*time.Second, func() bool {
		return strings.HasSuffix(myself(t, oc), "["+s+"-<-"+newID+"]")
	}, "target imports from the new primary: "+myself(t, oc))
}

// primaryReplicaOther is primaryWithReplica plus an empty primary (a
// migration target).
func primaryReplicaOther(t *testing.T) (primary, replica, other *nodetest.Node) {
	t.Helper()
	primary, replica = primaryWithReplica(t)
	other = startCluster(t)
	require.Equal(t, "OK", other.Client(t, 2).ClusterMeet(ctx, "127.0.0.1", strconv.Itoa(primary.Port)).Val())
	waitOK(t, primary, replica, other)
	return primary, replica, other
}
