package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTraceFailoverTimeline kills a primary of a 3+3 cluster traced with
// trace-actors cluster, restarts it once its replica took over, and reads
// `slotd trace --cluster`: one timeline over all nodes with, in causal
// order, the PFAIL and FAIL of the killed primary, its replica's
// FAILOVER_AUTH_REQUEST, a majority of FAILOVER_AUTH_ACKs received by the
// replica, its promotion and the first UPDATE (sent to the old primary when
// it comes back). --format chrome writes trace-event JSON naming every node.
func TestTraceFailoverTimeline(t *testing.T) {
	needTools(t, "redis-cli")
	procs, addrs := createWithReplicas(t, 3, "--trace-actors", "cluster", "--trace-ring-size", "50000",
		"--enable-debug-command", "yes")
	cli := clientFor(addrs[0])
	defer cli.Close()
	tp := readTopology(t, cli)
	var victimID, replicaAddr string
	for id := range tp.primaries {
		if len(tp.replicas[id]) > 0 {
			victimID, replicaAddr = id, tp.replicas[id][0]
			break
		}
	}
	require.NotEmpty(t, victimID)
	var victim *proc
	var victimAt int
	for i, p := range procs {
		if p.addr() == tp.addrOf[victimID] {
			victim, victimAt = p, i
		}
	}
	require.NotNil(t, victim)
	replicaID := ""
	for id, a := range tp.addrOf {
		if a == replicaAddr {
			replicaID = id
		}
	}
	victim.kill()
	rc := clientFor(replicaAddr)
	defer rc.Close()
	eventually(t, 60*time.Second, func() bool {
		info, err := rc.Info(bg, "replication").Result()
		return err == nil && strings.Contains(info, "role:master")
	}, "the replica of the killed primary takes over")
	procs[victimAt] = victim.restart()
	vc := clientFor(victim.addr())
	defer vc.Close()
	eventually(t, 60*time.Second, func() bool {
		info, err := vc.Info(bg, "replication").Result()
		return err == nil && strings.Contains(info, "role:slave")
	}, "the old primary comes back as a replica (UPDATE)")

	var out, errb bytes.Buffer
	require.Equal(t, 0, runTrace([]string{"--cluster", replicaAddr, "--since", "5m"}, &out, &errb), errb.String())
	lines := strings.Split(out.String(), "\n")
	v8, r8 := victimID[:8], replicaID[:8]
	find := func(from int, what string, match func(string) bool) int {
		t.Helper()
		for i := from; i < len(lines); i++ {
			if match(lines[i]) {
				return i
			}
		}
		t.Fatalf("no %s after line %d in the timeline:\n%s", what, from, out.String())
		return -1
	}
	pfail := find(0, "PFAIL", func(l string) bool { return strings.Contains(l, "event PFAIL "+v8) })
	fail := find(pfail, "FAIL", func(l string) bool { return strings.Contains(l, "event FAIL "+v8) })
	req := find(fail, "FAILOVER_AUTH_REQUEST", func(l string) bool {
		return strings.Contains(l, "send FAILOVER_AUTH_REQUEST from "+r8)
	})
	// The replica's node label starts with its address.
	onReplica := func(l string) bool { return strings.Contains(l, " "+replicaAddr+" ") }
	acks, ackAt := map[string]bool{}, req
	for len(acks) < 2 {
		ackAt = find(ackAt+1, "majority of FAILOVER_AUTH_ACKs", func(l string) bool {
			return onReplica(l) && strings.Contains(l, "recv FAILOVER_AUTH_ACK from ")
		})
		f := strings.Fields(lines[ackAt][strings.Index(lines[ackAt], "recv FAILOVER_AUTH_ACK from "):])
		acks[f[3]] = true
	}
	promo := find(ackAt, "promotion", func(l string) bool {
		return onReplica(l) && strings.Contains(l, "event PROMOTED myself to primary")
	})
	update := find(0, "UPDATE", func(l string) bool { return strings.Contains(l, " UPDATE from ") })
	assert.Less(t, promo, update, "the first UPDATE comes after the promotion:\n%s", out.String())
	t.Logf("timeline lines: PFAIL %d, FAIL %d, AUTH_REQUEST %d, second AUTH_ACK %d, promotion %d, first UPDATE %d",
		pfail, fail, req, ackAt, promo, update)

	out.Reset()
	require.Equal(t, 0, runTrace([]string{"--cluster", replicaAddr, "--format", "chrome"}, &out, &errb), errb.String())
	var doc struct {
		TraceEvents []struct {
			Name string          `json:"name"`
			Ph   string          `json:"ph"`
			Ts   *float64        `json:"ts"`
			Pid  *int            `json:"pid"`
			Tid  *int            `json:"tid"`
			Dur  float64         `json:"dur"`
			Args json.RawMessage `json:"args"`
		} `json:"traceEvents"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &doc))
	named := map[string]bool{}
	complete := 0
	for _, e := range doc.TraceEvents {
		require.NotEmpty(t, e.Name)
		require.NotNil(t, e.Pid)
		require.NotNil(t, e.Tid)
		require.NotNil(t, e.Ts)
		switch e.Ph {
		case "M":
			if e.Name == "process_name" {
				var a struct{ Name string }
				require.NoError(t, json.Unmarshal(e.Args, &a))
				named[a.Name] = true
			}
		case "X":
			complete++
			assert.Positive(t, e.Dur)
		default:
			t.Fatalf("unexpected phase %q", e.Ph)
		}
	}
	assert.Positive(t, complete)
	for id, addr := range tp.addrOf {
		found := false
		for n := range named {
			if strings.HasPrefix(n, addr+" "+id[:8]) {
				found = true
			}
		}
		assert.True(t, found, "a process named for node %s (%s) in %v", id, addr, named)
	}
}
