package node_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
	"github.com/slotd/slotd/netio/metrics"
)

// scrape fetches /metrics and parses it with Prometheus's text-format
// parser.
func scrape(t *testing.T, port int) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(port) + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return fams
}

// sum adds the values of the samples of a family whose labels include
// want ("name", "value", ...): counters, gauges, and histogram counts.
func sum(fams map[string]*dto.MetricFamily, name string, want ...string) (float64, int) {
	f := fams[name]
	if f == nil {
		return 0, 0
	}
	total, n := 0.0, 0
next:
	for _, m := range f.GetMetric() {
		for i := 0; i+1 < len(want); i += 2 {
			found := false
			for _, l := range m.GetLabel() {
				if l.GetName() == want[i] && l.GetValue() == want[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		n++
		switch {
		case m.Counter != nil:
			total += m.GetCounter().GetValue()
		case m.Gauge != nil:
			total += m.GetGauge().GetValue()
		case m.Histogram != nil:
			total += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return total, n
}

func TestMetricsPortIsOffByDefault(t *testing.T) {
	n := nodetest.Start(t)
	c := n.Client(t)
	v, err := c.ConfigGet(context.Background(), "metrics-port").Result()
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"metrics-port": "0"}, v)
	assert.Nil(t, n.Metrics)
}

// A cluster node with metrics-port under a redis-benchmark load: the
// counters of the shards, the clients and the actors move, the cluster
// and mailbox gauges are there.
func TestMetricsMoveUnderLoad(t *testing.T) {
	if _, err := exec.LookPath("redis-benchmark"); err != nil {
		t.Skip("redis-benchmark not installed")
	}
	mport := nodetest.FreePort(t)
	n := nodetest.Start(t, "cluster-enabled", "yes", "metrics-port", strconv.Itoa(mport))
	ctx := context.Background()
	c := n.Client(t)
	v, err := c.ConfigGet(ctx, "metrics-port").Result()
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(mport), v["metrics-port"])
	assert.ErrorContains(t, c.ConfigSet(ctx, "metrics-port", "0").Err(), "can't set immutable config")
	require.NoError(t, c.Do(ctx, "cluster", "addslotsrange", "0", "16383").Err())
	nodetest.Eventually(t, 10*time.Second, func() bool {
		return nodetest.InfoField(t, c, "cluster", "cluster_enabled") == "1" &&
			c.ClusterInfo(ctx).Val() != "" && c.Set(ctx, "probe", "1", 0).Err() == nil
	}, "the node serves every slot")

	before := scrape(t, mport)
	cmds0, _ := sum(before, "slotd_commands_processed_total")
	shard0, shards := sum(before, "slotd_shard_commands_total")
	handled0, _ := sum(before, "slotd_actor_handling_seconds", "kind", "shard")
	conns0, _ := sum(before, "slotd_connections_received_total")
	require.Positive(t, shards, "one series per shard")

	out, err := exec.Command("redis-benchmark", "-p", strconv.Itoa(n.Port), "-n", "20000", "-r", "5000",
		"-P", "16", "-t", "set,get", "-q").CombinedOutput()
	require.NoError(t, err, string(out))

	after := scrape(t, mport)
	cmds1, _ := sum(after, "slotd_commands_processed_total")
	shard1, _ := sum(after, "slotd_shard_commands_total")
	handled1, _ := sum(after, "slotd_actor_handling_seconds", "kind", "shard")
	conns1, _ := sum(after, "slotd_connections_received_total")
	keys, _ := sum(after, "slotd_shard_keys")
	sets, _ := sum(after, "slotd_command_calls_total", "cmd", "set")
	assert.GreaterOrEqual(t, cmds1-cmds0, 40000.0, "client commands counted")
	assert.GreaterOrEqual(t, shard1-shard0, 40000.0, "shard commands counted")
	assert.Greater(t, handled1, handled0, "shard handling times observed")
	assert.Greater(t, conns1, conns0, "benchmark connections counted")
	assert.GreaterOrEqual(t, sets, 20000.0)
	assert.Greater(t, keys, 1000.0, "keys the benchmark wrote")
	assert.LessOrEqual(t, keys, 5001.0)

	_, depths := sum(after, "slotd_actor_mailbox_depth", "kind", "shard")
	assert.Equal(t, shards, depths, "one mailbox gauge per shard actor")
	_, clusterBox := sum(after, "slotd_actor_mailbox_depth", "kind", "cluster")
	assert.Equal(t, 1, clusterBox)
	for name, want := range map[string]float64{"slotd_cluster_state_ok": 1, "slotd_cluster_known_nodes": 1,
		"slotd_cluster_size": 1, "slotd_cluster_scrape_ok": 1, "slotd_replication_is_replica": 0} {
		got, n := sum(after, name)
		assert.Equal(t, 1, n, name)
		assert.Equal(t, want, got, name)
	}
	slotsServed, _ := sum(after, "slotd_cluster_node_slots")
	assert.Equal(t, 16384.0, slotsServed)
	for _, name := range []string{"slotd_memory_used_bytes", "process_resident_memory_bytes", "slotd_connected_clients",
		"slotd_rdb_last_bgsave_ok", "slotd_aof_enabled", "slotd_replication_offset_bytes"} {
		_, n := sum(after, name)
		assert.Equal(t, 1, n, name)
	}
}

// A primary's metrics show its replica with offset and lag; the replica's
// show its link to the primary.
func TestMetricsReplication(t *testing.T) {
	ctx := context.Background()
	pport, rport := nodetest.FreePort(t), nodetest.FreePort(t)
	p := nodetest.Start(t, "metrics-port", strconv.Itoa(pport))
	r := nodetest.Start(t, "metrics-port", strconv.Itoa(rport))
	pc, rc := p.Client(t), r.Client(t)
	require.NoError(t, rc.SlaveOf(ctx, "127.0.0.1", strconv.Itoa(p.Port)).Err())
	for i := 0; i < 100; i++ {
		require.NoError(t, pc.Set(ctx, "k"+strconv.Itoa(i), "v", 0).Err())
	}
	nodetest.Eventually(t, 10*time.Second, func() bool {
		fams := scrape(t, pport)
		reps, _ := sum(fams, "slotd_replication_connected_replicas")
		lag, n := sum(fams, "slotd_replication_replica_lag_bytes")
		off, _ := sum(fams, "slotd_replication_replica_offset_bytes")
		return reps == 1 && n == 1 && lag == 0 && off > 0
	}, "the primary sees its replica caught up")
	fams := scrape(t, rport)
	isReplica, _ := sum(fams, "slotd_replication_is_replica")
	up, _ := sum(fams, "slotd_replication_primary_link_up")
	keys, _ := sum(fams, "slotd_shard_keys")
	assert.Equal(t, 1.0, isReplica)
	assert.Equal(t, 1.0, up)
	assert.Equal(t, 100.0, keys)
}

// The cluster page on the metrics port: one HTML document with no external
// assets, and its data, whose slot map equals CLUSTER SHARDS.
func TestClusterPage(t *testing.T) {
	mport := nodetest.FreePort(t)
	n := nodetest.Start(t, "cluster-enabled", "yes", "metrics-port", strconv.Itoa(mport), "trace-actors", "cluster")
	ctx := context.Background()
	c := n.Client(t)
	require.NoError(t, c.Do(ctx, "cluster", "addslotsrange", "0", "99").Err())
	require.NoError(t, c.Do(ctx, "cluster", "addslotsrange", "200", "16383").Err())
	require.NoError(t, c.Do(ctx, "cluster", "bumpepoch").Err()) // an event for the page
	base := "http://127.0.0.1:" + strconv.Itoa(mport)

	resp, err := http.Get(base + "/")
	require.NoError(t, err)
	page, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.Contains(t, string(page), "<canvas id=\"slots\"")
	for _, external := range []string{"src=", "<link", "http://", "https://", "@import"} {
		assert.NotContains(t, string(page), external, "the page loads nothing from elsewhere")
	}

	var v metrics.View
	nodetest.Eventually(t, 10*time.Second, func() bool {
		resp, err := http.Get(base + "/cluster.json")
		require.NoError(t, err)
		defer resp.Body.Close()
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&v))
		return len(v.Slots) == 2 && len(v.Events) > 0
	}, "the page's data shows the slots and the node's events")
	assert.False(t, v.StateOK, "slots 100-199 are not served: cluster_state fail")
	shards, err := c.ClusterShards(ctx).Result()
	require.NoError(t, err)
	var want [][3]int
	for _, sh := range shards {
		for _, sr := range sh.Slots {
			for i, node := range v.Nodes {
				if node.ID == sh.Nodes[0].ID {
					want = append(want, [3]int{int(sr.Start), int(sr.End), i})
				}
			}
		}
	}
	assert.Equal(t, want, v.Slots, "the slot map is CLUSTER SHARDS'")
	require.Len(t, v.Nodes, 1)
	assert.True(t, v.Nodes[0].Myself)
	assert.Equal(t, "primary", v.Nodes[0].Role)
	assert.Equal(t, 16284, v.Nodes[0].Slots)
}
