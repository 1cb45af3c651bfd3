package cluster_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
	"github.com/slotd/slotd/slots"
)

// Tests of the cluster bus as clients see it: in-process nodes that meet
// over real TCP bus links.

// formCluster starts n nodes, gives node i an even share of the slots and a
// distinct config epoch, meets them all with node 0 and waits until every
// node knows every other and reports cluster_state:ok.
func formCluster(t *testing.T, n int, directives ...string) []*nodetest.Node {
	t.Helper()
	var nodes []*nodetest.Node
	for i := 0; i < n; i++ {
		nd := startCluster(t, directives...)
		c := nd.Client(t, 2)
		lo, hi := i*slots.NumSlots/n, (i+1)*slots.NumSlots/n-1
		require.NoError(t, c.Do(ctx, "cluster", "addslotsrange", lo, hi).Err())
		require.NoError(t, c.Do(ctx, "cluster", "set-config-epoch", i+1).Err())
		nodes = append(nodes, nd)
	}
	for _, nd := range nodes[1:] {
		require.Equal(t, "OK", nd.Client(t, 2).ClusterMeet(ctx, "127.0.0.1", strconv.Itoa(nodes[0].Port)).Val())
	}
	waitOK(t, nodes...)
	return nodes
}

// waitOK waits until every node knows all the others, sees them connected
// and reports cluster_state:ok.
func waitOK(t *testing.T, nodes ...*nodetest.Node) {
	t.Helper()
	for _, nd := range nodes {
		c := nd.Client(t, 2)
		nodetest.Eventually(t, 20*time.Second, func() bool {
			info, err := c.ClusterInfo(ctx).Result()
			if err != nil || infoField(info, "cluster_state") != "ok" ||
				infoField(info, "cluster_known_nodes") != strconv.Itoa(len(nodes)) {
				return false
			}
			text, err := c.ClusterNodes(ctx).Result()
			return err == nil && !strings.Contains(text, "disconnected") && !strings.Contains(text, "handshake")
		}, "cluster formed, seen from "+nd.Addr)
	}
}

func TestMeetFormsCluster(t *testing.T) {
	t.Parallel()
	nodes := formCluster(t, 3)
	ids := make([]string, len(nodes))
	for i, nd := range nodes {
		ids[i] = nd.Client(t, 2).ClusterMyID(ctx).Val()
	}

	// Every node prints the same lines for the same nodes, apart from the
	// myself flag and the ping/pong times.
	canon := func(text string) []string {
		var out []string
		for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
			f := strings.Fields(l)
			require.GreaterOrEqual(t, len(f), 9, l)
			f[2] = strings.TrimPrefix(f[2], "myself,")
			f[4], f[5] = "-", "-"
			out = append(out, strings.Join(f, " "))
		}
		return out
	}
	want := canon(nodes[0].Client(t, 2).ClusterNodes(ctx).Val())
	for i, nd := range nodes {
		text := nd.Client(t, 2).ClusterNodes(ctx).Val()
		assert.ElementsMatch(t, want, canon(text), "node %d", i)
		assert.Regexp(t, "(?m)^"+ids[i]+" 127.0.0.1:"+strconv.Itoa(nd.Port)+"@"+strconv.Itoa(nd.Port+10000)+
			" (myself,)?master - \\d+ \\d+ "+strconv.Itoa(i+1)+" connected "+
			strconv.Itoa(i*slots.NumSlots/3)+"-"+strconv.Itoa((i+1)*slots.NumSlots/3-1)+"$", text)
	}

	// CLUSTER SLOTS and SHARDS list the three masters everywhere.
	for _, proto := range []int{2, 3} {
		sl, err := nodes[1].Client(t, proto).ClusterSlots(ctx).Result()
		require.NoError(t, err)
		require.Len(t, sl, 3)
		for i, r := range sl {
			assert.Equal(t, i*slots.NumSlots/3, int(r.Start))
			assert.Equal(t, []redis.ClusterNode{{ID: ids[i], Addr: nodes[i].Addr, NetworkingMetadata: map[string]string{}}},
				r.Nodes)
		}
		shards, err := nodes[2].Client(t, proto).ClusterShards(ctx).Result()
		require.NoError(t, err)
		assert.Len(t, shards, 3)
	}

	// A keyed command on the wrong node gets MOVED to the owner; a
	// ClusterClient follows.
	k := keyInSlot(slots.NumSlots - 1)
	err := nodes[0].Client(t, 2).Set(ctx, k, "v", 0).Err()
	require.Error(t, err)
	assert.Equal(t, "MOVED 16383 "+nodes[2].Addr, err.Error())
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{nodes[0].Addr}})
	defer cc.Close()
	for i := 0; i < 300; i++ {
		require.NoError(t, cc.Set(ctx, "cc:"+strconv.Itoa(i), i, 0).Err())
	}
	for _, nd := range nodes {
		assert.Positive(t, nd.Client(t, 2).DBSize(ctx).Val())
	}

	// Bus counters are reported.
	info := nodes[0].Client(t, 2).ClusterInfo(ctx).Val()
	assert.Equal(t, "3", infoField(info, "cluster_size"))
	assert.Equal(t, "3", infoField(info, "cluster_current_epoch"))
	assert.Equal(t, "1", infoField(info, "cluster_my_epoch"))
	for _, f := range []string{"cluster_stats_messages_ping_sent", "cluster_stats_messages_pong_received",
		"cluster_stats_messages_meet_received", "cluster_stats_messages_sent", "cluster_stats_messages_received"} {
		n, err := strconv.Atoi(infoField(info, f))
		require.NoError(t, err, f)
		assert.Positive(t, n, f)
	}
	assert.Equal(t, "0", infoField(info, "total_cluster_links_buffer_limit_exceeded"))
}

func TestLinks(t *testing.T) {
	t.Parallel()
	nodes := formCluster(t, 2)
	peerID := nodes[1].Client(t, 2).ClusterMyID(ctx).Val()
	rc := dialRaw(t, nodes[0].Addr)
	now := time.Now().UnixMilli()
	row := regexp.MustCompile(`^\*\[\$"direction" \$"(to|from)" \$"node" \$"` + peerID +
		`" \$"create-time" :(\d+) \$"events" \$"rw?" \$"send-buffer-allocated" :\d+ \$"send-buffer-used" :\d+\]$`)
	check := func(v val, mapType byte) {
		t.Helper()
		require.Equal(t, byte('*'), v.T)
		require.Len(t, v.Elems, 2, "one link each way: %s", v)
		var dirs []string
		for _, e := range v.Elems {
			require.Equal(t, mapType, e.T)
			s := "*" + e.String()[1:]
			m := row.FindStringSubmatch(s)
			require.NotNil(t, m, s)
			dirs = append(dirs, m[1])
			ct, _ := strconv.ParseInt(m[2], 10, 64)
			assert.InDelta(t, now, ct, 60000)
		}
		assert.ElementsMatch(t, []string{"to", "from"}, dirs)
	}
	// Each node's inbound link is listed once a frame on it named its
	// sender.
	nodetest.Eventually(t, 10*time.Second, func() bool { return len(rc.do("cluster", "links").Elems) == 2 },
		"both links listed")
	check(rc.do("cluster", "links"), '*')
	rc.do("hello", "3")
	check(rc.do("cluster", "links"), '%')
	assert.Equal(t, `-"ERR wrong number of arguments for 'cluster|links' command"`, rc.do("cluster", "links", "x").String())
}

func TestMovedEndpointForms(t *testing.T) {
	t.Parallel()
	// Node 1 is reachable on ::1 too, so its links stay up once it
	// announces that address.
	nodes := formCluster(t, 2, "bind", "127.0.0.1 ::1")
	c0 := nodes[0].Client(t, 2)
	k := keyInSlot(slots.NumSlots - 1) // served by node 1
	moved := func() string {
		err := c0.Get(ctx, k).Err()
		require.Error(t, err)
		return err.Error()
	}
	port1 := strconv.Itoa(nodes[1].Port)
	assert.Equal(t, "MOVED 16383 127.0.0.1:"+port1, moved())

	// Hostname mode without a hostname: "?"; unknown-endpoint: empty.
	// (CONFIG SET reaches the cluster actor asynchronously.)
	require.NoError(t, c0.ConfigSet(ctx, "cluster-preferred-endpoint-type", "hostname").Err())
	nodetest.Eventually(t, 5*time.Second, func() bool { return moved() == "MOVED 16383 ?:"+port1 }, "? endpoint")
	require.NoError(t, c0.ConfigSet(ctx, "cluster-preferred-endpoint-type", "unknown-endpoint").Err())
	nodetest.Eventually(t, 5*time.Second, func() bool { return moved() == "MOVED 16383 :"+port1 }, "empty endpoint")

	// A hostname announced by node 1 reaches node 0 over the bus.
	require.NoError(t, nodes[1].Client(t, 2).ConfigSet(ctx, "cluster-announce-hostname", "node-b.example").Err())
	require.NoError(t, c0.ConfigSet(ctx, "cluster-preferred-endpoint-type", "hostname").Err())
	nodetest.Eventually(t, 20*time.Second, func() bool {
		return c0.Get(ctx, k).Err().Error() == "MOVED 16383 node-b.example:"+port1
	}, "hostname gossiped")

	// An IPv6 endpoint is printed bare, as Redis does ("::1:port").
	require.NoError(t, c0.ConfigSet(ctx, "cluster-preferred-endpoint-type", "ip").Err())
	require.NoError(t, nodes[1].Client(t, 2).ConfigSet(ctx, "cluster-announce-ip", "::1").Err())
	nodetest.Eventually(t, 20*time.Second, func() bool {
		return c0.Get(ctx, k).Err().Error() == "MOVED 16383 ::1:"+port1
	}, "IPv6 address gossiped")
	line := regexp.MustCompile("(?m) ::1:" + port1 + "@" + strconv.Itoa(nodes[1].Port+10000) +
		",node-b.example master .* connected ")
	nodetest.Eventually(t, 20*time.Second, func() bool { return line.MatchString(c0.ClusterNodes(ctx).Val()) },
		"node 0 linked to node 1's IPv6 address")
}

func TestForgetAndReset(t *testing.T) {
	t.Parallel()
	nodes := formCluster(t, 3)
	c0, c1 := nodes[0].Client(t, 2), nodes[1].Client(t, 2)
	id0 := c0.ClusterMyID(ctx).Val()
	id2 := nodes[2].Client(t, 2).ClusterMyID(ctx).Val()

	assert.Equal(t, int64(0), c0.ClusterCountFailureReports(ctx, id2).Val())
	err := c0.ClusterCountFailureReports(ctx, "nosuch").Err()
	require.Error(t, err)
	assert.Equal(t, "ERR Unknown node nosuch", err.Error())
	assert.Equal(t, []string{}, c0.ClusterSlaves(ctx, id2).Val())
	assert.Equal(t, "ERR I tried hard but I can't forget myself...", c0.ClusterForget(ctx, id0).Err().Error())

	// Node 0 forgets node 2; node 1 still knows it but its gossip must
	// not bring it back during the 60 s ban.
	require.NoError(t, c0.ClusterForget(ctx, id2).Err())
	assert.NotContains(t, c0.ClusterNodes(ctx).Val(), id2)
	received := func() int {
		n, _ := strconv.Atoi(infoField(c0.ClusterInfo(ctx).Val(), "cluster_stats_messages_received"))
		return n
	}
	start := received()
	nodetest.Eventually(t, 20*time.Second, func() bool { return received() >= start+4 }, "more bus traffic")
	assert.NotContains(t, c0.ClusterNodes(ctx).Val(), id2, "forgotten node re-added during its ban")
	assert.Equal(t, "2", infoField(c0.ClusterInfo(ctx).Val(), "cluster_known_nodes"))
	err = c0.ClusterForget(ctx, id2).Err()
	require.Error(t, err)
	assert.Equal(t, "ERR Unknown node "+id2, err.Error())

	// A master holding keys refuses RESET; emptied, it forgets everyone.
	k := keyInSlot(slots.NumSlots / 2) // node 1's
	require.NoError(t, c1.Set(ctx, k, "v", 0).Err())
	for _, mode := range []string{"soft", "hard"} {
		err := c1.Do(ctx, "cluster", "reset", mode).Err()
		require.Error(t, err)
		assert.Equal(t, "ERR CLUSTER RESET can't be called with master nodes containing keys", err.Error())
	}
	require.NoError(t, c1.FlushAll(ctx).Err())
	id1 := c1.ClusterMyID(ctx).Val()
	require.NoError(t, c1.ClusterResetHard(ctx).Err())
	newID := c1.ClusterMyID(ctx).Val()
	assert.NotEqual(t, id1, newID)
	info := c1.ClusterInfo(ctx).Val()
	assert.Equal(t, "1", infoField(info, "cluster_known_nodes"))
	assert.Equal(t, "0", infoField(info, "cluster_current_epoch"))
	assert.Equal(t, "0", infoField(info, "cluster_slots_assigned"))
	assert.Equal(t, newID+" :"+strconv.Itoa(nodes[1].Port)+"@"+strconv.Itoa(nodes[1].Port+10000)+
		" myself,master - 0 0 0 connected\n", strings.Replace(c1.ClusterNodes(ctx).Val(), "127.0.0.1", "", 1))
	// The links to the others are gone.
	assert.Empty(t, c1.ClusterLinks(ctx).Val())
}

// TestClusterCommandsInMulti runs membership subcommands inside MULTI, as
// redis-cli --cluster fix does.
func TestClusterCommandsInMulti(t *testing.T) {
	t.Parallel()
	n := startCluster(t)
	rc := dialRaw(t, n.Addr)
	id := rc.do("cluster", "myid").S
	assert.Equal(t, `+"OK"`, rc.do("multi").String())
	for _, cmd := range [][]string{
		{"cluster", "addslots", "1"}, {"cluster", "bumpepoch"}, {"cluster", "bumpepoch"}, {"cluster", "saveconfig"},
		{"cluster", "set-config-epoch", "9"}, {"cluster", "count-failure-reports", id}, {"cluster", "links"},
		{"cluster", "replicas", id},
	} {
		assert.Equal(t, `+"QUEUED"`, rc.do(cmd...).String(), "%v", cmd)
	}
	assert.Equal(t, `*[+"OK" +"BUMPED 1" +"STILL 1" +"OK" -"ERR Node config epoch is already non-zero" :0 *[] *[]]`,
		rc.do("exec").String())
}
