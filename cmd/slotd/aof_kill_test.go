package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// kill -9 under a write load with appendfsync always: after a restart,
// every acknowledged write is there, and the cluster node keeps its
// nodes.conf identity and slots.
func TestAOFKill9KeepsAcknowledgedWrites(t *testing.T) {
	ctx := context.Background()
	port := freePorts(t, 1)
	dir := t.TempDir()
	aofArgs := []string{"--appendonly", "yes", "--appendfsync", "always"}
	p := startProc(t, port, dir, aofArgs...)
	admin := p.client(2)
	defer admin.Close()
	require.NoError(t, admin.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", "0", "16383").Err())
	eventually(t, 10*time.Second, func() bool { return clusterInfo(admin)["cluster_state"] == "ok" }, "cluster ok")
	id := admin.Do(ctx, "CLUSTER", "MYID").Val()

	const workers = 6
	acked := make([][]string, workers)
	incrs := make([]int64, workers)
	var stop atomic.Bool
	var progress atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := redis.NewClient(&redis.Options{Addr: p.addr(), MaxRetries: -1, ReadTimeout: 2 * time.Second})
			defer c.Close()
			for i := 0; !stop.Load(); i++ {
				k := "w" + strconv.Itoa(w) + ":" + strconv.Itoa(i)
				if c.Set(ctx, k, i, 0).Err() != nil {
					return
				}
				acked[w] = append(acked[w], k)
				progress.Add(1)
				if c.Incr(ctx, "ctr{"+strconv.Itoa(w)+"}").Err() != nil {
					return
				}
				incrs[w]++
			}
		}()
	}
	eventually(t, 10*time.Second, func() bool { return progress.Load() > 2000 }, "write load runs")
	// Kill while writes are in flight: after some more acknowledged ones.
	mark := progress.Load()
	eventually(t, 10*time.Second, func() bool { return progress.Load() > mark+2000 }, "write load keeps running")
	p.kill()
	stop.Store(true)
	wg.Wait()

	p2 := startProc(t, port, dir, aofArgs...)
	c := p2.client(2)
	defer c.Close()
	eventually(t, 10*time.Second, func() bool { return clusterInfo(c)["cluster_state"] == "ok" }, "cluster ok after restart")
	assert.Equal(t, id, c.Do(ctx, "CLUSTER", "MYID").Val(), "nodes.conf identity kept")
	total, missing := 0, 0
	for w := range acked {
		for i, k := range acked[w] {
			total++
			if v, err := c.Get(ctx, k).Result(); err != nil || v != strconv.Itoa(i) {
				missing++
			}
		}
		n, err := c.Get(ctx, "ctr{"+strconv.Itoa(w)+"}").Int64()
		require.NoError(t, err)
		// The INCR in flight at the kill may have been applied unacknowledged.
		assert.GreaterOrEqual(t, n, incrs[w])
		assert.LessOrEqual(t, n, incrs[w]+1)
	}
	assert.Zero(t, missing, "acknowledged SETs lost out of %d", total)
	t.Logf("%d acknowledged SETs checked", total)
	files, _ := filepath.Glob(filepath.Join(dir, "appendonlydir", "*"))
	assert.NotEmpty(t, files)
}

// A corrupt command in the middle of an AOF file stops start-up with a
// non-zero exit and a message naming the file and the offset.
func TestAOFCorruptMiddleStopsStartup(t *testing.T) {
	dir := t.TempDir()
	aofDir := filepath.Join(dir, "appendonlydir")
	require.NoError(t, os.MkdirAll(aofDir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(aofDir, "appendonly.aof.manifest"),
		[]byte("file appendonly.aof.1.s0.incr.aof seq 1 type i shard 0\n"), 0o644))
	set := "*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n"
	require.NoError(t, os.WriteFile(filepath.Join(aofDir, "appendonly.aof.1.s0.incr.aof"),
		[]byte(set+"GARBAGE\r\n"+set), 0o644))
	out, err := run(t, 20*time.Second, slotdBinary(t), "--port", "0", "--bind", "127.0.0.1", "--dir", dir,
		"--save", "", "--appendonly", "yes")
	require.Error(t, err, out)
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.NotZero(t, exit.ExitCode())
	assert.Contains(t, out, "appendonly.aof.1.s0.incr.aof at offset "+strconv.Itoa(len(set)))
}

// SIGTERM with appendonly yes: the AOF is flushed and closed, and a
// restart (still in cluster mode) has every write.
func TestAOFSigtermRestart(t *testing.T) {
	ctx := context.Background()
	port := freePorts(t, 1)
	dir := t.TempDir()
	p := startProc(t, port, dir, "--appendonly", "yes", "--loglevel", "notice")
	c := p.client(2)
	defer c.Close()
	require.NoError(t, c.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", "0", "16383").Err())
	eventually(t, 10*time.Second, func() bool { return clusterInfo(c)["cluster_state"] == "ok" }, "cluster ok")
	for i := 0; i < 100; i++ {
		require.NoError(t, c.RPush(ctx, "list", i).Err())
	}
	p.stop()
	assert.Contains(t, p.output(), "Calling fsync() on the AOF file.")
	p2 := startProc(t, port, dir, "--appendonly", "yes")
	c2 := p2.client(2)
	defer c2.Close()
	eventually(t, 10*time.Second, func() bool { return clusterInfo(c2)["cluster_state"] == "ok" }, "cluster ok")
	assert.Equal(t, int64(100), c2.LLen(ctx, "list").Val())
	assert.Equal(t, "99", c2.LIndex(ctx, "list", -1).Val())
}
