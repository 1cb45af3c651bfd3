package config

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testdata/redis-7.0.15-defaults.tsv is what `CONFIG GET *` (plus the
// hidden test knobs, asked by name) answers on a redis-server 7.0.15
// started with no config file: every directive name and its default.

// slotdOnly are slotd's own directives.
var slotdOnly = map[string]bool{"shard-actors": true, "event-loops": true, "trace-actors": true, "trace-ring-size": true, "metrics-port": true, "go-memory-limit": true, "script-memory-limit": true,
	"cluster-quorum-timeout": true}

// defaultsDiffer are defaults slotd deliberately does not share: dir is
// the working directory in both but differs between the two processes.
var defaultsDiffer = map[string]bool{"dir": true}

func redisDefaults(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("testdata/redis-7.0.15-defaults.tsv")
	require.NoError(t, err)
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		name, val, ok := strings.Cut(line, "\t")
		require.True(t, ok, line)
		out[name] = val
	}
	return out
}

func TestEveryRedisDirectiveIsKnownWithItsDefault(t *testing.T) {
	c := New()
	want := redisDefaults(t)
	require.Len(t, want, 197)
	for name, def := range want {
		got := c.Get(name)
		if !assert.Len(t, got, 1, "directive %s unknown to slotd", name) {
			continue
		}
		if !defaultsDiffer[name] {
			assert.Equal(t, def, got[0][1], "default of %s", name)
		}
	}
	for _, kv := range c.Get("*") {
		if !slotdOnly[kv[0]] {
			assert.Contains(t, want, kv[0], "slotd knows %s, Redis 7.0.15 does not", kv[0])
		}
	}
}

func TestHiddenDirectivesOnlyByExactName(t *testing.T) {
	c := New()
	for _, kv := range c.Get("*") {
		assert.NotEqual(t, "key-load-delay", kv[0])
	}
	assert.Empty(t, c.Get("key-load-*"))
	assert.Equal(t, [][2]string{{"key-load-delay", "0"}}, c.Get("key-load-delay"))
	assert.Equal(t, [][2]string{{"loading-process-events-interval-bytes", "2097152"}},
		c.Get("LOADING-process-events-interval-bytes"))
	require.NoError(t, c.Set([2]string{"key-load-delay", "-10"}, [2]string{"rdb-key-save-delay", "100"},
		[2]string{"loading-process-events-interval-bytes", "1024"}))
	assert.Equal(t, int64(-10), c.Int("key-load-delay"))
	assert.EqualError(t, c.Set([2]string{"loading-process-events-interval-bytes", "1023"}),
		"ERR CONFIG SET failed (possibly related to argument 'loading-process-events-interval-bytes') - argument must be between 1024 and 2147483647 inclusive")
}

func TestShutdownOnSigFlags(t *testing.T) {
	c := New()
	require.NoError(t, c.Set([2]string{"shutdown-on-sigterm", "force NOW"}))
	assert.Equal(t, "now force", c.String("shutdown-on-sigterm"))
	assert.Equal(t, int64(ShutdownNow|ShutdownForce), c.Int("shutdown-on-sigterm"))
	require.NoError(t, c.Set([2]string{"shutdown-on-sigterm", "default"}))
	assert.Equal(t, "default", c.String("shutdown-on-sigterm"))
	assert.EqualError(t, c.Set([2]string{"shutdown-on-sigint", "save nosave"}),
		"ERR CONFIG SET failed (possibly related to argument 'shutdown-on-sigint') - shutdown options SAVE and NOSAVE can't be used simultaneously")
	assert.EqualError(t, c.Set([2]string{"shutdown-on-sigint", "later"}),
		"ERR CONFIG SET failed (possibly related to argument 'shutdown-on-sigint') - argument(s) must be one of the following: default, save, nosave, now, force, failover")
	require.NoError(t, c.Set([2]string{"shutdown-on-sigterm", "failover NOSAVE"}))
	assert.Equal(t, "nosave failover", c.String("shutdown-on-sigterm"))
	assert.Equal(t, int64(ShutdownNoSave|ShutdownFailover), c.Int("shutdown-on-sigterm"))
}

func TestPercentAndOctalDirectives(t *testing.T) {
	c := New()
	require.NoError(t, c.Set([2]string{"maxmemory-clients", "10%"}))
	assert.Equal(t, "10%", c.String("maxmemory-clients"))
	require.NoError(t, c.Set([2]string{"maxmemory-clients", "1mb"}))
	assert.Equal(t, "1048576", c.String("maxmemory-clients"))
	assert.EqualError(t, c.Set([2]string{"maxmemory-clients", "101%"}),
		"ERR CONFIG SET failed (possibly related to argument 'maxmemory-clients') - percentage argument must be less or equal to 100")
	require.NoError(t, c.LoadArgs([]string{"--unixsocketperm", "700"}))
	assert.Equal(t, "700", c.String("unixsocketperm"))
	assert.Equal(t, int64(0o700), c.Int("unixsocketperm"))
}
