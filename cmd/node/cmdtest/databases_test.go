package cmdtest

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

var dbCtx = context.Background()

// inDB is a client of addr whose connections SELECT db.
func inDB(t *testing.T, addr string, db int) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, DB: db, DialTimeout: 5 * time.Second,
		ReadTimeout: 10 * time.Second, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// keyspaceLines returns INFO keyspace's db lines.
func keyspaceLines(t *testing.T, c *redis.Client) []string {
	txt, err := c.Info(dbCtx, "keyspace").Result()
	require.NoError(t, err)
	var out []string
	for _, l := range strings.Split(txt, "\r\n") {
		if strings.HasPrefix(l, "db") {
			out = append(out, l[:strings.Index(l, ",avg_ttl=")])
		}
	}
	return out
}

func TestDatabasesCommands(t *testing.T) {
	n := nodetest.Start(t, "shard-actors", "4")
	c0, c3, c5 := inDB(t, n.Addr, 0), inDB(t, n.Addr, 3), inDB(t, n.Addr, 5)

	assert.EqualError(t, c0.Do(dbCtx, "select", "16").Err(), "ERR DB index is out of range")
	assert.EqualError(t, c0.Do(dbCtx, "select", "-1").Err(), "ERR DB index is out of range")
	assert.EqualError(t, c0.Do(dbCtx, "select", "x").Err(), "ERR value is not an integer or out of range")

	require.NoError(t, c0.Set(dbCtx, "k", "zero", 0).Err())
	require.NoError(t, c3.Set(dbCtx, "k", "three", time.Hour).Err())
	require.NoError(t, c3.RPush(dbCtx, "l", "a", "b").Err())
	assert.Equal(t, "zero", c0.Get(dbCtx, "k").Val())
	assert.Equal(t, "three", c3.Get(dbCtx, "k").Val())
	assert.Equal(t, int64(1), c0.DBSize(dbCtx).Val())
	assert.Equal(t, int64(2), c3.DBSize(dbCtx).Val())
	assert.ElementsMatch(t, []string{"k", "l"}, c3.Keys(dbCtx, "*").Val())
	assert.Equal(t, []string{"db0:keys=1,expires=0", "db3:keys=2,expires=1"}, keyspaceLines(t, c0))
	info, err := c3.ClientInfo(dbCtx).Result()
	require.NoError(t, err)
	assert.Equal(t, 3, info.DB)

	// MOVE: not over an existing key; the TTL goes along.
	assert.False(t, c3.Move(dbCtx, "k", 0).Val())
	assert.True(t, c3.Move(dbCtx, "k", 5).Val())
	assert.Equal(t, "three", c5.Get(dbCtx, "k").Val())
	assert.Greater(t, c5.TTL(dbCtx, "k").Val(), 59*time.Minute)
	assert.Equal(t, int64(0), c3.Exists(dbCtx, "k").Val())
	assert.False(t, c3.Move(dbCtx, "missing", 5).Val())
	assert.EqualError(t, c3.Move(dbCtx, "l", 3).Err(), "ERR source and destination objects are the same")
	assert.EqualError(t, c3.Move(dbCtx, "l", 16).Err(), "ERR DB index is out of range")

	// COPY ... DB.
	assert.Equal(t, int64(1), c3.Do(dbCtx, "copy", "l", "l", "db", "5").Val())
	assert.Equal(t, []string{"a", "b"}, c5.LRange(dbCtx, "l", 0, -1).Val())
	assert.Equal(t, int64(0), c3.Do(dbCtx, "copy", "l", "l", "db", "5").Val())
	assert.EqualError(t, c3.Do(dbCtx, "copy", "l", "l").Err(), "ERR source and destination objects are the same")

	// SWAPDB.
	assert.EqualError(t, c0.Do(dbCtx, "swapdb", "x", "1").Err(), "ERR invalid first DB index")
	assert.EqualError(t, c0.Do(dbCtx, "swapdb", "1", "x").Err(), "ERR invalid second DB index")
	assert.EqualError(t, c0.Do(dbCtx, "swapdb", "1", "16").Err(), "ERR DB index is out of range")
	require.NoError(t, c0.Do(dbCtx, "swapdb", "0", "5").Err())
	assert.Equal(t, "three", c0.Get(dbCtx, "k").Val())
	assert.Equal(t, "zero", c5.Get(dbCtx, "k").Val())
	assert.Equal(t, []string{"db0:keys=2,expires=1", "db3:keys=1,expires=0", "db5:keys=1,expires=0"},
		keyspaceLines(t, c0))

	// A transaction's SELECT moves the rest of it (and the connection).
	cn := n.Client(t).Conn()
	defer cn.Close()
	cmds, err := cn.TxPipelined(dbCtx, func(p redis.Pipeliner) error {
		p.Select(dbCtx, 7)
		p.Set(dbCtx, "{t}a", "7", 0)
		p.Select(dbCtx, 8)
		p.Set(dbCtx, "{t}a", "8", 0)
		return nil
	})
	require.NoError(t, err)
	assert.Len(t, cmds, 4)
	assert.Equal(t, "8", cn.Get(dbCtx, "{t}a").Val())
	assert.Equal(t, "7", inDB(t, n.Addr, 7).Get(dbCtx, "{t}a").Val())

	// A script's SELECT lasts until the script ends.
	v, err := c3.Eval(dbCtx, "redis.call('select', 5); return redis.call('get', KEYS[1])", []string{"k"}).Result()
	require.NoError(t, err)
	assert.Equal(t, "zero", v)
	assert.Equal(t, int64(1), c3.DBSize(dbCtx).Val())
	assert.Equal(t, int64(1), c3.Eval(dbCtx, "return redis.call('dbsize')", nil).Val())
	assert.ErrorContains(t, c3.Eval(dbCtx, "return redis.call('select', 99)", nil).Err(), "ERR DB index is out of range")

	// FLUSHDB is one database, FLUSHALL all of them.
	require.NoError(t, c3.FlushDB(dbCtx).Err())
	assert.Equal(t, int64(0), c3.DBSize(dbCtx).Val())
	assert.Equal(t, int64(2), c0.DBSize(dbCtx).Val())
	require.NoError(t, c0.FlushAll(dbCtx).Err())
	assert.Empty(t, keyspaceLines(t, c0))
}

func TestDatabasesWatchAndBlocking(t *testing.T) {
	n := nodetest.Start(t)
	c0, c1, c2, c3 := inDB(t, n.Addr, 0), inDB(t, n.Addr, 1), inDB(t, n.Addr, 2), inDB(t, n.Addr, 3)

	watchThen := func(write func()) error {
		return c3.Watch(dbCtx, func(tx *redis.Tx) error {
			write()
			_, err := tx.TxPipelined(dbCtx, func(p redis.Pipeliner) error { return p.Set(dbCtx, "w", "tx", 0).Err() })
			return err
		}, "w")
	}
	require.NoError(t, watchThen(func() { require.NoError(t, c0.Set(dbCtx, "w", "other db", 0).Err()) }))
	assert.ErrorIs(t, watchThen(func() { require.NoError(t, c3.Set(dbCtx, "w", "same db", 0).Err()) }), redis.TxFailedErr)

	// A client blocked in db 1 is served by SWAPDB bringing the key there.
	require.NoError(t, c0.RPush(dbCtx, "bl", "from0").Err())
	require.NoError(t, c2.RPush(dbCtx, "bl", "from2").Err())
	got := make(chan []string, 1)
	go func() { got <- c1.BLPop(dbCtx, 10*time.Second, "bl").Val() }()
	nodetest.Eventually(t, 5*time.Second, func() bool { return nodetest.InfoField(t, c0, "clients", "blocked_clients") == "1" },
		"BLPOP blocked")
	require.NoError(t, c0.Do(dbCtx, "swapdb", "1", "2").Err())
	assert.Equal(t, []string{"bl", "from2"}, <-got)
	assert.Equal(t, int64(0), c2.Exists(dbCtx, "bl").Val())
	assert.Equal(t, "from0", c0.LPop(dbCtx, "bl").Val())
}

// fillDBs writes keys of several types into databases 0, 4 and 15.
func fillDBs(t *testing.T, addr string) {
	c0, c4, c15 := inDB(t, addr, 0), inDB(t, addr, 4), inDB(t, addr, 15)
	require.NoError(t, c0.Set(dbCtx, "s", "zero", 0).Err())
	require.NoError(t, c4.Set(dbCtx, "s", "four", time.Hour).Err())
	require.NoError(t, c4.HSet(dbCtx, "h", "f", "v").Err())
	require.NoError(t, c15.ZAdd(dbCtx, "z", redis.Z{Score: 1, Member: "m"}).Err())
}

// checkDBs checks what fillDBs wrote.
func checkDBs(t *testing.T, addr string) {
	t.Helper()
	c0, c4, c15 := inDB(t, addr, 0), inDB(t, addr, 4), inDB(t, addr, 15)
	assert.Equal(t, "zero", c0.Get(dbCtx, "s").Val())
	assert.Equal(t, "four", c4.Get(dbCtx, "s").Val())
	assert.Greater(t, c4.TTL(dbCtx, "s").Val(), 50*time.Minute)
	assert.Equal(t, "v", c4.HGet(dbCtx, "h", "f").Val())
	assert.Equal(t, []string{"m"}, c15.ZRange(dbCtx, "z", 0, -1).Val())
	assert.Equal(t, int64(1), c0.DBSize(dbCtx).Val())
	assert.Equal(t, int64(2), c4.DBSize(dbCtx).Val())
}

func TestDatabasesRDBBothWays(t *testing.T) {
	n := nodetest.Start(t, "shard-actors", "3", "enable-debug-command", "yes")
	fillDBs(t, n.Addr)
	require.NoError(t, n.Client(t).Save(dbCtx).Err())
	dump, err := os.ReadFile(filepath.Join(n.Dir, "dump.rdb"))
	require.NoError(t, err)

	// slotd's file into redis-server.
	rdir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(rdir, "dump.rdb"), dump, 0o644))
	raddr := nodetest.StartRedis(t, "--dir", rdir, "--enable-debug-command", "yes")
	checkDBs(t, raddr)
	// DEBUG DIGEST covers every database, each mixed with its number.
	want := inDB(t, raddr, 0).Do(dbCtx, "debug", "digest").Val()
	assert.Equal(t, want, n.Client(t).Do(dbCtx, "debug", "digest").Val())
	assert.Equal(t, inDB(t, raddr, 4).Do(dbCtx, "debug", "digest-value", "h").Val(),
		inDB(t, n.Addr, 4).Do(dbCtx, "debug", "digest-value", "h").Val())

	// redis-server's file (with another db written there) into slotd.
	require.NoError(t, inDB(t, raddr, 9).Set(dbCtx, "r9", "x", 0).Err())
	rc := redis.NewClient(&redis.Options{Addr: raddr})
	defer rc.Close()
	require.NoError(t, rc.Save(dbCtx).Err())
	sdir := t.TempDir()
	b, err := os.ReadFile(filepath.Join(rdir, "dump.rdb"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(sdir, "dump.rdb"), b, 0o644))
	n2 := nodetest.Start(t, "dir", sdir, "shard-actors", "2")
	checkDBs(t, n2.Addr)
	assert.Equal(t, "x", inDB(t, n2.Addr, 9).Get(dbCtx, "r9").Val())
}

func TestDatabasesAOFRestart(t *testing.T) {
	for _, preamble := range []string{"yes", "no"} {
		t.Run("preamble-"+preamble, func(t *testing.T) {
			dir := t.TempDir()
			opts := []string{"dir", dir, "appendonly", "yes", "aof-use-rdb-preamble", preamble, "shard-actors", "2"}
			n := nodetest.Start(t, opts...)
			fillDBs(t, n.Addr)
			c6 := inDB(t, n.Addr, 6)
			require.NoError(t, c6.Set(dbCtx, "s", "six", 0).Err())
			require.NoError(t, c6.Do(dbCtx, "swapdb", "6", "7").Err())
			require.NoError(t, inDB(t, n.Addr, 7).Move(dbCtx, "s", 8).Err())
			n.Stop()
			n2 := nodetest.Start(t, opts...)
			checkDBs(t, n2.Addr)
			assert.Equal(t, "six", inDB(t, n2.Addr, 8).Get(dbCtx, "s").Val())
			// After a rewrite, writes to other databases go on in the new files.
			require.NoError(t, n2.Client(t).BgRewriteAOF(dbCtx).Err())
			nodetest.Eventually(t, 10*time.Second, func() bool {
				return nodetest.InfoField(t, n2.Client(t), "persistence", "aof_rewrite_in_progress") == "0"
			}, "rewrite done")
			require.NoError(t, inDB(t, n2.Addr, 12).Set(dbCtx, "late", "1", 0).Err())
			n2.Stop()
			n3 := nodetest.Start(t, opts...)
			checkDBs(t, n3.Addr)
			assert.Equal(t, "1", inDB(t, n3.Addr, 12).Get(dbCtx, "late").Val())
			assert.Equal(t, int64(1), inDB(t, n3.Addr, 12).DBSize(dbCtx).Val())
		})
	}
}

func TestDatabasesReplication(t *testing.T) {
	p := nodetest.Start(t, "shard-actors", "2")
	fillDBs(t, p.Addr)
	r := nodetest.Start(t, "shard-actors", "2", "replicaof", "127.0.0.1 "+strconv.Itoa(p.Port))
	rc := r.Client(t)
	nodetest.Eventually(t, 10*time.Second, func() bool {
		return nodetest.InfoField(t, rc, "replication", "master_link_status") == "up" && inDB(t, r.Addr, 15).DBSize(dbCtx).Val() == 1
	}, "full sync")
	checkDBs(t, r.Addr)
	// The stream carries each write's database.
	require.NoError(t, inDB(t, p.Addr, 2).Set(dbCtx, "s", "two", 0).Err())
	require.NoError(t, inDB(t, p.Addr, 4).Move(dbCtx, "h", 5).Err())
	require.NoError(t, p.Client(t).Set(dbCtx, "s", "zero again", 0).Err())
	require.NoError(t, p.Client(t).Do(dbCtx, "swapdb", "2", "3").Err())
	require.NoError(t, inDB(t, p.Addr, 15).FlushDB(dbCtx).Err())
	nodetest.Eventually(t, 10*time.Second, func() bool {
		return inDB(t, r.Addr, 3).Get(dbCtx, "s").Val() == "two" && inDB(t, r.Addr, 15).DBSize(dbCtx).Val() == 0
	}, "stream applied")
	assert.Equal(t, "v", inDB(t, r.Addr, 5).HGet(dbCtx, "h", "f").Val())
	assert.Equal(t, "zero again", rc.Get(dbCtx, "s").Val())
	assert.Equal(t, int64(0), inDB(t, r.Addr, 2).DBSize(dbCtx).Val())
}

func TestDatabasesMigrate(t *testing.T) {
	src, dst := nodetest.Start(t, "shard-actors", "2"), nodetest.Start(t)
	s3 := inDB(t, src.Addr, 3)
	require.NoError(t, s3.Set(dbCtx, "m", "v", time.Hour).Err())
	require.NoError(t, inDB(t, src.Addr, 0).Set(dbCtx, "m", "db0", 0).Err())
	for i := 0; i < 5; i++ { // other clients' commands in the source's other databases meanwhile
		require.NoError(t, inDB(t, src.Addr, i).Ping(dbCtx).Err())
	}
	require.NoError(t, s3.Migrate(dbCtx, "127.0.0.1", strconv.Itoa(dst.Port), "m", 6, 5*time.Second).Err())
	assert.Equal(t, int64(0), s3.Exists(dbCtx, "m").Val())
	assert.Equal(t, "db0", inDB(t, src.Addr, 0).Get(dbCtx, "m").Val(), "only db 3's key moved")
	d6 := inDB(t, dst.Addr, 6)
	assert.Equal(t, "v", d6.Get(dbCtx, "m").Val())
	assert.Greater(t, d6.TTL(dbCtx, "m").Val(), 50*time.Minute)
	assert.Equal(t, int64(0), dst.Client(t).Exists(dbCtx, "m").Val())

	// DUMP and RESTORE work in the client's database.
	payload, err := d6.Dump(dbCtx, "m").Result()
	require.NoError(t, err)
	require.NoError(t, inDB(t, dst.Addr, 2).Restore(dbCtx, "r", 0, payload).Err())
	assert.Equal(t, "v", inDB(t, dst.Addr, 2).Get(dbCtx, "r").Val())
	assert.Equal(t, int64(0), d6.Exists(dbCtx, "r").Val())
}
