package config

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func getOne(t *testing.T, c *Config, name string) string {
	t.Helper()
	got := c.Get(name)
	require.Len(t, got, 1, name)
	return got[0][1]
}

func TestDefaults(t *testing.T) {
	c := New()
	wd, err := os.Getwd()
	require.NoError(t, err)
	want := map[string]string{
		"port":                            "6379",
		"bind":                            "* -::*",
		"protected-mode":                  "yes",
		"tcp-backlog":                     "511",
		"timeout":                         "0",
		"tcp-keepalive":                   "300",
		"daemonize":                       "no",
		"pidfile":                         "",
		"loglevel":                        "notice",
		"logfile":                         "",
		"databases":                       "16",
		"save":                            "3600 1 300 100 60 10000",
		"dbfilename":                      "dump.rdb",
		"dir":                             wd,
		"appendonly":                      "no",
		"appendfsync":                     "everysec",
		"appendfilename":                  "appendonly.aof",
		"appenddirname":                   "appendonlydir",
		"maxclients":                      "10000",
		"maxmemory":                       "0",
		"maxmemory-policy":                "noeviction",
		"proto-max-bulk-len":              "536870912",
		"client-query-buffer-limit":       "1073741824",
		"client-output-buffer-limit":      "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60",
		"hz":                              "10",
		"requirepass":                     "",
		"cluster-enabled":                 "no",
		"cluster-config-file":             "nodes.conf",
		"cluster-node-timeout":            "15000",
		"cluster-port":                    "0",
		"cluster-announce-ip":             "",
		"cluster-announce-port":           "0",
		"cluster-announce-bus-port":       "0",
		"cluster-announce-hostname":       "",
		"cluster-preferred-endpoint-type": "ip",
		"cluster-replica-validity-factor": "10",
		"cluster-migration-barrier":       "1",
		"cluster-require-full-coverage":   "yes",
		"cluster-allow-reads-when-down":   "no",
		"cluster-replica-no-failover":     "no",
		"cluster-allow-replica-migration": "yes",
		"replica-read-only":               "yes",
		"replica-serve-stale-data":        "yes",
		"repl-backlog-size":               "1048576",
		"lua-time-limit":                  "5000",
		"busy-reply-threshold":            "5000",
		"slowlog-log-slower-than":         "10000",
		"slowlog-max-len":                 "128",
		"latency-tracking":                "yes",
		"notify-keyspace-events":          "",
		"hash-max-listpack-entries":       "512",
		"hash-max-ziplist-entries":        "512",
		"list-max-listpack-size":          "-2",
		"set-max-intset-entries":          "512",
		"zset-max-listpack-entries":       "128",
		"io-threads":                      "1",
		"lazyfree-lazy-user-del":          "no",
		"active-expire-effort":            "1",
		"shard-actors":                    "0",
		"event-loops":                     "0",
		"trace-actors":                    "",
		"trace-ring-size":                 "4096",
		"metrics-port":                    "0",
		"replicaof":                       "",
		"slaveof":                         "",
	}
	for name, v := range want {
		assert.Equal(t, v, getOne(t, c, name), name)
		assert.Equal(t, v, c.String(name), name)
	}

	assert.Equal(t, int64(6379), c.Int("port"))
	assert.Equal(t, int64(512<<20), c.Int("proto-max-bulk-len"))
	assert.Equal(t, int64(-2), c.Int("list-max-listpack-size"))
	assert.True(t, c.Bool("protected-mode"))
	assert.False(t, c.Bool("cluster-enabled"))
	assert.Equal(t, int64(2), c.Int("loglevel")) // debug verbose [notice] warning nothing
	assert.Equal(t, []SaveParam{{3600, 1}, {300, 100}, {60, 10000}}, c.SaveParams())
	assert.Equal(t, ClientBufferLimits{
		ClassNormal:  {},
		ClassReplica: {Hard: 256 << 20, Soft: 64 << 20, SoftSeconds: 60},
		ClassPubSub:  {Hard: 32 << 20, Soft: 8 << 20, SoftSeconds: 60},
	}, c.ClientOutputBufferLimits())
	assert.Equal(t, []string{"*", "-::*"}, c.List("bind"))

	// Names are canonical, sorted, without aliases.
	names := c.Names()
	assert.IsIncreasing(t, names)
	assert.Contains(t, names, "port")
	assert.Contains(t, names, "lua-time-limit")
	assert.NotContains(t, names, "busy-reply-threshold")
	assert.NotContains(t, names, "slaveof")
	for _, n := range names {
		assert.Len(t, c.Get(n), 1, n)
	}
}

func TestAccessorsCaseAndAliases(t *testing.T) {
	c := New()
	assert.Equal(t, int64(6379), c.Int("PORT"))
	assert.Equal(t, int64(5000), c.Int("busy-reply-threshold"))
	v := c.Var("Port")
	assert.Equal(t, "port", v.Name())
	require.NoError(t, c.Set([2]string{"port", "7000"}))
	assert.Equal(t, int64(7000), v.Int())
	assert.Equal(t, "7000", v.String())
	assert.Panics(t, func() { c.Int("no-such-directive") })
	name, ok := c.Canonical("SLAVEOF")
	assert.True(t, ok)
	assert.Equal(t, "replicaof", name)
	assert.True(t, c.Mutable("port"))
	assert.False(t, c.Mutable("cluster-enabled"))
	assert.False(t, c.Mutable("nope"))
}

func TestGetGlobs(t *testing.T) {
	c := New()
	got := c.Get("*max-*-entries")
	var names []string
	for _, kv := range got {
		names = append(names, kv[0])
	}
	assert.Equal(t, []string{"hash-max-listpack-entries", "hash-max-ziplist-entries",
		"set-max-intset-entries", "zset-max-listpack-entries", "zset-max-ziplist-entries"}, names)

	// several patterns, overlapping: each name once, sorted
	got = c.Get("port", "POR?", "cluster-port", "*port")
	names = nil
	for _, kv := range got {
		names = append(names, kv[0])
	}
	assert.IsIncreasing(t, names)
	assert.Contains(t, names, "port")
	assert.Contains(t, names, "cluster-port")
	assert.Contains(t, names, "cluster-announce-port")
	seen := map[string]int{}
	for _, n := range names {
		seen[n]++
	}
	for n, k := range seen {
		assert.Equal(t, 1, k, n)
	}

	// exact names are case-insensitive and reported in lower case
	assert.Equal(t, [][2]string{{"maxmemory", "0"}}, c.Get("MAXMEMORY"))
	assert.Empty(t, c.Get("nosuch"))
	assert.Empty(t, c.Get("nosuch*"))
	assert.Equal(t, [][2]string{{"replicaof", ""}}, c.Get("replicaof"))
	assert.Len(t, c.Get("*slaveof", "replicaof"), 2)
	assert.Equal(t, [][2]string{{"lua-time-limit", "5000"}}, c.Get("lua-time-limit"))
	assert.Len(t, c.Get("[lb]u*-t*"), 2)    // lua-time-limit, busy-reply-threshold
	assert.Len(t, c.Get("*"), len(c.all)-5) // the five hidden test knobs
	assert.Empty(t, c.Get())
}

func TestSetBasics(t *testing.T) {
	c := New()
	require.NoError(t, c.Set(
		[2]string{"Port", "7001"},
		[2]string{"maxmemory", "100mb"},
		[2]string{"loglevel", "WARNING"},
		[2]string{"appendonly", "YES"},
		[2]string{"save", ""},
		[2]string{"bind", "127.0.0.1 ::1"},
		[2]string{"hash-max-ziplist-entries", "64"},
		[2]string{"busy-reply-threshold", "100"},
		[2]string{"notify-keyspace-events", "KEA"},
		[2]string{"trace-actors", "Shard,cluster"},
	))
	assert.Equal(t, int64(7001), c.Int("port"))
	assert.Equal(t, "104857600", c.String("maxmemory"))
	assert.Equal(t, "warning", c.String("loglevel"))
	assert.True(t, c.Bool("appendonly"))
	assert.Equal(t, "", c.String("save"))
	assert.Empty(t, c.SaveParams())
	assert.Equal(t, "127.0.0.1 ::1", c.String("bind"))
	assert.Equal(t, int64(64), c.Int("hash-max-listpack-entries"))
	assert.Equal(t, "100", c.String("lua-time-limit"))
	assert.Equal(t, "AKE", c.String("notify-keyspace-events"))
	assert.Equal(t, int64(NotifyAll|NotifyKeyspace|NotifyKeyevent), c.Int("notify-keyspace-events"))
	assert.Equal(t, "shard cluster", c.String("trace-actors"))

	require.NoError(t, c.Set([2]string{"save", "900 1 300 10"}))
	assert.Equal(t, "900 1 300 10", c.String("save"))
	assert.Equal(t, []SaveParam{{900, 1}, {300, 10}}, c.SaveParams())

	require.NoError(t, c.Set([2]string{"notify-keyspace-events", "Egx$"}))
	assert.Equal(t, "g$xE", c.String("notify-keyspace-events"))
	require.NoError(t, c.Set([2]string{"notify-keyspace-events", ""}))
	assert.Equal(t, "", c.String("notify-keyspace-events"))

	// client-output-buffer-limit: only the given classes change
	require.NoError(t, c.Set([2]string{"client-output-buffer-limit", "pubsub 64mb 16mb 90 normal 1k 2kb 3"}))
	assert.Equal(t, "normal 1000 2048 3 slave 268435456 67108864 60 pubsub 67108864 16777216 90",
		c.String("client-output-buffer-limit"))
	require.NoError(t, c.Set([2]string{"client-output-buffer-limit", "replica 1gb 0 0"}))
	assert.Equal(t, BufferLimit{Hard: 1 << 30}, c.ClientOutputBufferLimits()[ClassReplica])

	// hz is clamped to 1..500 like Redis
	require.NoError(t, c.Set([2]string{"hz", "1000"}))
	assert.Equal(t, "500", c.String("hz"))
	require.NoError(t, c.Set([2]string{"hz", "0"}))
	assert.Equal(t, "1", c.String("hz"))
}

func TestMemoryUnits(t *testing.T) {
	c := New()
	for in, want := range map[string]string{
		"1k": "1000", "1kb": "1024", "1K": "1000", "1KB": "1024", "1m": "1000000", "1mb": "1048576",
		"1g": "1000000000", "1gb": "1073741824", "3GB": "3221225472", "123": "123", "0": "0", "5b": "5",
	} {
		require.NoError(t, c.Set([2]string{"maxmemory", in}), in)
		assert.Equal(t, want, c.String("maxmemory"), in)
		assert.Equal(t, want, getOne(t, c, "maxmemory"), in)
	}
	require.NoError(t, c.Set([2]string{"repl-backlog-size", "16mb"}))
	assert.Equal(t, int64(16<<20), c.Int("repl-backlog-size"))

	// non-memory ints don't take units
	err := c.Set([2]string{"port", "1k"})
	require.Error(t, err)
	assert.Equal(t, "ERR CONFIG SET failed (possibly related to argument 'port') - argument couldn't be parsed into an integer", err.Error())

	err = c.Set([2]string{"maxmemory", "10 mb"})
	require.Error(t, err)
	assert.Equal(t, "ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value", err.Error())
	err = c.Set([2]string{"maxmemory", "-1"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "argument must be a memory value")

	// bounds apply after the unit
	err = c.Set([2]string{"proto-max-bulk-len", "1k"})
	require.Error(t, err)
	assert.Equal(t, "ERR CONFIG SET failed (possibly related to argument 'proto-max-bulk-len') - argument must be between 1048576 and 9223372036854775807 inclusive", err.Error())
}

func TestSetErrors(t *testing.T) {
	c := New()
	cases := []struct {
		pairs [][2]string
		want  string
	}{
		{[][2]string{{"foo", "1"}}, "ERR Unknown option or number of arguments for CONFIG SET - 'foo'"},
		{[][2]string{{"port", "1"}, {"Foo", "1"}}, "ERR Unknown option or number of arguments for CONFIG SET - 'Foo'"},
		{[][2]string{{"port", "abc"}}, "ERR CONFIG SET failed (possibly related to argument 'port') - argument couldn't be parsed into an integer"},
		{[][2]string{{"PORT", "70000"}}, "ERR CONFIG SET failed (possibly related to argument 'port') - argument must be between 0 and 65535 inclusive"},
		{[][2]string{{"port", "-1"}}, "ERR CONFIG SET failed (possibly related to argument 'port') - argument must be between 0 and 65535 inclusive"},
		{[][2]string{{"port", "06379"}}, "ERR CONFIG SET failed (possibly related to argument 'port') - argument couldn't be parsed into an integer"},
		{[][2]string{{"maxclients", "0"}}, "ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument must be between 1 and 4294967295 inclusive"},
		{[][2]string{{"appendonly", "maybe"}}, "ERR CONFIG SET failed (possibly related to argument 'appendonly') - argument must be 'yes' or 'no'"},
		{[][2]string{{"slave-read-only", "1"}}, "ERR CONFIG SET failed (possibly related to argument 'slave-read-only') - argument must be 'yes' or 'no'"},
		{[][2]string{{"loglevel", "loud"}}, "ERR CONFIG SET failed (possibly related to argument 'loglevel') - argument(s) must be one of the following: debug, verbose, notice, warning, nothing"},
		{[][2]string{{"maxmemory-policy", "lru"}}, "ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy') - argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction"},
		{[][2]string{{"appendfsync", "sometimes"}}, "ERR CONFIG SET failed (possibly related to argument 'appendfsync') - argument(s) must be one of the following: everysec, always, no"},
		{[][2]string{{"cluster-enabled", "yes"}}, "ERR CONFIG SET failed (possibly related to argument 'cluster-enabled') - can't set immutable config"},
		{[][2]string{{"CLUSTER-ENABLED", "yes"}}, "ERR CONFIG SET failed (possibly related to argument 'CLUSTER-ENABLED') - can't set immutable config"},
		{[][2]string{{"databases", "4"}}, "ERR CONFIG SET failed (possibly related to argument 'databases') - can't set immutable config"},
		{[][2]string{{"shard-actors", "4"}}, "ERR CONFIG SET failed (possibly related to argument 'shard-actors') - can't set immutable config"},
		{[][2]string{{"slaveof", "127.0.0.1 6380"}}, "ERR CONFIG SET failed (possibly related to argument 'slaveof') - can't set immutable config"},
		{[][2]string{{"port", "1"}, {"port", "2"}}, "ERR CONFIG SET failed (possibly related to argument 'port') - duplicate parameter"},
		{[][2]string{{"save", "900"}}, "ERR CONFIG SET failed (possibly related to argument 'save') - Invalid save parameters"},
		{[][2]string{{"save", "0 1"}}, "ERR CONFIG SET failed (possibly related to argument 'save') - Invalid save parameters"},
		{[][2]string{{"save", "900 x"}}, "ERR CONFIG SET failed (possibly related to argument 'save') - Invalid save parameters"},
		{[][2]string{{"client-output-buffer-limit", "normal 0 0"}}, "ERR CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - Wrong number of arguments in buffer limit configuration."},
		{[][2]string{{"client-output-buffer-limit", "master 0 0 0"}}, "ERR CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - Invalid client class specified in buffer limit configuration."},
		{[][2]string{{"client-output-buffer-limit", "normal 1x 0 0"}}, "ERR CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - Error in hard, soft or soft_seconds setting in buffer limit configuration."},
		{[][2]string{{"notify-keyspace-events", "KEw"}}, "ERR CONFIG SET failed (possibly related to argument 'notify-keyspace-events') - Invalid event class character. Use 'Ag$lshzxeKEtmdn'."},
		{[][2]string{{"dbfilename", "a/b.rdb"}}, "ERR CONFIG SET failed (possibly related to argument 'dbfilename') - dbfilename can't be a path, just a filename"},
		{[][2]string{{"cluster-announce-hostname", "a_b"}}, "ERR CONFIG SET failed (possibly related to argument 'cluster-announce-hostname') - Hostnames may only contain alphanumeric characters, hyphens or dots"},
		{[][2]string{{"dir", "/no/such/dir/for/slotd"}}, "ERR CONFIG SET failed (possibly related to argument 'dir') - No such file or directory"},
		{[][2]string{{"trace-actors", "shard c*"}}, "ERR CONFIG SET failed (possibly related to argument 'trace-actors') - Invalid actor kind 'c*'"},
		{[][2]string{{"active-expire-effort", "11"}}, "ERR CONFIG SET failed (possibly related to argument 'active-expire-effort') - argument must be between 1 and 10 inclusive"},
		{[][2]string{{"slowlog-log-slower-than", "-2"}}, "ERR CONFIG SET failed (possibly related to argument 'slowlog-log-slower-than') - argument must be between -1 and 9223372036854775807 inclusive"},
		{nil, "ERR wrong number of arguments for 'config|set' command"},
	}
	for _, tc := range cases {
		before := c.Get("*")
		err := c.Set(tc.pairs...)
		require.Error(t, err, "%v", tc.pairs)
		assert.Equal(t, tc.want, err.Error())
		assert.Equal(t, before, c.Get("*"), "nothing applied for %v", tc.pairs)
	}

	// a file in place of a directory
	f := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(f, nil, 0o600))
	err := c.Set([2]string{"dir", f})
	require.Error(t, err)
	assert.Equal(t, "ERR CONFIG SET failed (possibly related to argument 'dir') - Not a directory", err.Error())
}

func TestSetAtomic(t *testing.T) {
	c := New()
	var fired []string
	c.OnChange("port", func(v string) { fired = append(fired, "port="+v) })
	err := c.Set([2]string{"port", "7000"}, [2]string{"maxmemory", "1gb"}, [2]string{"timeout", "abc"})
	require.Error(t, err)
	assert.Equal(t, "ERR CONFIG SET failed (possibly related to argument 'timeout') - argument couldn't be parsed into an integer", err.Error())
	assert.Equal(t, int64(6379), c.Int("port"))
	assert.Equal(t, int64(0), c.Int("maxmemory"))
	assert.Empty(t, fired)

	// immutable anywhere in the list rejects everything
	err = c.Set([2]string{"port", "7000"}, [2]string{"cluster-port", "17000"})
	require.Error(t, err)
	assert.Equal(t, "6379", c.String("port"))

	require.NoError(t, c.Set([2]string{"port", "7000"}, [2]string{"maxmemory", "1gb"}))
	assert.Equal(t, []string{"port=7000"}, fired)
	assert.Equal(t, int64(1<<30), c.Int("maxmemory"))
}

func TestOnChangeAndOnApply(t *testing.T) {
	c := New()
	var got []string
	c.OnChange("slave-read-only", func(v string) { got = append(got, "ro="+v) })
	c.OnChange("loglevel", func(v string) { got = append(got, "ll="+v) })
	require.NoError(t, c.Set([2]string{"replica-read-only", "no"}, [2]string{"loglevel", "Debug"}))
	assert.Equal(t, []string{"ro=no", "ll=debug"}, got)
	// fires even when unchanged
	got = nil
	require.NoError(t, c.Set([2]string{"loglevel", "debug"}))
	assert.Equal(t, []string{"ll=debug"}, got)

	// OnApply can refuse; earlier applies are undone; nothing is published
	var applied []string
	c.OnApply("port", func(v string) error { applied = append(applied, "port="+v); return nil })
	c.OnApply("timeout", func(v string) error {
		if v == "13" {
			return errors.New("Unable to do that. Check server logs.")
		}
		return nil
	})
	got = nil
	err := c.Set([2]string{"port", "7002"}, [2]string{"timeout", "13"}, [2]string{"loglevel", "warning"})
	require.Error(t, err)
	assert.Equal(t, "ERR CONFIG SET failed (possibly related to argument 'timeout') - Unable to do that. Check server logs.", err.Error())
	assert.Equal(t, []string{"port=7002", "port=6379"}, applied)
	assert.Equal(t, "6379", c.String("port"))
	assert.Equal(t, "0", c.String("timeout"))
	assert.Equal(t, "debug", c.String("loglevel"))
	assert.Empty(t, got)

	// OnApply only runs for changes
	applied = nil
	require.NoError(t, c.Set([2]string{"port", "6379"}))
	assert.Empty(t, applied)

	// hooks may read the config
	c.OnChange("maxmemory", func(v string) {
		assert.Equal(t, v, c.String("maxmemory"))
		assert.Equal(t, [][2]string{{"maxmemory", v}}, c.Get("maxmemory"))
	})
	require.NoError(t, c.Set([2]string{"maxmemory", "2mb"}))

	assert.Panics(t, func() { c.OnChange("nope", func(string) {}) })

	n := 0
	c.OnResetStat(func() { n++ })
	c.ResetStat()
	assert.Equal(t, 1, n)
}

func TestSetDir(t *testing.T) {
	c := New()
	d := t.TempDir()
	require.NoError(t, c.Set([2]string{"dir", d}))
	assert.Equal(t, d, c.String("dir"))

	// relative to the working directory, stored absolute
	t.Chdir(d)
	require.NoError(t, os.Mkdir("sub", 0o755))
	require.NoError(t, c.Set([2]string{"dir", "sub"}))
	abs, _ := filepath.Abs("sub")
	assert.Equal(t, abs, c.String("dir"))
	wd, _ := os.Getwd()
	assert.Equal(t, d, wd, "no chdir by default")

	// with SetChdir, the process follows
	c.SetChdir(true)
	other := t.TempDir()
	require.NoError(t, c.Set([2]string{"dir", other}))
	wd, _ = os.Getwd()
	assert.Equal(t, other, wd)

	// a failed Set after dir in the same call moves the process back
	err := c.Set([2]string{"dir", d}, [2]string{"port", "x"})
	require.Error(t, err)
	wd, _ = os.Getwd()
	assert.Equal(t, other, wd)
	assert.Equal(t, other, c.String("dir"))
}

func TestConcurrentUse(t *testing.T) {
	c := New()
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				_ = c.Set([2]string{"maxmemory", "1mb"}, [2]string{"hz", "20"})
				_ = c.Set([2]string{"maxmemory", "2mb"}, [2]string{"hz", "30"})
			}
		}()
		go func() {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				got := c.Get("maxmemory", "hz")
				if !assert.Len(t, got, 2) {
					return
				}
				// both values come from the same Set
				if got[0][1] == "20" {
					assert.Equal(t, "1048576", got[1][1])
				}
				_ = c.Int("maxmemory")
				_ = c.String("hz")
			}
		}()
	}
	wg.Wait()
}
