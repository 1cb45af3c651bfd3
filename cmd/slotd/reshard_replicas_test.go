package main

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A migration whose source primary dies half-way (Valkey 8 behaviour): its
// replica had the MIGRATING state replicated by SETSLOT, takes over and
// carries the migration on; the target re-pairs its import with it; no key
// is lost and the migration finishes as redis-cli would finish it. Then
// redis-cli reshards between primaries that have replicas.

// rsNode is one process of the cluster and what CLUSTER NODES says of it.
type rsNode struct {
	p      *proc
	id     string
	master string // the primary's id for a replica, "" for a primary
	slots  []string
}

func rsTopology(t *testing.T, procs []*proc) []*rsNode {
	t.Helper()
	var out []*rsNode
	for _, p := range procs {
		cli := p.client(2)
		line := myselfLine(t, cli)
		_ = cli.Close()
		n := &rsNode{p: p, id: line[0], slots: line[8:]}
		if strings.Contains(line[2], "slave") {
			n.master = line[3]
		}
		out = append(out, n)
	}
	return out
}

func TestMigrationSurvivesSourceFailover(t *testing.T) {
	needTools(t, "redis-cli")
	t.Parallel()
	base := freePorts(t, 6)
	var procs []*proc
	var addrs []string
	for i := 0; i < 6; i++ {
		p := startProc(t, base+i, t.TempDir(), "--enable-debug-command", "yes")
		procs = append(procs, p)
		addrs = append(addrs, p.addr())
	}
	out, err := run(t, 60*time.Second, "redis-cli", append(append([]string{"--cluster", "create"}, addrs...),
		"--cluster-replicas", "1", "--cluster-yes")...)
	require.NoError(t, err, out)
	waitClusterOK(t, 30*time.Second, procs...)

	var src, dst, other, rep *rsNode
	nodes := rsTopology(t, procs)
	for _, n := range nodes {
		if n.master != "" {
			continue
		}
		switch {
		case src == nil:
			src = n
		case dst == nil:
			dst = n
		default:
			other = n
		}
	}
	for _, n := range nodes {
		if n.master == src.id {
			rep = n
		}
	}
	require.NotNil(t, rep, "src has a replica")
	sc, dc, rc := src.p.client(2), dst.p.client(2), rep.p.client(2)
	defer sc.Close()
	defer dc.Close()
	defer rc.Close()
	eventually(t, 20*time.Second, func() bool {
		info := sc.Info(bg, "replication").Val()
		return strings.Contains(info, "connected_slaves:1") && strings.Contains(info, "state=online")
	}, "source's replica online")

	lo, _, _ := strings.Cut(src.slots[0], "-")
	slot, err := strconv.Atoi(lo)
	require.NoError(t, err)
	s := strconv.Itoa(slot)
	tag := "{" + tagFor(slot) + "}"
	const nKeys = 40
	for i := 0; i < nKeys; i++ {
		require.NoError(t, sc.Set(bg, tag+strconv.Itoa(i), i, 0).Err())
	}
	require.Equal(t, "OK", dc.Do(bg, "cluster", "setslot", slot, "importing", src.id).Val())
	require.Equal(t, "OK", sc.Do(bg, "cluster", "setslot", slot, "migrating", dst.id).Val())
	// Acknowledged by the replica before the reply: it has it now.
	assert.Contains(t, myselfLine(t, rc), "["+s+"->-"+dst.id+"]")
	var half []any
	for i := 0; i < nKeys/2; i++ {
		half = append(half, tag+strconv.Itoa(i))
	}
	require.Equal(t, "OK", sc.Do(bg, append([]any{"migrate", "127.0.0.1", dst.p.port, "", 0, 5000, "keys"},
		half...)...).Val())
	// Replication is asynchronous: let the replica see the DELs of the
	// migrated keys before the source dies (what WAIT is for).
	require.Equal(t, int64(1), sc.Wait(bg, 1, 5*time.Second).Val())

	src.p.kill()
	eventually(t, 30*time.Second, func() bool {
		line := myselfLine(t, rc)
		return strings.Contains(line[2], "master") && len(line) > 8
	}, "the replica took over")
	assert.Contains(t, myselfLine(t, rc), "["+s+"->-"+dst.id+"]", "still migrating")
	eventually(t, 20*time.Second, func() bool {
		return strings.Contains(strings.Join(myselfLine(t, dc), " "), "["+s+"-<-"+rep.id+"]")
	}, "target imports from the new primary")

	// Every key still reads back through a cluster client (ASK for those
	// already moved).
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{dst.p.addr(), other.p.addr()},
		MaxRedirects: 16})
	defer cc.Close()
	eventually(t, 20*time.Second, func() bool {
		for i := 0; i < nKeys; i++ {
			if cc.Get(bg, tag+strconv.Itoa(i)).Val() != strconv.Itoa(i) {
				return false
			}
		}
		return true
	}, "every key readable during the migration")

	// Finish it as redis-cli does, from the new primary.
	keys, err := rc.ClusterGetKeysInSlot(bg, slot, 100).Result()
	require.NoError(t, err)
	assert.Len(t, keys, nKeys/2)
	rest := []any{"migrate", "127.0.0.1", dst.p.port, "", 0, 5000, "keys"}
	for _, k := range keys {
		rest = append(rest, k)
	}
	require.Equal(t, "OK", rc.Do(bg, rest...).Val())
	for _, c := range []*redis.Client{dc, rc, other.p.client(2)} {
		require.Equal(t, "OK", c.Do(bg, "cluster", "setslot", slot, "node", dst.id).Val())
	}
	assert.Equal(t, int64(nKeys), dc.ClusterCountKeysInSlot(bg, slot).Val())
	for i := 0; i < nKeys; i++ {
		assert.Equal(t, strconv.Itoa(i), cc.Get(bg, tag+strconv.Itoa(i)).Val())
	}

	// The old source comes back as a replica of whoever took its last
	// slot: the new primary, or the target when the UPDATE about the
	// migrated slot reaches it last (the spec's rule; Redis alike).
	back := startProc(t, src.p.port, src.p.dir, "--enable-debug-command", "yes")
	bc := back.client(2)
	defer bc.Close()
	var follows string
	eventually(t, 30*time.Second, func() bool {
		line := myselfLine(t, bc)
		if len(line) > 3 && (line[3] == rep.id || line[3] == dst.id) {
			follows = line[3]
			return true
		}
		return false
	}, "old source follows the new primary (or the target)")
	checkClean(t, dst.p.addr())

	// redis-cli moves slots between primaries that have replicas: every
	// SETSLOT waits for the replica's acknowledgement.
	fc := rc
	if follows == dst.id {
		fc = dc
	}
	eventually(t, 30*time.Second, func() bool {
		return strings.Contains(fc.Info(bg, "replication").Val(), "state=online")
	}, "the old source's new primary sees it online")
	out, err = run(t, 2*time.Minute, "redis-cli", "--cluster", "reshard", dst.p.addr(), "--cluster-from", dst.id,
		"--cluster-to", rep.id, "--cluster-slots", "100", "--cluster-yes")
	require.NoError(t, err, out)
	require.NotContains(t, out, "[ERR]", out)
	checkClean(t, dst.p.addr()) // replicas included: all agree
}
