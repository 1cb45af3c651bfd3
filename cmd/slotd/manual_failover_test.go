package main

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Manual failover (CLUSTER FAILOVER) under a write load in a 3+3 cluster:
// how long the writers of the failed-over shard are blocked, how long the
// hand-off takes, and that no acknowledged write is lost.
// SLOTD_FAILOVER_RUNS=N repeats it N times; SLOTD_FAILOVER_REDIS=1 measures
// Debian's redis-server the same way in the same run, alternating. The
// figures are reported, never asserted (a loaded machine is no place for
// timing assertions); a lost write always fails. SLOTD_FAILOVER_LOG=1 adds
// when CLUSTER FAILOVER went out and the servers' logs.

// mfRun is one manual failover measurement.
type mfRun struct {
	done    time.Duration // CLUSTER FAILOVER sent → the replica reports role master
	load    loadResult
	logTail string
}

func measureManualFailover(t *testing.T, kind string) mfRun {
	t.Helper()
	procs, addrs := createKind(t, kind, 3, append([]string{"--cluster-node-timeout", "2000",
		"--enable-debug-command", "local"}, logArgs(kind)...)...)
	waitAgreement(t, procs)
	seed := clientFor(addrs[0])
	defer seed.Close()
	tp := readTopology(t, seed)
	ids := make([]string, 0, len(tp.primaries))
	for id := range tp.primaries {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	pid := ids[0]
	require.NotEmpty(t, tp.replicas[pid])
	raddr := tp.replicas[pid][0]
	rc, pc := clientFor(raddr), clientFor(tp.primaries[pid])
	defer rc.Close()
	defer pc.Close()
	rid := myselfLine(t, rc)[0]

	wl := startWriters(t, addrs, tp, 3)
	time.Sleep(300 * time.Millisecond) // load established: the baseline window
	began := time.Now()
	if os.Getenv("SLOTD_FAILOVER_LOG") == "1" {
		t.Logf("CLUSTER FAILOVER sent at %s", began.Format("15:04:05.000"))
	}
	require.NoError(t, rc.Do(bg, "cluster", "failover").Err())
	logs := func() string {
		var b strings.Builder
		for _, p := range procs {
			fmt.Fprintf(&b, "--- %s\n%s", p.addr(), p.output())
		}
		return b.String()
	}
	for role(rc) != "master" {
		if time.Since(began) > 10*time.Second {
			t.Fatalf("%s: the replica was not promoted within 10 s\n%s", kind, logs())
		}
		time.Sleep(time.Millisecond)
	}
	var r mfRun
	r.done = time.Since(began)
	eventually(t, 10*time.Second, func() bool {
		f := myselfLine(t, pc)
		return strings.Contains(f[2], "slave") && f[3] == rid
	}, "the old primary follows the new one")
	time.Sleep(300 * time.Millisecond) // writes resumed everywhere
	r.load = wl.finish(t, pid, began, time.Now())
	// Every write the new primary took reached its replica, the old
	// primary.
	eventually(t, 10*time.Second, func() bool {
		a, err1 := rc.Do(bg, "debug", "digest").Text()
		b, err2 := pc.Do(bg, "debug", "digest").Text()
		return err1 == nil && err2 == nil && a == b
	}, "the old primary's digest equals the new primary's")
	r.logTail = logs()
	return r
}

// logArgs are the extra arguments of a measurement's servers: with
// SLOTD_FAILOVER_LOG=1 slotd logs at verbose level (replication and
// client events, with their ms timestamps, to read beside the writers'
// pauses).
func logArgs(kind string) []string {
	if kind == "slotd" && os.Getenv("SLOTD_FAILOVER_LOG") == "1" {
		return []string{"--loglevel", "verbose"}
	}
	return nil
}

func TestManualFailoverUnderLoad(t *testing.T) {
	needTools(t, "redis-cli")
	runs := 1
	if v, err := strconv.Atoi(os.Getenv("SLOTD_FAILOVER_RUNS")); err == nil && v > 0 {
		runs = v
	}
	kinds := []string{"slotd"}
	if os.Getenv("SLOTD_FAILOVER_REDIS") == "1" {
		needTools(t, "redis-server")
		kinds = append(kinds, "redis")
	}
	if runs == 1 && len(kinds) == 1 {
		t.Parallel()
	}
	done := map[string][]time.Duration{}
	blocked := map[string][]time.Duration{}
	for i := 0; i < runs; i++ {
		for _, kind := range kinds {
			t.Run(fmt.Sprintf("%s-%d", kind, i), func(t *testing.T) {
				r := measureManualFailover(t, kind)
				t.Logf("%s: promoted after %v; writers of the shard blocked %v (all writers %v, baseline %v); "+
					"%d acknowledged, %d lost, %d errors %s; pauses over 50 ms: %v", kind, r.done.Round(time.Millisecond),
					r.load.blocked.Round(time.Millisecond), r.load.blockedAll.Round(time.Millisecond),
					r.load.baseline.Round(time.Millisecond), r.load.acked, r.load.lost, r.load.errs, r.load.firstErr,
					r.load.long)
				if os.Getenv("SLOTD_FAILOVER_LOG") == "1" {
					t.Log(r.logTail)
				}
				assert.Zero(t, r.load.lost, "acknowledged writes lost")
				done[kind] = append(done[kind], r.done)
				blocked[kind] = append(blocked[kind], r.load.blocked)
			})
		}
	}
	for _, kind := range kinds {
		t.Logf("%s over %d runs: clients blocked %s; promoted after %s", kind, len(blocked[kind]),
			durStats(blocked[kind]), durStats(done[kind]))
	}
}
