package persist_test

import (
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

// infoField returns one field of INFO persistence.
func infoField(t *testing.T, c *redis.Client, name string) string {
	t.Helper()
	return nodetest.InfoField(t, c, "persistence", name)
}

func TestBgsaveLastsaveAndInfo(t *testing.T) {
	n := nodetest.Start(t)
	for _, proto := range []int{2, 3} {
		c := n.Client(t, proto)
		key := "a" + strconv.Itoa(proto)
		require.NoError(t, c.Set(ctx, key, "1", 0).Err())
		require.NoError(t, c.Incr(ctx, key).Err())
		require.NoError(t, c.Get(ctx, key).Err())
		require.NoError(t, c.Del(ctx, "missing").Err()) // changes nothing
		assert.Equal(t, "2", infoField(t, c, "rdb_changes_since_last_save"))
		before := c.LastSave(ctx).Val()
		assert.Equal(t, "Background saving started", c.BgSave(ctx).Val())
		nodetest.Eventually(t, 5*time.Second, func() bool {
			return infoField(t, c, "rdb_bgsave_in_progress") == "0" && infoField(t, c, "rdb_saves") == strconv.Itoa(proto-1)
		}, "background save finished")
		assert.Equal(t, "ok", infoField(t, c, "rdb_last_bgsave_status"))
		assert.Equal(t, "0", infoField(t, c, "rdb_changes_since_last_save"))
		assert.GreaterOrEqual(t, c.LastSave(ctx).Val(), before)
		_, err := os.Stat(filepath.Join(n.Dir, "dump.rdb"))
		require.NoError(t, err)
		assert.EqualError(t, c.Do(ctx, "BGSAVE", "NOW").Err(), "ERR syntax error")
		assert.EqualError(t, c.Do(ctx, "LASTSAVE", "x").Err(), "ERR wrong number of arguments for 'lastsave' command")
		assert.EqualError(t, c.Do(ctx, "SAVE", "x").Err(), "ERR wrong number of arguments for 'save' command")
	}
}

func TestSaveRulesTriggerABackgroundSave(t *testing.T) {
	n := nodetest.Start(t, "save", "1 2")
	c := n.Client(t)
	require.NoError(t, c.Set(ctx, "a", "1", 0).Err())
	// One change is below the rule: no save, however long we look.
	assert.Equal(t, "0", infoField(t, c, "rdb_saves"))
	require.NoError(t, c.Set(ctx, "b", "1", 0).Err())
	nodetest.Eventually(t, 5*time.Second, func() bool { return infoField(t, c, "rdb_saves") == "1" },
		"save rule fired")
	assert.Equal(t, "0", infoField(t, c, "rdb_changes_since_last_save"))
}

func TestShutdownSaveAndNosave(t *testing.T) {
	n := nodetest.Start(t)
	c := n.Client(t)
	require.NoError(t, c.Set(ctx, "kept", "1", 0).Err())
	assert.EqualError(t, c.Do(ctx, "SHUTDOWN", "SAVE", "NOSAVE").Err(), "ERR syntax error")
	assert.EqualError(t, c.Do(ctx, "SHUTDOWN", "ABORT").Err(), "ERR No shutdown in progress.")
	require.Error(t, c.Do(ctx, "SHUTDOWN", "SAVE").Err()) // the connection closes, no reply
	require.NoError(t, n.Wait())

	n2 := nodetest.Start(t, "dir", n.Dir)
	c2 := n2.Client(t)
	assert.Equal(t, "1", c2.Get(ctx, "kept").Val())
	require.NoError(t, c2.Set(ctx, "lost", "1", 0).Err())
	require.Error(t, c2.Do(ctx, "SHUTDOWN", "NOSAVE").Err())
	require.NoError(t, n2.Wait())

	// Without save rules a plain SHUTDOWN does not save either.
	n3 := nodetest.Start(t, "dir", n.Dir)
	c3 := n3.Client(t)
	assert.Equal(t, int64(0), c3.Exists(ctx, "lost").Val())
	require.NoError(t, c3.Set(ctx, "lost", "1", 0).Err())
	require.Error(t, c3.Do(ctx, "SHUTDOWN").Err())
	require.NoError(t, n3.Wait())

	// With save rules it does.
	n4 := nodetest.Start(t, "dir", n.Dir, "save", "3600 1")
	c4 := n4.Client(t)
	assert.Equal(t, int64(0), c4.Exists(ctx, "lost").Val())
	require.NoError(t, c4.Set(ctx, "saved", "1", 0).Err())
	require.Error(t, c4.Do(ctx, "SHUTDOWN").Err())
	require.NoError(t, n4.Wait())

	n5 := nodetest.Start(t, "dir", n.Dir)
	assert.Equal(t, "1", n5.Client(t).Get(ctx, "saved").Val())
}

func TestShutdownFailsWhenTheSaveFails(t *testing.T) {
	n := nodetest.Start(t)
	c := n.Client(t)
	require.NoError(t, c.Set(ctx, "a", "1", 0).Err())
	// A directory where the file should be makes the rename fail.
	require.NoError(t, os.Mkdir(filepath.Join(n.Dir, "dump.rdb"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(n.Dir, "dump.rdb", "x"), nil, 0o644))
	assert.EqualError(t, c.Do(ctx, "SHUTDOWN", "SAVE").Err(), "ERR Errors trying to SHUTDOWN. Check logs.")
	assert.Equal(t, "1", c.Get(ctx, "a").Val())
	assert.Error(t, c.Save(ctx).Err())
	// A foreground save does not mark the background status, as in Redis.
	assert.Equal(t, "ok", infoField(t, c, "rdb_last_bgsave_status"))
	require.Error(t, c.Do(ctx, "SHUTDOWN", "SAVE", "FORCE").Err())
	require.NoError(t, n.Wait())
}

func TestDebugReload(t *testing.T) {
	n := nodetest.Start(t, "enable-debug-command", "yes")
	c := n.Client(t)
	fill(t, c)
	digest := c.Do(ctx, "DEBUG", "DIGEST").Val()
	assert.Equal(t, "OK", c.Do(ctx, "DEBUG", "RELOAD").Val())
	assert.Equal(t, digest, c.Do(ctx, "DEBUG", "DIGEST").Val())
	// NOSAVE loads the file as it is: a key written since is gone.
	require.NoError(t, c.Set(ctx, "new", "1", 0).Err())
	assert.Equal(t, "OK", c.Do(ctx, "DEBUG", "RELOAD", "NOSAVE").Val())
	assert.Equal(t, int64(0), c.Exists(ctx, "new").Val())
	assert.Equal(t, digest, c.Do(ctx, "DEBUG", "DIGEST").Val())
	assert.EqualError(t, c.Do(ctx, "DEBUG", "RELOAD", "BAD").Err(),
		"ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.")
}

func TestDebugPopulate(t *testing.T) {
	n := nodetest.Start(t, "enable-debug-command", "yes")
	for _, proto := range []int{2, 3} {
		c := n.Client(t, proto)
		require.NoError(t, c.FlushAll(ctx).Err())
		require.NoError(t, c.Set(ctx, "key:5", "mine", 0).Err())
		assert.Equal(t, "OK", c.Do(ctx, "DEBUG", "POPULATE", "1000").Val())
		assert.Equal(t, int64(1000), c.DBSize(ctx).Val())
		assert.Equal(t, "value:999", c.Get(ctx, "key:999").Val())
		assert.Equal(t, "mine", c.Get(ctx, "key:5").Val()) // existing keys stay
		assert.Equal(t, "OK", c.Do(ctx, "DEBUG", "POPULATE", "2", "p", "10").Val())
		assert.Equal(t, "value:1\x00\x00\x00", c.Get(ctx, "p:1").Val())
		assert.Equal(t, "OK", c.Do(ctx, "DEBUG", "POPULATE", "1", "q", "3").Val())
		assert.Equal(t, "val", c.Get(ctx, "q:0").Val())
		assert.Equal(t, "OK", c.Do(ctx, "DEBUG", "POPULATE", "0").Val())
		for _, args := range [][]any{{"x"}, {"-1"}, {"3", "p", "-2"}, {"3", "p", "x"}} {
			assert.EqualError(t, c.Do(ctx, append([]any{"DEBUG", "POPULATE"}, args...)...).Err(),
				"ERR value is out of range, must be positive", "%v", args)
		}
		assert.EqualError(t, c.Do(ctx, "DEBUG", "POPULATE").Err(),
			"ERR unknown subcommand or wrong number of arguments for 'POPULATE'. Try DEBUG HELP.")
		assert.EqualError(t, c.Do(ctx, "DEBUG", "POPULATE", "3", "p", "2", "7").Err(),
			"ERR unknown subcommand or wrong number of arguments for 'POPULATE'. Try DEBUG HELP.")
	}
}

// FLUSHALL with save rules writes the empty dataset right away (Redis
// does it before replying): LASTSAVE moves, nothing is left to save, and a
// node killed before any save rule fires does not get the flushed keys
// back from the older dump.rdb.
func TestFlushAllSavesWithSaveRules(t *testing.T) {
	n := nodetest.Start(t, "save", "3600 1000")
	c := n.Client(t)
	for i := 0; i < 100; i++ {
		require.NoError(t, c.Set(ctx, "k"+strconv.Itoa(i), i, 0).Err())
	}
	require.NoError(t, c.Save(ctx).Err())
	before := c.LastSave(ctx).Val()
	require.NoError(t, c.FlushAll(ctx).Err())
	nodetest.Eventually(t, 10*time.Second, func() bool {
		info := c.Info(ctx, "persistence").Val()
		return strings.Contains(info, "rdb_changes_since_last_save:0") && c.LastSave(ctx).Val() >= before &&
			!strings.Contains(info, "rdb_bgsave_in_progress:1")
	}, "FLUSHALL saved the empty dataset")
	require.Error(t, c.Do(ctx, "SHUTDOWN", "NOSAVE").Err())
	require.NoError(t, n.Wait())

	n2 := nodetest.Start(t, "dir", n.Dir)
	assert.Equal(t, int64(0), n2.Client(t).DBSize(ctx).Val(), "flushed keys came back")
}

// A failed background save refuses writes (and PING) with Redis's MISCONF
// error while save rules are set and stop-writes-on-bgsave-error is yes;
// reads go on, and a successful save or the directive lifts it.
func TestFailedBgsaveRefusesWrites(t *testing.T) {
	const misconf = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. " +
		"Commands that may modify the data set are disabled, because this instance is configured to report errors " +
		"during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs " +
		"for details about the RDB error."
	n := nodetest.Start(t, "save", "3600 1")
	c := n.Client(t)
	require.NoError(t, c.Set(ctx, "a", "1", 0).Err())
	// A directory where the file should be makes every save fail.
	block := filepath.Join(n.Dir, "dump.rdb")
	require.NoError(t, os.Mkdir(block, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(block, "x"), nil, 0o644))

	require.Error(t, c.Save(ctx).Err())
	require.NoError(t, c.Set(ctx, "b", "1", 0).Err(), "a failed foreground SAVE does not refuse writes")

	// A transaction queued before the failure is refused at EXEC.
	tx := c.Conn()
	defer tx.Close()
	require.NoError(t, tx.Do(ctx, "MULTI").Err())
	require.Equal(t, "QUEUED", tx.Do(ctx, "SET", "x", "1").Val())

	require.NoError(t, c.BgSave(ctx).Err())
	nodetest.Eventually(t, 10*time.Second, func() bool { return infoField(t, c, "rdb_last_bgsave_status") == "err" },
		"the background save fails")
	assert.EqualError(t, tx.Do(ctx, "EXEC").Err(), "EXECABORT Transaction discarded because of: "+misconf)
	assert.EqualError(t, tx.Do(ctx, "EXEC").Err(), "ERR EXEC without MULTI", "the transaction is gone")
	assert.EqualError(t, c.Set(ctx, "c", "1", 0).Err(), misconf)
	assert.EqualError(t, c.Ping(ctx).Err(), misconf)
	assert.Equal(t, "1", c.Get(ctx, "a").Val(), "reads are served")
	// Inside MULTI the refusal comes at queue time and EXEC aborts.
	_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "c", "1", 0)
		return nil
	})
	assert.ErrorContains(t, err, "EXECABORT")

	require.NoError(t, c.ConfigSet(ctx, "stop-writes-on-bgsave-error", "no").Err())
	require.NoError(t, c.Set(ctx, "c", "1", 0).Err())
	require.NoError(t, c.ConfigSet(ctx, "stop-writes-on-bgsave-error", "yes").Err())
	assert.EqualError(t, c.Set(ctx, "c", "2", 0).Err(), misconf)
	require.NoError(t, c.ConfigSet(ctx, "save", "").Err())
	require.NoError(t, c.Set(ctx, "c", "2", 0).Err(), "no save rules: no refusal")
	require.NoError(t, c.ConfigSet(ctx, "save", "3600 1").Err())
	assert.EqualError(t, c.Set(ctx, "c", "3", 0).Err(), misconf)

	require.NoError(t, os.RemoveAll(block))
	require.NoError(t, c.Save(ctx).Err())
	require.NoError(t, c.Set(ctx, "d", "1", 0).Err(), "a successful save lifts the refusal")
	assert.Equal(t, "ok", infoField(t, c, "rdb_last_bgsave_status"))
}

// In cluster mode the refusal comes after routing, as in Redis: keys the
// node cannot serve still get their CLUSTERDOWN/MOVED answer.
func TestFailedBgsaveClusterRoutesFirst(t *testing.T) {
	n := nodetest.Start(t, "save", "3600 1", "cluster-enabled", "yes")
	c := n.Client(t)
	require.NoError(t, os.Mkdir(filepath.Join(n.Dir, "dump.rdb"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(n.Dir, "dump.rdb", "x"), nil, 0o644))
	require.NoError(t, c.BgSave(ctx).Err())
	nodetest.Eventually(t, 10*time.Second, func() bool { return infoField(t, c, "rdb_last_bgsave_status") == "err" },
		"the background save fails")
	err := c.Set(ctx, "k", "1", 0).Err()
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "CLUSTERDOWN "), err.Error())
	assert.ErrorContains(t, c.Ping(ctx).Err(), "MISCONF ")

	require.NoError(t, c.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", "0", "16383").Err())
	nodetest.Eventually(t, 10*time.Second, func() bool {
		return strings.Contains(c.ClusterInfo(ctx).Val(), "cluster_state:ok")
	}, "the cluster state turns ok")
	assert.ErrorContains(t, c.Set(ctx, "k", "1", 0).Err(), "MISCONF ")
	assert.Equal(t, "", c.Get(ctx, "k").Val(), "reads are served")
}

// rdb-key-save-delay (a test knob) slows a save down by that many
// microseconds per key: a BGSAVE of 100 keys at 20 ms each is still in
// progress when BGSAVE has answered, and ends once the delay is lifted.
func TestRdbKeySaveDelaySlowsSaving(t *testing.T) {
	n := nodetest.Start(t, "enable-debug-command", "yes")
	c := n.Client(t)
	require.NoError(t, c.Do(ctx, "DEBUG", "POPULATE", "100").Err())
	require.NoError(t, c.ConfigSet(ctx, "rdb-key-save-delay", "20000").Err())
	require.NoError(t, c.BgSave(ctx).Err())
	assert.Equal(t, "1", infoField(t, c, "rdb_bgsave_in_progress"))
	require.NoError(t, c.ConfigSet(ctx, "rdb-key-save-delay", "0").Err())
	nodetest.Eventually(t, 10*time.Second, func() bool { return infoField(t, c, "rdb_bgsave_in_progress") == "0" },
		"save done")
	assert.Equal(t, "ok", infoField(t, c, "rdb_last_bgsave_status"))
}
