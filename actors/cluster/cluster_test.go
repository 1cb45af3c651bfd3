package cluster_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node"
	"github.com/slotd/slotd/cmd/node/nodetest"
	"github.com/slotd/slotd/netio/config"
	"github.com/slotd/slotd/slots"
)

var ctx = context.Background()

func startCluster(t *testing.T, directives ...string) *nodetest.Node {
	t.Helper()
	return nodetest.Start(t, append([]string{"cluster-enabled", "yes"}, directives...)...)
}

func allSlotArgs() []any {
	out := []any{"cluster", "addslots"}
	for i := 0; i < slots.NumSlots; i++ {
		out = append(out, i)
	}
	return out
}

func infoField(info, field string) string {
	for _, l := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			return v
		}
	}
	return ""
}

var hexID = regexp.MustCompile(`^[0-9a-f]{40}$`)

func TestFreshNode(t *testing.T) {
	t.Parallel()
	n := startCluster(t)
	for _, proto := range []int{2, 3} {
		c := n.Client(t, proto)
		info, err := c.ClusterInfo(ctx).Result()
		require.NoError(t, err)
		assert.Equal(t, "fail", infoField(info, "cluster_state"))
		assert.Equal(t, "1", infoField(info, "cluster_known_nodes"))
		assert.Equal(t, "0", infoField(info, "cluster_slots_assigned"))

		id, err := c.ClusterMyID(ctx).Result()
		require.NoError(t, err)
		assert.Regexp(t, hexID, id)
		shard, err := c.ClusterMyShardID(ctx).Result()
		require.NoError(t, err)
		assert.Regexp(t, hexID, shard)
		assert.NotEqual(t, id, shard)

		nodes, err := c.ClusterNodes(ctx).Result()
		require.NoError(t, err)
		// A node that met no one does not know its own ip (as Redis).
		assert.Equal(t, id+" :"+strconv.Itoa(n.Port)+"@"+strconv.Itoa(n.Port+10000)+
			" myself,master - 0 0 0 connected\n", nodes)

		err = c.Get(ctx, "foo").Err()
		require.Error(t, err)
		assert.Equal(t, "CLUSTERDOWN Hash slot not served", err.Error())

		sl, err := c.ClusterSlots(ctx).Result()
		require.NoError(t, err)
		assert.Empty(t, sl)
	}
	conf, err := os.ReadFile(filepath.Join(n.Dir, "nodes.conf"))
	require.NoError(t, err)
	id := n.Client(t).ClusterMyID(ctx).Val()
	assert.True(t, strings.HasPrefix(string(conf), id+" :"+strconv.Itoa(n.Port)+"@"), "%s", conf)
	assert.True(t, strings.HasSuffix(string(conf), "\nvars currentEpoch 0 lastVoteEpoch 0\n"), "%s", conf)
}

func TestAddSlotsServeDelSlots(t *testing.T) {
	t.Parallel()
	n := startCluster(t)
	c := n.Client(t)
	// One argument per slot, as redis-cli --cluster create sends it.
	require.NoError(t, c.Do(ctx, allSlotArgs()...).Err())
	info := c.ClusterInfo(ctx).Val()
	assert.Equal(t, "ok", infoField(info, "cluster_state"))
	assert.Equal(t, "16384", infoField(info, "cluster_slots_assigned"))
	assert.Equal(t, "1", infoField(info, "cluster_size"))

	require.NoError(t, c.Set(ctx, "foo", "bar", 0).Err())
	assert.Equal(t, "bar", c.Get(ctx, "foo").Val())
	require.NoError(t, c.MSet(ctx, "{u}a", "1", "{u}b", "2").Err())
	assert.Equal(t, []any{"1", "2"}, c.MGet(ctx, "{u}a", "{u}b").Val())
	err := c.MGet(ctx, "a", "b").Err()
	require.Error(t, err)
	assert.Equal(t, "CROSSSLOT Keys in request don't hash to the same slot", err.Error())

	for _, cmd := range []struct {
		args []any
		err  string
	}{
		{[]any{"cluster", "addslots", "0"}, "ERR Slot 0 is already busy"},
		{[]any{"cluster", "addslots", "16384"}, "ERR Invalid or out of range slot"},
		{[]any{"cluster", "addslots", "-1"}, "ERR Invalid or out of range slot"},
		{[]any{"cluster", "addslots", "abc"}, "ERR Invalid or out of range slot"},
		{[]any{"cluster", "addslotsrange", "5", "4"}, "ERR start slot number 5 is greater than end slot number 4"},
		{[]any{"cluster", "addslotsrange", "1", "2", "3"}, "ERR wrong number of arguments for 'cluster|addslotsrange' command"},
		{[]any{"cluster", "addslots"}, "ERR wrong number of arguments for 'cluster|addslots' command"},
		{[]any{"cluster", "delslots", "5", "5"}, "ERR Slot 5 specified multiple times"},
		{[]any{"cluster", "flushslots"}, "ERR DB must be empty to perform CLUSTER FLUSHSLOTS."},
		{[]any{"cluster", "nosuch"}, "ERR unknown subcommand 'nosuch'. Try CLUSTER HELP."},
		{[]any{"cluster", "info", "x"}, "ERR wrong number of arguments for 'cluster|info' command"},
	} {
		err := c.Do(ctx, cmd.args...).Err()
		require.Error(t, err, "%v", cmd.args)
		assert.Equal(t, cmd.err, err.Error(), "%v", cmd.args)
	}

	// Unassigning the slot of "foo" brings the cluster down.
	foo := strconv.Itoa(slots.HashSlotString("foo"))
	require.NoError(t, c.Do(ctx, "cluster", "delslots", foo).Err())
	err = c.Do(ctx, "cluster", "delslots", foo).Err()
	require.Error(t, err)
	assert.Equal(t, "ERR Slot "+foo+" is already unassigned", err.Error())
	assert.Equal(t, "fail", infoField(c.ClusterInfo(ctx).Val(), "cluster_state"))
	err = c.Get(ctx, "foo").Err()
	require.Error(t, err)
	assert.Equal(t, "CLUSTERDOWN Hash slot not served", err.Error())
	err = c.Get(ctx, "{u}a").Err()
	require.Error(t, err)
	assert.Equal(t, "CLUSTERDOWN The cluster is down", err.Error())
	// Keys stay where they are: COUNTKEYSINSLOT still sees foo.
	assert.Equal(t, int64(1), c.ClusterCountKeysInSlot(ctx, int(slots.HashSlotString("foo"))).Val())

	// Reads when down, once allowed.
	require.NoError(t, c.ConfigSet(ctx, "cluster-allow-reads-when-down", "yes").Err())
	nodetest.Eventually(t, 5*time.Second, func() bool { return c.Get(ctx, "{u}a").Val() == "1" }, "reads allowed when down")
	err = c.Set(ctx, "{u}a", "x", 0).Err()
	require.Error(t, err)
	assert.Equal(t, "CLUSTERDOWN The cluster is down and only accepts read commands", err.Error())

	// Without full coverage the node is ok again.
	require.NoError(t, c.ConfigSet(ctx, "cluster-require-full-coverage", "no").Err())
	nodetest.Eventually(t, 5*time.Second, func() bool {
		return infoField(c.ClusterInfo(ctx).Val(), "cluster_state") == "ok"
	}, "state ok without full coverage")
	require.NoError(t, c.Set(ctx, "{u}a", "x", 0).Err())

	require.NoError(t, c.Do(ctx, "cluster", "addslots", foo).Err())
	require.NoError(t, c.Do(ctx, "cluster", "delslotsrange", "0", "16383").Err())
	assert.Equal(t, "0", infoField(c.ClusterInfo(ctx).Val(), "cluster_slots_assigned"))
	require.NoError(t, c.Do(ctx, "cluster", "addslotsrange", "0", "100", "200", "16383").Err())
	assert.Equal(t, "16285", infoField(c.ClusterInfo(ctx).Val(), "cluster_slots_assigned"))

	require.NoError(t, c.FlushAll(ctx).Err())
	require.NoError(t, c.Do(ctx, "cluster", "flushslots").Err())
	assert.Equal(t, "0", infoField(c.ClusterInfo(ctx).Val(), "cluster_slots_assigned"))
}

func TestKeySlotAndHelp(t *testing.T) {
	t.Parallel()
	n := startCluster(t)
	for _, proto := range []int{2, 3} {
		c := n.Client(t, proto)
		assert.Equal(t, int64(12182), c.ClusterKeySlot(ctx, "foo").Val())
		assert.Equal(t, int64(5061), c.ClusterKeySlot(ctx, "foo{bar}zap").Val())
		help, err := c.Do(ctx, "cluster", "help").StringSlice()
		require.NoError(t, err)
		assert.Equal(t, "CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", help[0])
		assert.Contains(t, help, "MYSHARDID")
		assert.Equal(t, "    Prints this help.", help[len(help)-1])
	}
	rc := dialRaw(t, n.Addr)
	assert.Equal(t, byte('+'), rc.do("cluster", "help").Elems[1].T, "help lines are simple strings")
}

func TestCountAndGetKeysInSlot(t *testing.T) {
	t.Parallel()
	n := startCluster(t)
	c := n.Client(t)
	require.NoError(t, c.Do(ctx, "cluster", "addslotsrange", "0", "16383").Err())
	slot := slots.HashSlotString("{t}")
	for i := 0; i < 25; i++ {
		require.NoError(t, c.Set(ctx, "{t}"+strconv.Itoa(i), "v", 0).Err())
	}
	require.NoError(t, c.Set(ctx, "{t}gone", "v", time.Millisecond).Err())
	nodetest.Eventually(t, 5*time.Second, func() bool { return c.Exists(ctx, "{t}gone").Val() == 0 }, "expired")

	for _, proto := range []int{2, 3} {
		c := n.Client(t, proto)
		nodetest.Eventually(t, 5*time.Second, func() bool {
			return c.ClusterCountKeysInSlot(ctx, slot).Val() == 25
		}, "25 keys counted")
		assert.Equal(t, int64(0), c.ClusterCountKeysInSlot(ctx, slot+1).Val())
		keys, err := c.ClusterGetKeysInSlot(ctx, slot, 10).Result()
		require.NoError(t, err)
		assert.Len(t, keys, 10)
		all, err := c.ClusterGetKeysInSlot(ctx, slot, 1000).Result()
		require.NoError(t, err)
		assert.Len(t, all, 25)
		for _, k := range all {
			assert.True(t, strings.HasPrefix(k, "{t}"))
		}
		assert.Subset(t, all, keys)
		none, err := c.ClusterGetKeysInSlot(ctx, slot, 0).Result()
		require.NoError(t, err)
		assert.Empty(t, none)
		empty, err := c.ClusterGetKeysInSlot(ctx, 0, 10).Result()
		require.NoError(t, err)
		assert.Empty(t, empty)
	}
	for _, cmd := range []struct {
		args []any
		err  string
	}{
		{[]any{"cluster", "countkeysinslot", "16384"}, "ERR Invalid slot"},
		{[]any{"cluster", "countkeysinslot", "-1"}, "ERR Invalid slot"},
		{[]any{"cluster", "countkeysinslot", "x"}, "ERR value is not an integer or out of range"},
		{[]any{"cluster", "countkeysinslot", "01"}, "ERR value is not an integer or out of range"},
		{[]any{"cluster", "countkeysinslot"}, "ERR wrong number of arguments for 'cluster|countkeysinslot' command"},
		{[]any{"cluster", "getkeysinslot", "1", "-1"}, "ERR Invalid slot or number of keys"},
		{[]any{"cluster", "getkeysinslot", "16384", "1"}, "ERR Invalid slot or number of keys"},
		{[]any{"cluster", "getkeysinslot", "x", "1"}, "ERR value is not an integer or out of range"},
		{[]any{"cluster", "getkeysinslot", "1", "x"}, "ERR value is not an integer or out of range"},
		{[]any{"cluster", "getkeysinslot", "-1", "x"}, "ERR value is not an integer or out of range"},
		{[]any{"cluster", "getkeysinslot", "1"}, "ERR wrong number of arguments for 'cluster|getkeysinslot' command"},
	} {
		err := c.Do(ctx, cmd.args...).Err()
		require.Error(t, err, "%v", cmd.args)
		assert.Equal(t, cmd.err, err.Error(), "%v", cmd.args)
	}
}

func TestClusterDisabled(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t)
	c := n.Client(t)
	for _, args := range [][]any{
		{"cluster", "info"}, {"cluster", "nodes"}, {"cluster", "myid"}, {"cluster", "keyslot", "a"},
		{"cluster", "help"}, {"cluster", "addslots", "1"}, {"cluster", "countkeysinslot", "1"},
		{"cluster", "getkeysinslot", "1", "1"}, {"cluster", "slots"},
	} {
		err := c.Do(ctx, args...).Err()
		require.Error(t, err, "%v", args)
		assert.Equal(t, "ERR This instance has cluster support disabled", err.Error(), "%v", args)
	}
	// Lookup and arity errors come first, as in Redis.
	err := c.Do(ctx, "cluster", "foo").Err()
	assert.Equal(t, "ERR unknown subcommand 'foo'. Try CLUSTER HELP.", err.Error())
	err = c.Do(ctx, "cluster", "info", "x").Err()
	assert.Equal(t, "ERR wrong number of arguments for 'cluster|info' command", err.Error())
	err = c.Do(ctx, "cluster").Err()
	assert.Equal(t, "ERR wrong number of arguments for 'cluster' command", err.Error())
}

func TestIdentityPersistsAcrossRestart(t *testing.T) {
	t.Parallel()
	n1 := startCluster(t)
	c1 := n1.Client(t)
	require.NoError(t, c1.Do(ctx, "cluster", "addslotsrange", "0", "5000", "5002", "16383").Err())
	// nodes.conf is written before the reply goes out.
	conf, err := os.ReadFile(filepath.Join(n1.Dir, "nodes.conf"))
	require.NoError(t, err)
	assert.Contains(t, string(conf), " myself,master - 0 0 0 connected 0-5000 5002-16383\n")
	id := c1.ClusterMyID(ctx).Val()
	shard := c1.ClusterMyShardID(ctx).Val()
	require.NoError(t, c1.Close())
	n1.Stop()

	n2 := startCluster(t, "dir", n1.Dir)
	c2 := n2.Client(t)
	assert.Equal(t, id, c2.ClusterMyID(ctx).Val())
	assert.Equal(t, shard, c2.ClusterMyShardID(ctx).Val())
	// Same slots; the port is the new one.
	assert.Equal(t, id+" :"+strconv.Itoa(n2.Port)+"@"+strconv.Itoa(n2.Port+10000)+
		" myself,master - 0 0 0 connected 0-5000 5002-16383\n", c2.ClusterNodes(ctx).Val())
	conf, err = os.ReadFile(filepath.Join(n1.Dir, "nodes.conf"))
	require.NoError(t, err)
	assert.Contains(t, string(conf), ":"+strconv.Itoa(n2.Port)+"@", "the file is rewritten with the new port")
	entries, err := os.ReadDir(n1.Dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.NotContains(t, e.Name(), ".tmp-", "no temp file left behind")
	}
}

func TestConfigFileLockedAndCorrupt(t *testing.T) {
	t.Parallel()
	n1 := startCluster(t)
	start := func(dir, file string) error {
		cfg := config.New()
		require.NoError(t, cfg.LoadArgs([]string{"--port", strconv.Itoa(nodetest.FreePort(t)), "--bind", "127.0.0.1",
			"--dir", dir, "--loglevel", "nothing", "--save", "", "--cluster-enabled", "yes", "--cluster-config-file", file}))
		n, err := node.Start(cfg)
		if err == nil {
			n.Stop()
		}
		return err
	}
	err := start(n1.Dir, "nodes.conf")
	require.Error(t, err)
	assert.Equal(t, "Sorry, the cluster configuration file "+filepath.Join(n1.Dir, "nodes.conf")+
		" is already used by a different Redis Cluster node. Please make sure that different nodes use "+
		"different cluster configuration files.", err.Error())

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.conf"), []byte("garbage line\n"), 0o644))
	err = start(dir, "bad.conf")
	require.Error(t, err)
	assert.Equal(t, `Unrecoverable error: corrupted cluster config file "garbage line".`, err.Error())

	// An absolute cluster-config-file ignores dir; an empty file is a new node.
	abs := filepath.Join(t.TempDir(), "abs.conf")
	require.NoError(t, os.WriteFile(abs, nil, 0o644))
	require.NoError(t, start(dir, abs))
	b, err := os.ReadFile(abs)
	require.NoError(t, err)
	assert.Regexp(t, `^[0-9a-f]{40} :\d+@\d+,,shard-id=[0-9a-f]{40} myself,master - 0 0 0 connected\nvars currentEpoch 0 lastVoteEpoch 0\n$`, string(b))
}

func TestAnnounceDirectives(t *testing.T) {
	t.Parallel()
	n := startCluster(t, "cluster-announce-ip", "10.1.2.3", "cluster-announce-hostname", "host-a.example",
		"cluster-port", "0", "cluster-announce-bus-port", "31000")
	c := n.Client(t, 2)
	require.NoError(t, c.Do(ctx, "cluster", "addslots", "5").Err())
	id := c.ClusterMyID(ctx).Val()
	assert.Equal(t, id+" 10.1.2.3:"+strconv.Itoa(n.Port)+"@31000,host-a.example myself,master - 0 0 0 connected 5\n",
		c.ClusterNodes(ctx).Val())
	sl := c.ClusterSlots(ctx).Val()
	require.Len(t, sl, 1)
	assert.Equal(t, redis.ClusterSlot{Start: 5, End: 5, Nodes: []redis.ClusterNode{{ID: id,
		Addr: "10.1.2.3:" + strconv.Itoa(n.Port), NetworkingMetadata: map[string]string{"hostname": "host-a.example"}}}}, sl[0])

	// CONFIG SET reaches the cluster actor.
	require.NoError(t, c.ConfigSet(ctx, "cluster-announce-ip", "").Err())
	require.NoError(t, c.ConfigSet(ctx, "cluster-preferred-endpoint-type", "hostname").Err())
	nodetest.Eventually(t, 5*time.Second, func() bool {
		return strings.HasPrefix(c.ClusterNodes(ctx).Val(), id+" :"+strconv.Itoa(n.Port)+"@31000,host-a.example ")
	}, "announce ip cleared")
	rc := dialRaw(t, n.Addr)
	assert.Equal(t, `*[*[:5 :5 *[$"host-a.example" :`+strconv.Itoa(n.Port)+` $"`+id+`" *[$"ip" $""]]]]`,
		rc.do("cluster", "slots").String())
}

func TestGoRedisClusterClient(t *testing.T) {
	t.Parallel()
	n := startCluster(t)
	c := n.Client(t)
	require.NoError(t, c.Do(ctx, allSlotArgs()...).Err())
	// A primary serves its slots once cluster_state is ok: at its next cron
	// step, and not in its first 2 s (Redis's CLUSTER_WRITABLE_DELAY).
	nodetest.Eventually(t, 10*time.Second, func() bool {
		return strings.HasPrefix(c.ClusterInfo(ctx).Val(), "cluster_state:ok\r\n")
	}, "cluster_state:ok")
	id := c.ClusterMyID(ctx).Val()
	for _, proto := range []int{2, 3} {
		sl, err := n.Client(t, proto).ClusterSlots(ctx).Result()
		require.NoError(t, err)
		assert.Equal(t, []redis.ClusterSlot{{Start: 0, End: 16383,
			Nodes: []redis.ClusterNode{{ID: id, Addr: ":" + strconv.Itoa(n.Port), NetworkingMetadata: map[string]string{}}}}}, sl)
		shards, err := n.Client(t, proto).ClusterShards(ctx).Result()
		require.NoError(t, err)
		assert.Equal(t, []redis.ClusterShard{{Slots: []redis.SlotRange{{Start: 0, End: 16383}},
			Nodes: []redis.Node{{ID: id, Port: int64(n.Port), Role: "master", Health: "online"}}}}, shards)

		cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{n.Addr}, Protocol: proto,
			DialTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second})
		key := "cc" + strconv.Itoa(proto)
		require.NoError(t, cc.Set(ctx, key, "v", 0).Err())
		assert.Equal(t, "v", cc.Get(ctx, key).Val())
		for i := 0; i < 50; i++ {
			require.NoError(t, cc.Set(ctx, key+strconv.Itoa(i), i, 0).Err())
		}
		assert.Equal(t, "49", cc.Get(ctx, key+"49").Val())
		require.NoError(t, cc.Close())
	}
}

func TestRedisCliClusterCheck(t *testing.T) {
	t.Parallel()
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Skip("redis-cli not installed")
	}
	n := startCluster(t)
	c := n.Client(t)
	require.NoError(t, c.Do(ctx, allSlotArgs()...).Err())
	require.NoError(t, c.Set(ctx, "k", "v", 0).Err())
	out, err := exec.Command(cli, "--cluster", "check", n.Addr).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "[OK] All nodes agree about slots configuration.")
	assert.Contains(t, string(out), "[OK] All 16384 slots covered.")
	assert.Contains(t, string(out), "-> 1 keys | 16384 slots | 0 slaves.")

	// And redis-cli -c follows nothing: the single node serves every key.
	out, err = exec.Command(cli, "-c", "-p", strconv.Itoa(n.Port), "get", "k").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "v\n", string(out))
}

func TestReplyTypes(t *testing.T) {
	t.Parallel()
	n := startCluster(t)
	rc := dialRaw(t, n.Addr)
	id := rc.do("cluster", "myid").S
	port := strconv.Itoa(n.Port)
	rc.do("cluster", "addslots", "0", "1", "2", "5", "7")
	nodes := id + " :" + port + "@" + strconv.Itoa(n.Port+10000) + " myself,master - 0 0 0 connected 0-2 5 7\n"
	node := `*[$"" :` + port + ` $"` + id + `" *[]]`
	shardNode := `*[$"id" $"` + id + `" $"port" :` + port + ` $"ip" $"" $"endpoint" $"" $"role" $"master" ` +
		`$"replication-offset" :0 $"health" $"online"]`
	assert.Equal(t, val{T: '$', S: nodes}, rc.do("cluster", "nodes"))
	assert.Equal(t, byte('$'), rc.do("cluster", "info").T)
	assert.Equal(t, `*[*[:0 :2 `+node+`] *[:5 :5 `+node+`] *[:7 :7 `+node+`]]`, rc.do("cluster", "slots").String())
	assert.Equal(t, `*[*[$"slots" *[:0 :2 :5 :5 :7 :7] $"nodes" *[`+shardNode+`]]]`, rc.do("cluster", "shards").String())

	rc.do("hello", "3")
	assert.Equal(t, val{T: '=', S: "txt:" + nodes}, rc.do("cluster", "nodes"))
	assert.Equal(t, byte('='), rc.do("cluster", "info").T)
	node = strings.Replace(node, "*[]", "%[]", 1)
	shardNode = "%" + shardNode[1:]
	assert.Equal(t, `*[*[:0 :2 `+node+`] *[:5 :5 `+node+`] *[:7 :7 `+node+`]]`, rc.do("cluster", "slots").String())
	assert.Equal(t, `*[%[$"slots" *[:0 :2 :5 :5 :7 :7] $"nodes" *[`+shardNode+`]]]`, rc.do("cluster", "shards").String())
}
