package aof_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node"
	"github.com/slotd/slotd/cmd/node/nodetest"
	"github.com/slotd/slotd/netio/config"
)

var ctx = context.Background()

// info returns one field of INFO persistence.
func info(t *testing.T, c *redis.Client, name string) string {
	t.Helper()
	return nodetest.InfoField(t, c, "persistence", name)
}

// restart stops n and starts a node on the same dir (n.Dir is the dir
// of the first node of a test: later ones are given it).
func restart(t *testing.T, n *nodetest.Node, directives ...string) *nodetest.Node {
	n.Stop()
	n2 := nodetest.Start(t, append([]string{"dir", n.Dir}, directives...)...)
	n2.Dir = n.Dir
	return n2
}

func incrFiles(t *testing.T, dir string) []string {
	m, err := filepath.Glob(filepath.Join(dir, "appendonlydir", "*.incr.aof"))
	require.NoError(t, err)
	return m
}

func TestReplayAfterRestart(t *testing.T) {
	n := nodetest.Start(t, "appendonly", "yes", "shard-actors", "4")
	c := n.Client(t)
	require.NoError(t, c.Set(ctx, "s", "v", 0).Err())
	require.NoError(t, c.Incr(ctx, "n").Err())
	require.NoError(t, c.IncrBy(ctx, "n", 41).Err())
	require.NoError(t, c.RPush(ctx, "l", "a", "b", "c").Err())
	require.NoError(t, c.LPop(ctx, "l").Err())
	require.NoError(t, c.HSet(ctx, "h", "f", "1", "g", "2").Err())
	require.NoError(t, c.SAdd(ctx, "set", "x", "y", "z").Err())
	require.NoError(t, c.SPop(ctx, "set").Err()) // random pick, replayed as SREM
	require.NoError(t, c.ZAdd(ctx, "z", redis.Z{Score: 1.5, Member: "m"}).Err())
	require.NoError(t, c.Set(ctx, "ttl", "v", time.Hour).Err()) // relative TTL, replayed absolute
	require.NoError(t, c.Set(ctx, "gone", "v", 0).Err())
	require.NoError(t, c.Del(ctx, "gone").Err())
	pipe := c.TxPipeline()
	pipe.Set(ctx, "{t}a", "1", 0)
	pipe.Incr(ctx, "{t}a")
	_, err := pipe.Exec(ctx)
	require.NoError(t, err)
	members := c.SMembers(ctx, "set").Val()
	pttl := c.PExpireTime(ctx, "ttl").Val()
	assert.Equal(t, "1", info(t, c, "aof_enabled"))
	assert.Len(t, incrFiles(t, n.Dir), 4, "one incr file per shard")

	n2 := restart(t, n, "appendonly", "yes", "shard-actors", "4")
	c2 := n2.Client(t)
	assert.Equal(t, "v", c2.Get(ctx, "s").Val())
	assert.Equal(t, "42", c2.Get(ctx, "n").Val())
	assert.Equal(t, []string{"b", "c"}, c2.LRange(ctx, "l", 0, -1).Val())
	assert.Equal(t, map[string]string{"f": "1", "g": "2"}, c2.HGetAll(ctx, "h").Val())
	assert.ElementsMatch(t, members, c2.SMembers(ctx, "set").Val())
	assert.Equal(t, []redis.Z{{Score: 1.5, Member: "m"}}, c2.ZRangeWithScores(ctx, "z", 0, -1).Val())
	assert.Equal(t, pttl, c2.PExpireTime(ctx, "ttl").Val())
	assert.Equal(t, int64(0), c2.Exists(ctx, "gone").Val())
	assert.Equal(t, "2", c2.Get(ctx, "{t}a").Val())
	assert.Equal(t, "0", info(t, c2, "loading"))
}

func TestAOFWinsOverRDB(t *testing.T) {
	n := nodetest.Start(t)
	c := n.Client(t)
	require.NoError(t, c.Set(ctx, "rdb", "1", 0).Err())
	require.NoError(t, c.Save(ctx).Err())
	// Turning the AOF on at run time writes the dataset into it.
	require.NoError(t, c.ConfigSet(ctx, "appendonly", "yes").Err())
	nodetest.Eventually(t, 10*time.Second, func() bool {
		return info(t, c, "aof_rewrite_in_progress") == "0" && info(t, c, "aof_rewrites") == "1"
	}, "the rewrite that starts the AOF ends")
	require.NoError(t, c.Set(ctx, "aof", "2", 0).Err())
	n2 := restart(t, n, "appendonly", "yes")
	c2 := n2.Client(t)
	assert.Equal(t, []any{"1", "2"}, c2.MGet(ctx, "rdb", "aof").Val())

	// With appendonly yes, dump.rdb is not read (as in Redis).
	require.NoError(t, c2.Set(ctx, "late", "3", 0).Err())
	require.NoError(t, c2.Save(ctx).Err())
	require.NoError(t, c2.ConfigSet(ctx, "appendonly", "no").Err())
	require.NoError(t, os.RemoveAll(filepath.Join(n2.Dir, "appendonlydir")))
	n3 := restart(t, n2, "appendonly", "yes")
	assert.Equal(t, int64(0), n3.Client(t).DBSize(ctx).Val())
}

func TestTruncatedTailIsCut(t *testing.T) {
	n := nodetest.Start(t, "appendonly", "yes", "shard-actors", "1")
	c := n.Client(t)
	require.NoError(t, c.Set(ctx, "a", "1", 0).Err())
	require.NoError(t, c.Set(ctx, "b", "2", 0).Err())
	n.Stop()
	files := incrFiles(t, n.Dir)
	require.Len(t, files, 1)
	good, err := os.ReadFile(files[0])
	require.NoError(t, err)
	// A crash in the middle of a write, and a transaction without EXEC.
	for _, tail := range []string{"*3\r\n$3\r\nSET\r\n$1\r\nc\r\n$1", "*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$1\r\nd\r\n$1\r\n4\r\n"} {
		require.NoError(t, os.WriteFile(files[0], append(append([]byte(nil), good...), tail...), 0o644))
		n2 := nodetest.Start(t, "dir", n.Dir, "appendonly", "yes", "shard-actors", "1")
		c2 := n2.Client(t)
		assert.Equal(t, []any{"1", "2", nil, nil}, c2.MGet(ctx, "a", "b", "c", "d").Val())
		n2.Stop()
		after, err := os.ReadFile(files[0])
		require.NoError(t, err)
		assert.Equal(t, good, after, "the incomplete tail is truncated away")
	}
}

func startErr(t *testing.T, dir string, directives ...string) error {
	cfg := config.New()
	args := []string{"--port", strconv.Itoa(nodetest.FreePort(t)), "--bind", "127.0.0.1", "--dir", dir,
		"--loglevel", "nothing", "--save", ""}
	for i := 0; i+1 < len(directives); i += 2 {
		args = append(args, "--"+directives[i], directives[i+1])
	}
	require.NoError(t, cfg.LoadArgs(args))
	n, err := node.Start(cfg)
	if err == nil {
		n.Stop()
	}
	return err
}

func TestCorruptMiddleRefusesToStart(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t, "appendonly", "yes", "shard-actors", "1")
	c := n.Client(t)
	require.NoError(t, c.Set(ctx, "a", "1", 0).Err())
	require.NoError(t, c.Set(ctx, "b", "2", 0).Err())
	n.Stop()
	files := incrFiles(t, n.Dir)
	b, err := os.ReadFile(files[0])
	require.NoError(t, err)
	off := strings.Index(string(b), "*3\r\n$3\r\nset\r\n$1\r\nb")
	require.Greater(t, off, 0)
	b[off+1] = 'x'
	require.NoError(t, os.WriteFile(files[0], b, 0o644))
	err = startErr(t, n.Dir, "appendonly", "yes", "shard-actors", "1")
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Base(files[0]))
	assert.Contains(t, err.Error(), "offset "+strconv.Itoa(off))
}

func TestTruncatedTailRefusedWithoutAOFLoadTruncated(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t, "appendonly", "yes", "shard-actors", "1")
	require.NoError(t, n.Client(t).Set(ctx, "a", "1", 0).Err())
	n.Stop()
	files := incrFiles(t, n.Dir)
	b, err := os.ReadFile(files[0])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(files[0], b[:len(b)-3], 0o644))
	err = startErr(t, n.Dir, "appendonly", "yes", "shard-actors", "1", "aof-load-truncated", "no")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Unexpected end of file")
	assert.Contains(t, err.Error(), filepath.Base(files[0]))
}

func TestRewriteUnderLoadKeepsEveryWrite(t *testing.T) {
	n := nodetest.Start(t, "appendonly", "yes", "shard-actors", "4")
	c := n.Client(t)
	// Enough keys that the base takes several turns per shard.
	for i := 0; i < 20; i++ {
		pipe := c.Pipeline()
		for j := 0; j < 500; j++ {
			pipe.Set(ctx, "k"+strconv.Itoa(i*500+j), strings.Repeat("v", 64), 0)
		}
		_, err := pipe.Exec(ctx)
		require.NoError(t, err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	counts := make([]int, 4)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cw := n.Client(t)
			for {
				select {
				case <-stop:
					return
				default:
				}
				if cw.Incr(ctx, "ctr"+strconv.Itoa(w)).Err() == nil {
					counts[w]++
				}
				cw.RPush(ctx, "list"+strconv.Itoa(w), "x")
			}
		}()
	}
	for r := 0; r < 3; r++ {
		before := info(t, c, "aof_rewrites")
		require.NoError(t, c.BgRewriteAOF(ctx).Err())
		nodetest.Eventually(t, 20*time.Second, func() bool {
			return info(t, c, "aof_rewrite_in_progress") == "0" && info(t, c, "aof_rewrites") != before
		}, "rewrite ends")
	}
	close(stop)
	wg.Wait()
	assert.Equal(t, "ok", info(t, c, "aof_last_bgrewrite_status"))
	files := incrFiles(t, n.Dir)
	assert.Len(t, files, 4, "old incr files are deleted")

	n2 := restart(t, n, "appendonly", "yes", "shard-actors", "4")
	c2 := n2.Client(t)
	assert.Equal(t, int64(10004+4), c2.DBSize(ctx).Val())
	for w := 0; w < 4; w++ {
		assert.Equal(t, strconv.Itoa(counts[w]), c2.Get(ctx, "ctr"+strconv.Itoa(w)).Val())
		assert.Equal(t, int64(counts[w]), c2.LLen(ctx, "list"+strconv.Itoa(w)).Val())
	}
}

func TestShardCountChangeRewrites(t *testing.T) {
	n := nodetest.Start(t, "appendonly", "yes", "shard-actors", "2")
	c := n.Client(t)
	for i := 0; i < 100; i++ {
		require.NoError(t, c.Set(ctx, "k"+strconv.Itoa(i), i, 0).Err())
	}
	n2 := restart(t, n, "appendonly", "yes", "shard-actors", "3")
	c2 := n2.Client(t)
	assert.Equal(t, int64(100), c2.DBSize(ctx).Val())
	require.NoError(t, c2.Set(ctx, "k1", "x", 0).Err())
	assert.Len(t, incrFiles(t, n2.Dir), 3)
	n3 := restart(t, n2, "appendonly", "yes", "shard-actors", "3")
	assert.Equal(t, "x", n3.Client(t).Get(ctx, "k1").Val())
	assert.Equal(t, int64(100), n3.Client(t).DBSize(ctx).Val())
}

func TestFlushallAndInfo(t *testing.T) {
	n := nodetest.Start(t, "appendonly", "yes", "appendfsync", "always")
	c := n.Client(t)
	for i := 0; i < 50; i++ {
		require.NoError(t, c.Set(ctx, "k"+strconv.Itoa(i), i, 0).Err())
	}
	require.NoError(t, c.FlushAll(ctx).Err())
	require.NoError(t, c.Set(ctx, "after", "1", 0).Err())
	assert.Equal(t, "ok", info(t, c, "aof_last_write_status"))
	assert.NotEqual(t, "0", info(t, c, "aof_current_size"))
	n2 := restart(t, n, "appendonly", "yes")
	c2 := n2.Client(t)
	assert.Equal(t, int64(1), c2.DBSize(ctx).Val())
	// BGREWRITEAOF while one runs is refused as in Redis.
	require.NoError(t, c2.ConfigSet(ctx, "appendonly", "no").Err())
	assert.Equal(t, "0", info(t, c2, "aof_enabled"))
}

func TestReplicaLogsFullSyncAndStream(t *testing.T) {
	p := nodetest.Start(t)
	pc := p.Client(t)
	for i := 0; i < 200; i++ {
		require.NoError(t, pc.Set(ctx, "pre"+strconv.Itoa(i), i, 0).Err())
	}
	require.NoError(t, pc.RPush(ctx, "list", "a", "b").Err())
	r := nodetest.Start(t, "appendonly", "yes")
	rc := r.Client(t)
	require.NoError(t, rc.Set(ctx, "stale", "x", 0).Err())
	require.NoError(t, rc.Do(ctx, "REPLICAOF", "127.0.0.1", strconv.Itoa(p.Port)).Err())
	nodetest.Eventually(t, 10*time.Second, func() bool { return rc.DBSize(ctx).Val() == 201 && rc.Exists(ctx, "stale").Val() == 0 },
		"full sync done")
	require.NoError(t, pc.Incr(ctx, "after").Err())
	require.NoError(t, pc.RPush(ctx, "list", "c").Err())
	nodetest.Eventually(t, 10*time.Second, func() bool {
		return rc.Get(ctx, "after").Val() == "1" && rc.LLen(ctx, "list").Val() == 3
	}, "stream applied")

	r2 := restart(t, r, "appendonly", "yes")
	c2 := r2.Client(t)
	assert.Equal(t, int64(202), c2.DBSize(ctx).Val())
	assert.Equal(t, "17", c2.Get(ctx, "pre17").Val())
	assert.Equal(t, []string{"a", "b", "c"}, c2.LRange(ctx, "list", 0, -1).Val())
	assert.Equal(t, int64(0), c2.Exists(ctx, "stale").Val())
}

func TestAutoRewriteOnGrowth(t *testing.T) {
	n := nodetest.Start(t, "appendonly", "yes", "auto-aof-rewrite-min-size", "4kb",
		"auto-aof-rewrite-percentage", "100")
	c := n.Client(t)
	assert.Equal(t, "1", info(t, c, "aof_rewrites"), "the start-up rewrite")
	for i := 0; i < 100; i++ {
		require.NoError(t, c.Set(ctx, "k", strings.Repeat("x", 100), 0).Err())
	}
	nodetest.Eventually(t, 10*time.Second, func() bool { return info(t, c, "aof_rewrites") == "2" },
		"the AOF grew past 4kb and 100%: rewritten")
	nodetest.Eventually(t, 10*time.Second, func() bool {
		size, _ := strconv.Atoi(info(t, c, "aof_current_size"))
		return size < 4096
	}, "the rewrite compacted 100 SETs of one key")
	assert.Equal(t, strings.Repeat("x", 100), c.Get(ctx, "k").Val())
}

// aof-use-rdb-preamble no: the bases hold commands, as in Redis.
func TestRESPBase(t *testing.T) {
	n := nodetest.Start(t, "appendonly", "yes", "aof-use-rdb-preamble", "no", "shard-actors", "2")
	c := n.Client(t)
	require.NoError(t, c.Set(ctx, "s", "v", time.Hour).Err())
	require.NoError(t, c.RPush(ctx, "l", "a", "b").Err())
	require.NoError(t, c.HSet(ctx, "h", "f", "1").Err())
	require.NoError(t, c.SAdd(ctx, "set", "x").Err())
	require.NoError(t, c.ZAdd(ctx, "z", redis.Z{Score: -2.5, Member: "m"}).Err())
	require.NoError(t, c.BgRewriteAOF(ctx).Err())
	nodetest.Eventually(t, 10*time.Second, func() bool {
		return info(t, c, "aof_rewrite_in_progress") == "0" && info(t, c, "aof_rewrites") == "2"
	}, "rewrite ends")
	bases, _ := filepath.Glob(filepath.Join(n.Dir, "appendonlydir", "*.base.aof"))
	assert.Len(t, bases, 2)
	exp := c.PExpireTime(ctx, "s").Val()
	n2 := restart(t, n, "appendonly", "yes", "shard-actors", "2")
	c2 := n2.Client(t)
	assert.Equal(t, exp, c2.PExpireTime(ctx, "s").Val())
	assert.Equal(t, []string{"a", "b"}, c2.LRange(ctx, "l", 0, -1).Val())
	assert.Equal(t, "1", c2.HGet(ctx, "h", "f").Val())
	assert.Equal(t, []string{"x"}, c2.SMembers(ctx, "set").Val())
	assert.Equal(t, []redis.Z{{Score: -2.5, Member: "m"}}, c2.ZRangeWithScores(ctx, "z", 0, -1).Val())
	assert.Equal(t, int64(5), c2.DBSize(ctx).Val())
}

func TestDebugLoadAOF(t *testing.T) {
	n := nodetest.Start(t, "appendonly", "yes", "enable-debug-command", "yes")
	c := n.Client(t)
	require.NoError(t, c.Set(ctx, "a", "1", 0).Err())
	require.NoError(t, c.Incr(ctx, "a").Err())
	require.NoError(t, c.Do(ctx, "DEBUG", "LOADAOF").Err())
	assert.Equal(t, "2", c.Get(ctx, "a").Val())
	assert.Equal(t, int64(1), c.DBSize(ctx).Val())
	require.NoError(t, c.Incr(ctx, "a").Err(), "logging goes on after the reload")
	n2 := restart(t, n, "appendonly", "yes", "enable-debug-command", "yes")
	c2 := n2.Client(t)
	assert.Equal(t, "3", c2.Get(ctx, "a").Val())
	require.NoError(t, c2.ConfigSet(ctx, "appendonly", "no").Err())
	assert.ErrorContains(t, c2.Do(ctx, "DEBUG", "LOADAOF").Err(), "append only file is off")
}

// An AOF that cannot be written (here the rewrite's new incr file is
// /dev/full: ENOSPC) refuses writes with Redis's MISCONF error; the record
// that failed is kept, and the next rewrite (to a writable file) lifts the
// refusal with nothing lost.
func TestWriteErrorRefusesWritesAndLosesNothing(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	n := nodetest.Start(t, "appendonly", "yes", "shard-actors", "1")
	c := n.Client(t)
	require.NoError(t, c.Set(ctx, "a", "1", 0).Err())
	incrs := incrFiles(t, n.Dir)
	require.Len(t, incrs, 1)
	// appendonly.aof.<gen>.s0.incr.aof: the rewrite opens generation gen+1.
	parts := strings.Split(filepath.Base(incrs[0]), ".")
	gen, err := strconv.Atoi(parts[2])
	require.NoError(t, err)
	next := func(g int) string {
		return filepath.Join(n.Dir, "appendonlydir", "appendonly.aof."+strconv.Itoa(g)+".s0.incr.aof")
	}
	require.NoError(t, os.Symlink("/dev/full", next(gen+1)))
	rewrite := func() {
		before := info(t, c, "aof_rewrites")
		require.NoError(t, c.BgRewriteAOF(ctx).Err())
		nodetest.Eventually(t, 10*time.Second, func() bool {
			return info(t, c, "aof_rewrites") != before && info(t, c, "aof_rewrite_in_progress") == "0"
		}, "the rewrite ends")
	}
	rewrite()

	// The write that meets the error is applied (its reply was due); the
	// next ones are refused until the AOF can be written again.
	require.NoError(t, c.Set(ctx, "b", "2", 0).Err())
	misconf := "MISCONF Errors writing to the AOF file: No space left on device"
	assert.EqualError(t, c.Set(ctx, "c", "3", 0).Err(), misconf)
	assert.EqualError(t, c.Ping(ctx).Err(), misconf)
	assert.Equal(t, "2", c.Get(ctx, "b").Val(), "reads are served")
	assert.Equal(t, "err", info(t, c, "aof_last_write_status"))

	rewrite() // generation gen+2 is a plain file
	assert.Equal(t, "ok", info(t, c, "aof_last_write_status"))
	require.NoError(t, c.Set(ctx, "c", "3", 0).Err())

	c2 := restart(t, n, "appendonly", "yes", "shard-actors", "1").Client(t)
	for k, v := range map[string]string{"a": "1", "b": "2", "c": "3"} {
		assert.Equal(t, v, c2.Get(ctx, k).Val(), k)
	}
}
