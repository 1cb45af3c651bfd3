package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

func loadErr(t *testing.T, err error) *LoadError {
	t.Helper()
	require.Error(t, err)
	var le *LoadError
	require.True(t, errors.As(err, &le), "%T %v", err, err)
	return le
}

func TestLoadFile(t *testing.T) {
	d := t.TempDir()
	inc := writeFile(t, d, "extra.conf", "maxmemory 2gb\ntimeout 30\n")
	writeFile(t, d, "a.part.conf", "tcp-keepalive 60\n")
	writeFile(t, d, "b.part.conf", "tcp-keepalive 61\n")
	conf := writeFile(t, d, "slotd.conf", strings.Join([]string{
		"# a comment",
		"   # an indented comment",
		"",
		"\t",
		"port 7000",
		"PORT 7001\r", // repeated (last wins), case-insensitive, CRLF
		`requirepass "pa ss\x21\n"`,
		`cluster-announce-hostname 'node-1.example'`,
		"bind 127.0.0.1 ::1",
		"save 900 1",
		"save 300 10", // save lines add up
		"loglevel WARNING",
		"cluster-enabled yes",
		"cluster-config-file nodes-7001.conf",
		"maxmemory 1mb",
		"include " + inc, // later value wins over the earlier maxmemory
		"include " + filepath.Join(d, "*.part.conf"),
		"include " + filepath.Join(d, "none-*.conf"), // no match is fine
		"client-output-buffer-limit normal 1mb 512kb 10",
		"client-output-buffer-limit pubsub 0 0 0",
		"hash-max-ziplist-entries 256",
		"list-max-ziplist-entries 512", // deprecated in Redis 7: ignored
	}, "\n"))

	c := New()
	var changed []string
	c.OnChange("port", func(v string) { changed = append(changed, v) })
	require.NoError(t, c.LoadFile(conf))
	assert.Equal(t, []string{"7001"}, changed, "OnChange fires once per load with the final value")
	assert.Equal(t, int64(7001), c.Int("port"))
	assert.Equal(t, "pa ss!\n", c.String("requirepass"))
	assert.Equal(t, "node-1.example", c.String("cluster-announce-hostname"))
	assert.Equal(t, "127.0.0.1 ::1", c.String("bind"))
	assert.Equal(t, "900 1 300 10", c.String("save"))
	assert.Equal(t, "warning", c.String("loglevel"))
	assert.True(t, c.Bool("cluster-enabled"))
	assert.Equal(t, "nodes-7001.conf", c.String("cluster-config-file"))
	assert.Equal(t, int64(2<<30), c.Int("maxmemory"))
	assert.Equal(t, int64(30), c.Int("timeout"))
	assert.Equal(t, int64(61), c.Int("tcp-keepalive"), "glob includes load in sorted order")
	assert.Equal(t, "normal 1048576 524288 10 slave 268435456 67108864 60 pubsub 0 0 0",
		c.String("client-output-buffer-limit"))
	assert.Equal(t, int64(256), c.Int("hash-max-listpack-entries"))
	abs, _ := filepath.Abs(conf)
	assert.Equal(t, abs, c.File())
}

func TestLoadFileQuotedMultiArg(t *testing.T) {
	d := t.TempDir()
	conf := writeFile(t, d, "q.conf", `save "900 1 60 5"`+"\n"+`bind "127.0.0.1 -::1"`+"\n"+`trace-actors shard cluster`+"\n")
	c := New()
	require.NoError(t, c.LoadFile(conf))
	assert.Equal(t, "900 1 60 5", c.String("save"))
	assert.Equal(t, "127.0.0.1 -::1", c.String("bind"))
	assert.Equal(t, "shard cluster", c.String("trace-actors"))

	conf = writeFile(t, d, "empty.conf", "save \"\"\nbind ''\n")
	require.NoError(t, c.LoadFile(conf))
	assert.Equal(t, "", c.String("save"))
	assert.Equal(t, "", c.String("bind"))
}

func TestLoadFileErrors(t *testing.T) {
	d := t.TempDir()
	cases := []struct {
		content   string
		line      int
		directive string
		msg       string
	}{
		{"port 7000\nfoo bar\n", 2, "foo", "unknown directive 'foo'"},
		{"# c\n\nport abc\n", 3, "port", "invalid value for 'port': 'abc' - argument couldn't be parsed into an integer"},
		{"port 99999", 1, "port", "invalid value for 'port': '99999' - argument must be between 0 and 65535 inclusive"},
		{"port 1 2", 1, "port", "wrong number of arguments for 'port'"},
		{"port", 1, "port", "wrong number of arguments for 'port'"},
		{"appendonly sure", 1, "appendonly", "invalid value for 'appendonly': 'sure' - argument must be 'yes' or 'no'"},
		{"loglevel loud", 1, "loglevel", "invalid value for 'loglevel': 'loud' - argument(s) must be one of the following: debug, verbose, notice, warning, nothing"},
		{"maxmemory lots", 1, "maxmemory", "invalid value for 'maxmemory': 'lots' - argument must be a memory value"},
		{"save 900", 1, "save", "invalid value for 'save': '900' - Invalid save parameters"},
		{`requirepass "abc`, 1, "", "Unbalanced quotes in configuration line"},
		{`save "900 '1"`, 1, "save", "invalid value for 'save': '900 '1' - Unbalanced quotes in configuration line"},
		{"dir /no/such/slotd/dir", 1, "dir", "invalid value for 'dir': '/no/such/slotd/dir' - No such file or directory"},
		{"include", 1, "include", "wrong number of arguments for 'include'"},
		{"port 7000 # trailing comment", 1, "port", "wrong number of arguments for 'port'"},
	}
	for _, tc := range cases {
		conf := writeFile(t, d, "bad.conf", tc.content)
		c := New()
		le := loadErr(t, c.LoadFile(conf))
		assert.Equal(t, conf, le.File, tc.content)
		assert.Equal(t, tc.line, le.Line, tc.content)
		assert.Equal(t, tc.directive, le.Directive, tc.content)
		assert.Equal(t, tc.msg, le.Msg, tc.content)
		out := le.Error()
		assert.Contains(t, out, "*** FATAL CONFIG FILE ERROR (slotd) ***")
		assert.Contains(t, out, "Reading the configuration file '"+conf+"', at line ")
		assert.Contains(t, out, ">>> '")
		assert.True(t, strings.HasSuffix(out, tc.msg), out)
		assert.Contains(t, le.Summary(), conf+":")
		assert.Equal(t, int64(6379), c.Int("port"), "nothing applied: %s", tc.content)
	}

	// the exact block
	conf := writeFile(t, d, "exact.conf", "port 7000\nport abc\n")
	le := loadErr(t, New().LoadFile(conf))
	assert.Equal(t, "\n*** FATAL CONFIG FILE ERROR (slotd) ***\n"+
		"Reading the configuration file '"+conf+"', at line 2\n"+
		">>> 'port abc'\n"+
		"invalid value for 'port': 'abc' - argument couldn't be parsed into an integer", le.Error())
	assert.Equal(t, conf+":2: invalid value for 'port': 'abc' - argument couldn't be parsed into an integer", le.Summary())

	// errors in an included file name that file and line
	inner := writeFile(t, d, "inner.conf", "\n\nhz nope\n")
	outer := writeFile(t, d, "outer.conf", "port 7000\ninclude "+inner+"\n")
	le = loadErr(t, New().LoadFile(outer))
	assert.Equal(t, inner, le.File)
	assert.Equal(t, 3, le.Line)
	assert.Equal(t, "hz", le.Directive)

	// missing files
	le = loadErr(t, New().LoadFile(filepath.Join(d, "missing.conf")))
	assert.Contains(t, le.Msg, "can't open config file '"+filepath.Join(d, "missing.conf")+"': No such file or directory")
	le = loadErr(t, New().LoadFile(writeFile(t, d, "inc-missing.conf", "include "+filepath.Join(d, "nope.conf"))))
	assert.Contains(t, le.Msg, "can't open config file")

	// include cycles end
	self := filepath.Join(d, "self.conf")
	writeFile(t, d, "self.conf", "include "+self+"\n")
	le = loadErr(t, New().LoadFile(self))
	assert.Contains(t, le.Msg, "include nesting too deep")

	// cluster mode and replicaof don't mix
	le = loadErr(t, New().LoadFile(writeFile(t, d, "repl.conf", "cluster-enabled yes\nreplicaof 127.0.0.1 6380\n")))
	assert.Equal(t, "replicaof directive not allowed in cluster mode", le.Msg)
}

func TestLoadArgs(t *testing.T) {
	d := t.TempDir()
	conf := writeFile(t, d, "slotd.conf", "port 7000\nsave 900 1\nsave 300 10\nloglevel debug\ncluster-enabled yes\n")
	c := New()
	var traced []string
	c.OnChange("trace-actors", func(v string) { traced = append(traced, v) })
	require.NoError(t, c.LoadArgs([]string{conf,
		"--port", "7001",
		"--save", "60 5", // adds to the file's save points, as in Redis 7.0
		"--save", "30", "2",
		"--bind", "127.0.0.1", "::1",
		"--requirepass", "a b",
		"--list-max-listpack-size", "-3", // a value starting with a single dash
		"--maxmemory 64mb", // name and value in one argument
		"--trace-actors", "shard cluster",
		"--Cluster-Node-Timeout", "5000",
	}))
	assert.Equal(t, int64(7001), c.Int("port"))
	assert.Equal(t, "900 1 300 10 60 5 30 2", c.String("save"))
	assert.Equal(t, "127.0.0.1 ::1", c.String("bind"))
	assert.Equal(t, "a b", c.String("requirepass"))
	assert.Equal(t, int64(-3), c.Int("list-max-listpack-size"))
	assert.Equal(t, int64(64<<20), c.Int("maxmemory"))
	assert.Equal(t, "debug", c.String("loglevel"))
	assert.True(t, c.Bool("cluster-enabled"))
	assert.Equal(t, int64(5000), c.Int("cluster-node-timeout"))
	assert.Equal(t, []string{"shard cluster"}, traced)
	abs, _ := filepath.Abs(conf)
	assert.Equal(t, abs, c.File())

	// --save with nothing (or --save "") clears the save points
	for _, args := range [][]string{
		{"--save", "", "--port", "7002"},
		{"--save", "--port", "7002"},
		{"--port", "7002", "--save"},
	} {
		c := New()
		require.NoError(t, c.LoadArgs(args), "%q", args)
		assert.Equal(t, "", c.String("save"), "%q", args)
		assert.Empty(t, c.SaveParams())
		assert.Equal(t, int64(7002), c.Int("port"))
	}

	// no file, no args
	c = New()
	require.NoError(t, c.LoadArgs(nil))
	assert.Equal(t, "", c.File())
	assert.Equal(t, int64(6379), c.Int("port"))

	// the nodetest harness's arguments
	c = New()
	require.NoError(t, c.LoadArgs([]string{"--port", "30001", "--bind", "127.0.0.1", "--dir", d,
		"--loglevel", "warning", "--save", "", "--cluster-enabled", "yes"}))
	assert.Equal(t, d, c.String("dir"))
	assert.Equal(t, "", c.String("save"))
}

func TestLoadArgsErrors(t *testing.T) {
	d := t.TempDir()
	conf := writeFile(t, d, "ok.conf", "port 7000\n")
	cases := []struct {
		args      []string
		directive string
		msg       string
		text      string
	}{
		{[]string{"--foo", "1"}, "foo", "unknown directive 'foo'", `foo "1"`},
		{[]string{conf, "--port", "abc"}, "port", "invalid value for 'port': 'abc' - argument couldn't be parsed into an integer", `port "abc"`},
		{[]string{"--port"}, "port", "wrong number of arguments for 'port'", "port"},
		{[]string{"--port", "1", "2"}, "port", "wrong number of arguments for 'port'", `port "1" "2"`},
		{[]string{"--daemonize", "maybe"}, "daemonize", "invalid value for 'daemonize': 'maybe' - argument must be 'yes' or 'no'", `daemonize "maybe"`},
		{[]string{"--appendfsync", "never"}, "appendfsync", "invalid value for 'appendfsync': 'never' - argument(s) must be one of the following: everysec, always, no", `appendfsync "never"`},
		{[]string{"--port", "7000", "stray"}, "port", "wrong number of arguments for 'port'", `port "7000" "stray"`},
		// A lone name's first value may start with "--" (Redis 7.0's rule).
		{[]string{"--port", "--loglevel", "verbose"}, "port", "wrong number of arguments for 'port'", `port "--loglevel" "verbose"`},
		{[]string{"--logfile", "--my--log--file", "--loglevel", "--bla"}, "loglevel",
			"invalid value for 'loglevel': '--bla' - argument(s) must be one of the following: debug, verbose, notice, warning, nothing",
			`loglevel "--bla"`},
	}
	for _, tc := range cases {
		c := New()
		le := loadErr(t, c.LoadArgs(tc.args))
		assert.Equal(t, tc.directive, le.Directive, "%q", tc.args)
		assert.Equal(t, tc.msg, le.Msg, "%q", tc.args)
		assert.Equal(t, tc.text, le.Text, "%q", tc.args)
		assert.Equal(t, "", le.File)
		assert.Equal(t, "\n*** FATAL CONFIG FILE ERROR (slotd) ***\nReading the command line arguments\n>>> '"+
			tc.text+"'\n"+tc.msg, le.Error())
		assert.Equal(t, "command line: "+tc.msg, le.Summary())
		assert.Equal(t, int64(6379), c.Int("port"), "nothing applied: %q", tc.args)
		assert.Equal(t, "", c.File())
	}

	// a bad file named first
	le := loadErr(t, New().LoadArgs([]string{filepath.Join(d, "nope.conf"), "--port", "1"}))
	assert.Contains(t, le.Msg, "can't open config file")

	// words before any option, after the file, are a config line of their
	// own (Redis 7.0): a stray word is an unknown directive, a directive
	// and its value load
	le = loadErr(t, New().LoadArgs([]string{conf, "stray"}))
	assert.Equal(t, "unknown directive 'stray'", le.Msg)
	c := New()
	require.NoError(t, c.LoadArgs([]string{conf, "loglevel", "verbose", "--maxmemory '700mb'"}))
	assert.Equal(t, "verbose", c.String("loglevel"))
	assert.Equal(t, int64(700<<20), c.Int("maxmemory"))

	// FatalMessage wraps any error
	assert.Contains(t, FatalMessage(errors.New("boom")), "*** FATAL CONFIG FILE ERROR (slotd) ***\nboom")
	assert.Equal(t, le.Error(), FatalMessage(le))
}

func TestLoadImmutableAndChdir(t *testing.T) {
	d := t.TempDir()
	c := New()
	// immutable directives load fine
	require.NoError(t, c.LoadArgs([]string{"--cluster-port", "17000", "--io-threads", "4",
		"--shard-actors", "8", "--event-loops", "2", "--replicaof", "10.0.0.1", "6380"}))
	assert.Equal(t, int64(17000), c.Int("cluster-port"))
	assert.Equal(t, int64(8), c.Int("shard-actors"))
	assert.Equal(t, "10.0.0.1 6380", c.String("slaveof"))
	require.NoError(t, c.LoadArgs([]string{"--replicaof", "no", "one"}))
	assert.Equal(t, "", c.String("replicaof"))

	// with SetChdir, dir moves the process, and a failed load moves it back
	start := t.TempDir()
	t.Chdir(start)
	c.SetChdir(true)
	require.NoError(t, c.LoadArgs([]string{"--dir", d}))
	wd, _ := os.Getwd()
	assert.Equal(t, d, wd)
	other := t.TempDir()
	_ = loadErr(t, c.LoadArgs([]string{"--dir", other, "--port", "x"}))
	wd, _ = os.Getwd()
	assert.Equal(t, d, wd)
	assert.Equal(t, d, c.String("dir"))
}

func TestRedisConfCompat(t *testing.T) {
	// a slice of a stock Redis 7 redis.conf loads
	d := t.TempDir()
	conf := writeFile(t, d, "redis.conf", `
bind 127.0.0.1 -::1
protected-mode yes
port 6379
tcp-backlog 511
timeout 0
tcp-keepalive 300
daemonize no
pidfile /var/run/redis_6379.pid
loglevel notice
logfile ""
databases 16
always-show-logo no
set-proc-title yes
proc-title-template "{title} {listen-addr} {server-mode}"
stop-writes-on-bgsave-error yes
rdbcompression yes
rdbchecksum yes
dbfilename dump.rdb
rdb-del-sync-files no
dir ./
replica-serve-stale-data yes
replica-read-only yes
repl-diskless-sync yes
repl-diskless-sync-delay 5
repl-diskless-sync-max-replicas 0
repl-diskless-load disabled
repl-disable-tcp-nodelay no
replica-priority 100
acllog-max-len 128
lazyfree-lazy-eviction no
lazyfree-lazy-expire no
lazyfree-lazy-server-del no
replica-lazy-flush no
lazyfree-lazy-user-del no
lazyfree-lazy-user-flush no
oom-score-adj no
oom-score-adj-values 0 200 800
disable-thp yes
appendonly no
appendfilename "appendonly.aof"
appenddirname "appendonlydir"
appendfsync everysec
no-appendfsync-on-rewrite no
auto-aof-rewrite-percentage 100
auto-aof-rewrite-min-size 64mb
aof-load-truncated yes
aof-use-rdb-preamble yes
aof-timestamp-enabled no
slowlog-log-slower-than 10000
slowlog-max-len 128
latency-monitor-threshold 0
notify-keyspace-events ""
hash-max-listpack-entries 128
hash-max-listpack-value 64
list-max-listpack-size -2
list-compress-depth 0
set-max-intset-entries 512
zset-max-listpack-entries 128
zset-max-listpack-value 64
hll-sparse-max-bytes 3000
stream-node-max-bytes 4096
stream-node-max-entries 100
activerehashing yes
client-output-buffer-limit normal 0 0 0
client-output-buffer-limit replica 256mb 64mb 60
client-output-buffer-limit pubsub 32mb 8mb 60
hz 10
dynamic-hz yes
aof-rewrite-incremental-fsync yes
rdb-save-incremental-fsync yes
jemalloc-bg-thread yes
`)
	c := New()
	require.NoError(t, c.LoadFile(conf))
	assert.Equal(t, "64", c.String("hash-max-ziplist-value"))
	assert.Equal(t, "67108864", c.String("auto-aof-rewrite-min-size"))
	assert.Equal(t, "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60",
		c.String("client-output-buffer-limit"))
	wd, _ := os.Getwd()
	assert.Equal(t, wd, c.String("dir"))
}
