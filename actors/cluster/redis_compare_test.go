package cluster_test

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
	"github.com/slotd/slotd/slots"
)

// startRedis starts a throw-away redis-server in cluster mode and returns its
// port; the test is skipped when redis-server is not installed.
func startRedis(t *testing.T) int {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not installed")
	}
	port := nodetest.FreePort(t)
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
		"--save", "", "--appendonly", "no", "--dir", t.TempDir(), "--loglevel", "warning")
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	nodetest.Eventually(t, 10*time.Second, func() bool {
		out, err := exec.Command("redis-cli", "-p", strconv.Itoa(port), "ping").Output()
		return err == nil && strings.TrimSpace(string(out)) == "PONG"
	}, "redis-server up")
	return port
}

// keyInSlot returns a key that hashes to slot.
func keyInSlot(slot int) string {
	for i := 0; ; i++ {
		k := "key" + strconv.Itoa(i)
		if slots.HashSlotString(k) == slot {
			return k
		}
	}
}

// TestRepliesMatchRedis sends the same CLUSTER commands to slotd and to
// redis-server 7.0 and compares the replies — wire types, nesting and text —
// with node ids and ports replaced by placeholders.
func TestRepliesMatchRedis(t *testing.T) {
	t.Parallel()
	rport := startRedis(t)
	n := startCluster(t)
	ours := dialRaw(t, n.Addr)
	theirs := dialRaw(t, "127.0.0.1:"+strconv.Itoa(rport))
	replacer := func(rc *rawConn, port int) *strings.Replacer {
		id := rc.do("cluster", "myid").S
		require.Regexp(t, hexID, id)
		return strings.NewReplacer(id, "<ID>", strconv.Itoa(port+10000), "<CPORT>", strconv.Itoa(port), "<PORT>")
	}
	ourRepl, theirRepl := replacer(ours, n.Port), replacer(theirs, rport)
	same := func(args ...string) {
		t.Helper()
		o := normalize(ours.do(args...), ourRepl).String()
		r := normalize(theirs.do(args...), theirRepl).String()
		assert.Equal(t, r, o, "%v", args)
	}

	k5 := keyInSlot(5)
	// With part of the slots assigned and full coverage required, both
	// are down.
	for _, cmd := range [][]string{
		{"cluster", "nodes"}, {"cluster", "slots"}, {"cluster", "shards"}, {"get", "foo"},
		{"cluster", "addslots", "0", "1", "2", "5", "7"},
		{"cluster", "addslotsrange", "100", "200", "300", "300"},
		{"cluster", "nodes"}, {"cluster", "slots"}, {"cluster", "shards"}, {"cluster", "info"},
		{"cluster", "addslots", "0"}, {"cluster", "addslots", "16384"}, {"cluster", "addslots", "01"},
		{"cluster", "addslots", "3", "3"}, {"cluster", "addslots", "9", "0", "x"},
		{"cluster", "addslotsrange", "5", "4"}, {"cluster", "addslotsrange", "10", "20", "30"},
		{"cluster", "addslotsrange", "8", "9", "x", "y"}, {"cluster", "addslotsrange", "0", "1", "x", "y"},
		{"cluster", "delslots", "9"}, {"cluster", "delslots", "5", "5"}, {"cluster", "delslotsrange", "1000", "1001"},
		{"cluster", "delslotsrange", "100", "100"}, {"cluster", "delslots"}, {"cluster", "flushslots", "x"},
		{"cluster", "keyslot", "foo"}, {"cluster", "keyslot", "{user1000}.following"}, {"cluster", "keyslot"},
		{"set", k5, "v"}, {"get", "foo"}, {"mget", k5, "foo"},
		{"cluster", "countkeysinslot", "5"}, {"cluster", "countkeysinslot", "16384"},
		{"cluster", "countkeysinslot", "x"}, {"cluster", "getkeysinslot", "5", "10"},
		{"cluster", "getkeysinslot", "5", "-1"}, {"cluster", "getkeysinslot", "x", "1"},
		{"cluster", "nosuch"}, {"cluster"},
	} {
		same(cmd...)
	}

	// Without full coverage both serve their slots. (redis-server turns ok
	// only 2 s after start-up; slotd at once.)
	for _, rc := range []*rawConn{ours, theirs} {
		require.Equal(t, "OK", rc.do("config", "set", "cluster-require-full-coverage", "no").S)
		nodetest.Eventually(t, 10*time.Second, func() bool {
			return strings.HasPrefix(rc.do("cluster", "info").S, "cluster_state:ok\r\n")
		}, "cluster_state:ok")
	}
	for _, cmd := range [][]string{
		{"set", k5, "v"}, {"get", k5}, {"get", "foo"}, {"mget", k5, "foo"},
		{"cluster", "countkeysinslot", "5"}, {"cluster", "countkeysinslot", "6"},
		{"cluster", "getkeysinslot", "5", "10"}, {"cluster", "getkeysinslot", "5", "0"},
		{"cluster", "flushslots"}, {"cluster", "info"}, {"cluster", "nodes"},
	} {
		same(cmd...)
	}

	ours.do("hello", "3")
	theirs.do("hello", "3")
	for _, cmd := range [][]string{
		{"cluster", "nodes"}, {"cluster", "slots"}, {"cluster", "shards"}, {"cluster", "info"},
		{"cluster", "myid"}, {"cluster", "keyslot", "foo"}, {"cluster", "getkeysinslot", "5", "10"},
		{"cluster", "addslots", "0"}, {"get", "foo"}, {"get", "nosuchkey{" + k5 + "}"},
	} {
		same(cmd...)
	}

	// Emptied, the slots can be flushed; a node with no slots is down.
	for _, cmd := range [][]string{
		{"del", k5}, {"cluster", "delslots", "5"}, {"cluster", "flushslots"}, {"cluster", "nodes"},
		{"cluster", "slots"}, {"cluster", "shards"}, {"cluster", "info"},
	} {
		same(cmd...)
	}
}

// TestMembershipRepliesMatchRedis compares the replies of the membership
// subcommands (MEET, FORGET, RESET, SAVECONFIG, SET-CONFIG-EPOCH,
// BUMPEPOCH, COUNT-FAILURE-REPORTS, LINKS, REPLICAS) with redis-server's.
func TestMembershipRepliesMatchRedis(t *testing.T) {
	t.Parallel()
	rport := startRedis(t)
	n := startCluster(t)
	ours := dialRaw(t, n.Addr)
	theirs := dialRaw(t, "127.0.0.1:"+strconv.Itoa(rport))
	replacer := func(rc *rawConn, port int) *strings.Replacer {
		id := rc.do("cluster", "myid").S
		return strings.NewReplacer(id, "<ID>", strconv.Itoa(port+10000), "<CPORT>", strconv.Itoa(port), "<PORT>")
	}
	ourRepl, theirRepl := replacer(ours, n.Port), replacer(theirs, rport)
	same := func(cmds ...[]string) {
		t.Helper()
		for _, args := range cmds {
			o := normalize(ours.do(args...), ourRepl).String()
			r := normalize(theirs.do(args...), theirRepl).String()
			assert.Equal(t, r, o, "%v", args)
		}
	}
	same(
		[]string{"cluster", "meet"}, []string{"cluster", "meet", "127.0.0.1"},
		[]string{"cluster", "meet", "foo", "7000"}, []string{"cluster", "meet", "127.0.0.1", "abc"},
		[]string{"cluster", "meet", "127.0.0.1", "70000"}, []string{"cluster", "meet", "127.0.0.1", "-1"},
		[]string{"cluster", "meet", "127.0.0.1", "0"}, []string{"cluster", "meet", "127.0.0.1", "07000"},
		[]string{"cluster", "meet", "127.0.0.1", "60000"}, []string{"cluster", "meet", "127.0.0.1", "99999999999"},
		[]string{"cluster", "meet", "127.0.0.1", "7000", "abc"}, []string{"cluster", "meet", "127.0.0.1", "7000", "70000"},
		[]string{"cluster", "meet", "127.0.0.1", "7000", "0"}, []string{"cluster", "meet", "127.0.0.1", "7000", "1", "2"},
		[]string{"cluster", "meet", "::1::2", "7000"}, []string{"cluster", "meet", "1.2.3", "7000"},
		[]string{"cluster", "forget"}, []string{"cluster", "forget", "abc"},
		[]string{"cluster", "forget", strings.Repeat("0", 40)},
		[]string{"cluster", "reset", "foo"}, []string{"cluster", "reset", "soft", "x"},
		[]string{"cluster", "saveconfig", "x"}, []string{"cluster", "saveconfig"},
		[]string{"cluster", "set-config-epoch"}, []string{"cluster", "set-config-epoch", "abc"},
		[]string{"cluster", "set-config-epoch", "-1"}, []string{"cluster", "set-config-epoch", "99999999999999999999"},
		[]string{"cluster", "set-config-epoch", "0"}, []string{"cluster", "set-config-epoch", "5"},
		[]string{"cluster", "set-config-epoch", "6"}, []string{"cluster", "bumpepoch"}, []string{"cluster", "bumpepoch", "x"},
		[]string{"cluster", "count-failure-reports"}, []string{"cluster", "count-failure-reports", "abc"},
		[]string{"cluster", "links"}, []string{"cluster", "links", "x"},
		[]string{"cluster", "replicas"}, []string{"cluster", "replicas", "abc"}, []string{"cluster", "slaves", "abc"},
	)
	// (CLUSTER INFO as a whole is compared below: redis-server reports
	// cluster_size:1 for its first 2 s.)
	for _, rc := range []*rawConn{ours, theirs} {
		info := rc.do("cluster", "info").S
		assert.Contains(t, info, "\r\ncluster_current_epoch:5\r\ncluster_my_epoch:5\r\n")
	}
	// Their own ids differ: same replies, each with its own id.
	for _, sub := range []string{"replicas", "slaves", "count-failure-reports", "forget"} {
		o := ours.do("cluster", sub, ours.do("cluster", "myid").S).String()
		r := theirs.do("cluster", sub, theirs.do("cluster", "myid").S).String()
		assert.Equal(t, r, o, sub)
	}

	// A master with keys refuses RESET; emptied, a soft reset keeps the
	// id, a hard one takes a new id and zeroes the epochs.
	k5 := keyInSlot(5)
	for _, rc := range []*rawConn{ours, theirs} {
		require.Equal(t, "OK", rc.do("config", "set", "cluster-require-full-coverage", "no").S)
		require.Equal(t, "OK", rc.do("cluster", "addslots", "5").S)
		nodetest.Eventually(t, 15*time.Second, func() bool {
			return strings.HasPrefix(rc.do("cluster", "info").S, "cluster_state:ok\r\n")
		}, "cluster_state:ok")
	}
	same([]string{"set", k5, "v"}, []string{"cluster", "reset"}, []string{"cluster", "reset", "hard"},
		[]string{"cluster", "reset", "SOFT"}, []string{"del", k5}, []string{"cluster", "reset", "soft"},
		[]string{"cluster", "nodes"}, []string{"cluster", "info"})
	same([]string{"cluster", "reset", "hard"})
	ourRepl, theirRepl = replacer(ours, n.Port), replacer(theirs, rport)
	same([]string{"cluster", "nodes"}, []string{"cluster", "info"})

	// MEET of a valid address answers OK at once and adds a handshake
	// node; a node that knows another refuses SET-CONFIG-EPOCH.
	same([]string{"cluster", "meet", "127.0.0.1", "1"}, []string{"cluster", "meet", "127.0.0.1", "1"})
	for _, rc := range []*rawConn{ours, theirs} {
		assert.Contains(t, rc.do("cluster", "info").S, "cluster_known_nodes:2\r\n")
		assert.Regexp(t, `(?m)^[0-9a-f]{40} 127\.0\.0\.1:1@10001 handshake - \d+ 0 0 disconnected$`,
			rc.do("cluster", "nodes").S)
	}
	same([]string{"cluster", "set-config-epoch", "1"})
	ours.do("hello", "3")
	theirs.do("hello", "3")
	same([]string{"cluster", "links"}, []string{"cluster", "bumpepoch"})
}
