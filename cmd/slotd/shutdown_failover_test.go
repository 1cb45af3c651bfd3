package main

import (
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Failover on shutdown (Valkey 9's shutdown-on-sigterm failover and
// SHUTDOWN FAILOVER) with real processes under a go-redis write load: the
// primary hands its slots to its replica before it exits, so no automatic
// failover (cluster-node-timeout 15 s here) is needed and no acknowledged
// write is lost; SHUTDOWN ABORT cancels a shutdown waiting for a lagging
// replica.

// procAt is the process listening at addr.
func procAt(t *testing.T, procs []*proc, addr string) *proc {
	t.Helper()
	for _, p := range procs {
		if p.addr() == addr {
			return p
		}
	}
	t.Fatalf("no process at %s", addr)
	return nil
}

// exited waits until p has exited.
func exited(t *testing.T, p *proc, d time.Duration) {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(d):
		t.Fatalf("%s did not exit within %v:\n%s", p.addr(), d, p.output())
	}
}

func TestShutdownFailover(t *testing.T) {
	needTools(t, "redis-cli")
	t.Parallel()
	procs, addrs := createKind(t, "slotd", 3, "--cluster-node-timeout", "15000", "--shutdown-on-sigterm", "failover",
		"--enable-debug-command", "local")
	waitAgreement(t, procs)
	seed := clientFor(addrs[0])
	defer seed.Close()
	tp := readTopology(t, seed)
	ids := make([]string, 0, len(tp.primaries))
	for id := range tp.primaries {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	wl := startWriters(t, addrs, tp, 2)
	began := time.Now()

	// SIGTERM: shutdown-on-sigterm failover.
	a := procAt(t, procs, tp.primaries[ids[0]])
	ra := tp.replicas[ids[0]][0]
	require.NoError(t, a.cmd.Process.Signal(syscall.SIGTERM))
	exited(t, a, 20*time.Second)
	t.Logf("A exited at +%v", time.Since(began).Round(time.Millisecond))
	assert.Contains(t, a.output(), "Failover on shutdown done")
	rc := clientFor(ra)
	defer rc.Close()
	eventually(t, 5*time.Second, func() bool { return role(rc) == "master" }, "the replica took over at the SIGTERM")

	// SHUTDOWN FAILOVER.
	b := procAt(t, procs, tp.primaries[ids[1]])
	bc := clientFor(b.addr())
	err := bc.Do(bg, "shutdown", "nosave", "failover").Err()
	_ = bc.Close()
	require.Error(t, err, "SHUTDOWN replies nothing: the connection closes")
	exited(t, b, 20*time.Second)
	t.Logf("B exited at +%v", time.Since(began).Round(time.Millisecond))
	assert.Contains(t, b.output(), "Failover on shutdown done")
	rb := clientFor(tp.replicas[ids[1]][0])
	defer rb.Close()
	eventually(t, 5*time.Second, func() bool { return role(rb) == "master" }, "the replica took over at SHUTDOWN FAILOVER")

	time.Sleep(200 * time.Millisecond) // writes flow on both new primaries
	res := wl.finish(t, "", began, time.Now())
	assert.Zero(t, res.lost, "acknowledged writes lost")
	t.Logf("two shutdowns with failover: %d acknowledged, %d lost, longest client pause %v %v", res.acked, res.lost,
		res.blockedAll.Round(time.Millisecond), res.long)

	// The node SIGTERM'd comes back as a replica of its former replica.
	a = a.restart()
	ac := a.client(2)
	defer ac.Close()
	raID := myselfLine(t, rc)[0]
	eventually(t, 20*time.Second, func() bool {
		f := myselfLine(t, ac)
		return strings.Contains(f[2], "slave") && f[3] == raID && infoMap(ac, "replication")["master_link_status"] == "up"
	}, "the restarted node follows its former replica")
}

// SHUTDOWN in standalone mode: FAILOVER needs cluster mode; a shutdown
// waiting for a lagging replica pauses writes and SHUTDOWN ABORT cancels
// it (writes resume, the SHUTDOWN caller gets an error).
func TestShutdownAbort(t *testing.T) {
	t.Parallel()
	pp, rp := freePorts(t, 1), freePorts(t, 1)
	p := launch(t, slotdBinary(t), pp, t.TempDir(), []string{"--port", strconv.Itoa(pp), "--bind", "127.0.0.1", "--save", "",
		"--shutdown-timeout", "10", "--loglevel", "notice"})
	r := launch(t, slotdBinary(t), rp, t.TempDir(), []string{"--port", strconv.Itoa(rp), "--bind", "127.0.0.1", "--save", "",
		"--replicaof", "127.0.0.1", strconv.Itoa(pp), "--loglevel", "warning"})
	pc := p.client(2)
	defer pc.Close()
	rc := r.client(2)
	defer rc.Close()
	assert.EqualError(t, pc.Do(bg, "shutdown", "failover").Err(), "ERR FAILOVER option is only supported in cluster mode")
	assert.EqualError(t, pc.Do(bg, "shutdown", "abort").Err(), "ERR No shutdown in progress.")
	assert.EqualError(t, pc.Do(bg, "shutdown", "abort", "now").Err(), "ERR syntax error")
	eventually(t, 10*time.Second, func() bool { return infoMap(rc, "replication")["master_link_status"] == "up" },
		"replica in sync")

	// The replica stops acknowledging; the primary has a write it lacks.
	require.NoError(t, r.cmd.Process.Signal(syscall.SIGSTOP))
	defer func() { _ = r.cmd.Process.Signal(syscall.SIGCONT) }()
	require.NoError(t, pc.Set(bg, "k", "v", 0).Err())
	// Two SHUTDOWNs: both wait on the same sequence (blocked clients).
	shut := make(chan error, 2)
	for i := 0; i < 2; i++ {
		sc := redis.NewClient(&redis.Options{Addr: p.addr(), ReadTimeout: 20 * time.Second, MaxRetries: -1})
		defer sc.Close()
		go func() { shut <- sc.Do(bg, "shutdown").Err() }()
	}
	eventually(t, 5*time.Second, func() bool { return strings.Contains(p.output(), "Waiting for replicas before shutting down") },
		"the shutdown waits for the replica")
	eventually(t, 5*time.Second, func() bool { return infoMap(pc, "clients")["blocked_clients"] == "2" },
		"both SHUTDOWN callers blocked")
	ms, err := strconv.Atoi(infoMap(pc, "server")["shutdown_in_milliseconds"])
	require.NoError(t, err, "INFO server shutdown_in_milliseconds")
	assert.Greater(t, ms, 0)
	// Writes are paused meanwhile.
	wc := redis.NewClient(&redis.Options{Addr: p.addr(), ReadTimeout: 300 * time.Millisecond, MaxRetries: -1})
	defer wc.Close()
	assert.Error(t, wc.Set(bg, "during", "x", 0).Err(), "a write during the wait is held")
	require.NoError(t, pc.Do(bg, "shutdown", "abort").Err())
	for i := 0; i < 2; i++ {
		select {
		case err := <-shut:
			assert.EqualError(t, err, "ERR Errors trying to SHUTDOWN. Check logs.")
		case <-time.After(5 * time.Second):
			t.Fatal("an aborted SHUTDOWN got no reply")
		}
	}
	require.NoError(t, pc.Set(bg, "after", "x", 0).Err(), "writes resume")
	assert.Contains(t, p.output(), "Shutdown manually aborted.")
}
