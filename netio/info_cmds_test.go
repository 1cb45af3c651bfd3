package netio_test

import (
	"context"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// infoFields parses INFO text, checking its framing: CRLF line ends,
// "# Section" headers, one blank line between sections.
func infoFields(t *testing.T, text string) (sections []string, fields map[string]string) {
	t.Helper()
	fields = map[string]string{}
	require.True(t, strings.HasSuffix(text, "\r\n"), "ends in CRLF")
	require.NotContains(t, strings.ReplaceAll(text, "\r\n", ""), "\n", "bare LF")
	for i, block := range strings.Split(strings.TrimSuffix(text, "\r\n"), "\r\n\r\n") {
		lines := strings.Split(block, "\r\n")
		require.True(t, strings.HasPrefix(lines[0], "# "), "section %d starts with a header: %q", i, lines[0])
		sections = append(sections, lines[0][2:])
		for _, l := range lines[1:] {
			k, v, ok := strings.Cut(l, ":")
			require.True(t, ok, "field line %q", l)
			fields[k] = v
		}
	}
	return sections, fields
}

func infoOf(t *testing.T, c *redis.Client, sections ...string) (names []string, fields map[string]string) {
	t.Helper()
	s, err := c.Info(context.Background(), sections...).Result()
	require.NoError(t, err)
	return infoFields(t, s)
}

var defaultSections = []string{"Server", "Clients", "Memory", "Persistence", "Stats", "Replication", "CPU",
	"Modules", "Errorstats", "Cluster", "Keyspace"}

func TestInfoSections(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t)
	for _, proto := range []int{2, 3} {
		c := n.Client(t, proto)
		names, f := infoOf(t, c)
		require.Equal(t, defaultSections, names)
		require.Equal(t, "7.0.15", f["redis_version"])
		require.Equal(t, "standalone", f["redis_mode"])
		require.Equal(t, strconv.Itoa(n.Port), f["tcp_port"])
		require.Equal(t, "master", f["role"])
		require.Equal(t, "0", f["cluster_enabled"])
		require.Equal(t, "0", f["loading"])
		require.Equal(t, "0", f["aof_enabled"])
		require.Equal(t, "noeviction", f["maxmemory_policy"])
		require.Len(t, f["run_id"], 40)
		require.Len(t, f["master_replid"], 40)
		for _, k := range []string{"process_id", "uptime_in_seconds", "connected_clients", "maxclients",
			"used_memory", "used_memory_rss", "total_connections_received", "total_commands_processed",
			"instantaneous_ops_per_sec", "total_net_input_bytes", "total_net_output_bytes", "rejected_connections",
			"expired_keys", "evicted_keys", "keyspace_hits", "keyspace_misses", "total_error_replies",
			"connected_slaves", "master_repl_offset"} {
			_, err := strconv.ParseInt(f[k], 10, 64)
			require.NoError(t, err, "%s=%q", k, f[k])
		}
		require.Regexp(t, `^\d+\.\d{6}$`, f["used_cpu_user"])
		require.Regexp(t, `^\d+(\.\d\d)?[BKMGTPE]$`, f["used_memory_human"])

		names, _ = infoOf(t, c, "all")
		require.Equal(t, []string{"Server", "Clients", "Memory", "Persistence", "Stats", "Replication", "CPU",
			"Modules", "Commandstats", "Errorstats", "Latencystats", "Cluster", "Keyspace"}, names)
		everything, _ := infoOf(t, c, "everything")
		require.Equal(t, names, everything)
		names, _ = infoOf(t, c, "CLUSTER", "cpu")
		require.Equal(t, []string{"CPU", "Cluster"}, names, "Redis's order, whatever the request's")
		names, _ = infoOf(t, c, "default", "nosuch")
		require.Equal(t, defaultSections, names)
		s, err := c.Info(context.Background(), "nosuch").Result()
		require.NoError(t, err)
		require.Equal(t, "", s)
	}

	w := dialWire(t, n.Addr)
	require.Equal(t, "$12\r\n# Keyspace\r\n\r\n", w.do("INFO", "keyspace"))
	require.Equal(t, "$0\r\n\r\n", w.do("INFO", "nosuch"))
	w.do("HELLO", "3")
	require.Equal(t, "=16\r\ntxt:# Keyspace\r\n\r\n", w.do("INFO", "keyspace"))
	r := w.do("INFO", "server", "cluster")
	require.True(t, strings.HasPrefix(r, "="), r)
	require.Contains(t, r, "\r\n\r\n# Cluster\r\ncluster_enabled:0\r\n\r\n")

	// redis-cli finds INFO fields by substring and ends values at '\r': its
	// raw output must have CRLF line ends. Inline INFO works too.
	if cli, err := exec.LookPath("redis-cli"); err == nil {
		out, err := exec.Command(cli, "-p", strconv.Itoa(n.Port), "INFO", "server").Output()
		require.NoError(t, err)
		require.Contains(t, string(out), "# Server\r\nredis_version:7.0.15\r\n")
	}
	w2 := dialWire(t, n.Addr)
	w2.write("INFO cluster\r\n")
	require.Equal(t, "$30\r\n# Cluster\r\ncluster_enabled:0\r\n\r\n", w2.read())
}

var dbLineRE = regexp.MustCompile(`^keys=(\d+),expires=(\d+),avg_ttl=(\d+)$`)

// redis-cli --cluster create/add-node refuse a node whose INFO has a db0
// line, so it must appear only when there are keys.
func TestInfoKeyspace(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t, "shard-actors", "4")
	ctx := context.Background()
	c := n.Client(t, 2)
	s, err := c.Info(ctx).Result()
	require.NoError(t, err)
	require.NotContains(t, s, "db0:")

	require.NoError(t, c.Set(ctx, "k", "v", 0).Err())
	_, f := infoOf(t, c, "keyspace")
	require.Equal(t, "keys=1,expires=0,avg_ttl=0", f["db0"])

	// Keys over every shard, some volatile.
	for i := 0; i < 40; i++ {
		ttl := time.Duration(0)
		if i%4 == 0 {
			ttl = time.Hour
		}
		require.NoError(t, c.Set(ctx, "key:"+strconv.Itoa(i), "v", ttl).Err())
	}
	_, f = infoOf(t, c)
	m := dbLineRE.FindStringSubmatch(f["db0"])
	require.NotNil(t, m, f["db0"])
	require.Equal(t, "41", m[1])
	require.Equal(t, "10", m[2])
	avg, _ := strconv.ParseInt(m[3], 10, 64)
	require.InDelta(t, float64(time.Hour/time.Millisecond), float64(avg), float64(time.Minute/time.Millisecond))

	require.NoError(t, c.FlushAll(ctx).Err())
	s, err = c.Info(ctx, "keyspace").Result()
	require.NoError(t, err)
	require.Equal(t, "# Keyspace\r\n", s)
}

func TestInfoStatsAndResetStat(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t)
	ctx := context.Background()
	c := n.Client(t, 2)
	require.NoError(t, c.Set(ctx, "k", "v", 0).Err())
	require.NoError(t, c.Get(ctx, "k").Err())
	require.ErrorIs(t, c.Get(ctx, "missing").Err(), redis.Nil)
	require.Error(t, c.Do(ctx, "NOSUCHCOMMAND").Err())
	_, f := infoOf(t, c, "stats", "clients")
	require.Equal(t, "1", f["keyspace_hits"])
	require.Equal(t, "1", f["keyspace_misses"])
	require.Equal(t, "1", f["total_error_replies"])
	require.Equal(t, "1", f["connected_clients"])
	cmds, _ := strconv.Atoi(f["total_commands_processed"])
	require.GreaterOrEqual(t, cmds, 5)
	in, _ := strconv.Atoi(f["total_net_input_bytes"])
	require.Positive(t, in)

	require.NoError(t, c.ConfigResetStat(ctx).Err())
	_, f = infoOf(t, c, "stats")
	require.Equal(t, "0", f["keyspace_hits"])
	require.Equal(t, "0", f["keyspace_misses"])
	require.Equal(t, "0", f["total_error_replies"])
	// Only the INFO just sent counts.
	require.Equal(t, "1", f["total_commands_processed"])
}
