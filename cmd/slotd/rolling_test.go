package main

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRollingRestart restarts every primary of a 3+3 cluster in turn, by
// SIGTERM, under go-redis writers on every shard, and measures the
// longest pause of a writer and the acknowledged writes lost. slotd runs
// with shutdown-on-sigterm failover (each primary hands its slots to its
// replica before it exits); Debian's redis-server 7.0.15 has no such
// option, so its slots wait for an automatic failover (cluster-node-timeout
// 2000). Measurement only, off by default: SLOTD_ROLLING_RUNS=N runs it N
// times, SLOTD_FAILOVER_REDIS=1 alternates with redis-server;
// SLOTD_FAILOVER_LOG=1 adds when each SIGTERM went out and the servers' logs.
func TestRollingRestart(t *testing.T) {
	needTools(t, "redis-cli")
	runs, _ := strconv.Atoi(os.Getenv("SLOTD_ROLLING_RUNS"))
	if runs <= 0 {
		t.Skip("measurement: set SLOTD_ROLLING_RUNS=N (and SLOTD_FAILOVER_REDIS=1 for redis-server beside it)")
	}
	kinds := []string{"slotd"}
	if os.Getenv("SLOTD_FAILOVER_REDIS") == "1" {
		needTools(t, "redis-server")
		kinds = append(kinds, "redis")
	}
	gaps := map[string][]time.Duration{}
	lost := map[string]int{}
	for i := 0; i < runs; i++ {
		for _, kind := range kinds {
			t.Run(fmt.Sprintf("%s-%d", kind, i), func(t *testing.T) {
				r := rollingRestart(t, kind)
				t.Logf("%s: rolling restart of 3 primaries: longest writer pause %v; %d acknowledged, %d lost, %d errors %s; pauses over 50 ms: %v",
					kind, r.blockedAll.Round(time.Millisecond), r.acked, r.lost, r.errs, r.firstErr, r.long)
				gaps[kind] = append(gaps[kind], r.blockedAll)
				lost[kind] += r.lost
				if kind == "slotd" {
					assert.Zero(t, r.lost, "acknowledged writes lost")
				}
			})
		}
	}
	for _, kind := range kinds {
		t.Logf("%s over %d rolling restarts: longest writer pause %s; %d acknowledged writes lost in all", kind,
			len(gaps[kind]), durStats(gaps[kind]), lost[kind])
	}
}

// rollingRestart is one rolling restart of every primary; it returns what
// the writers saw over the whole of it.
func rollingRestart(t *testing.T, kind string) loadResult {
	t.Helper()
	extra := append([]string{"--cluster-node-timeout", "2000", "--enable-debug-command", "local"}, logArgs(kind)...)
	if kind == "slotd" {
		extra = append(extra, "--shutdown-on-sigterm", "failover")
	}
	procs, addrs := createKind(t, kind, 3, extra...)
	waitAgreement(t, procs)
	seed := clientFor(addrs[0])
	defer seed.Close()
	tp := readTopology(t, seed)
	ids := make([]string, 0, len(tp.primaries))
	for id := range tp.primaries {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	wl := startWriters(t, addrs, tp, 3)
	time.Sleep(300 * time.Millisecond)
	began := time.Now()
	for _, id := range ids {
		p := procAt(t, procs, tp.primaries[id])
		if os.Getenv("SLOTD_FAILOVER_LOG") == "1" {
			t.Logf("SIGTERM to %s at %s", p.addr(), time.Now().Format("15:04:05.000"))
		}
		require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
		exited(t, p, 30*time.Second)
		// Its replica serves the slots (at once with a hand-off; after the
		// failure detection without) before it comes back: a node restarted
		// sooner, with no persistence, would bring its slots back empty.
		rc := clientFor(tp.replicas[id][0])
		eventually(t, 30*time.Second, func() bool { return role(rc) == "master" }, kind+": the replica took over")
		_ = rc.Close()
		np := p.restart()
		for i := range procs {
			if procs[i] == p {
				procs[i] = np
			}
		}
		// Back as a replica in sync, and every node sees every slot served.
		c := np.client(2)
		eventually(t, 60*time.Second, func() bool {
			f := myselfLine(t, c)
			return strings.Contains(f[2], "slave") && infoMap(c, "replication")["master_link_status"] == "up"
		}, kind+": the restarted node is a replica in sync")
		_ = c.Close()
		waitClusterOK(t, 30*time.Second, procs...)
	}
	time.Sleep(300 * time.Millisecond)
	res := wl.finish(t, "", began, time.Now())
	if os.Getenv("SLOTD_FAILOVER_LOG") == "1" {
		for _, p := range procs {
			t.Logf("--- %s\n%s", p.addr(), p.output())
		}
	}
	// Every replica ends equal to its primary.
	tp = readTopology(t, seed)
	for id, paddr := range tp.primaries {
		pc := clientFor(paddr)
		for _, raddr := range tp.replicas[id] {
			rc := clientFor(raddr)
			eventually(t, 20*time.Second, func() bool {
				a, err1 := pc.Do(bg, "debug", "digest").Text()
				b, err2 := rc.Do(bg, "debug", "digest").Text()
				return err1 == nil && err2 == nil && a == b
			}, kind+": replica "+raddr+" equals its primary")
			_ = rc.Close()
		}
		_ = pc.Close()
	}
	return res
}
