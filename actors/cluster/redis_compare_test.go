package cluster_test

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/actors/node/nodetest"
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
