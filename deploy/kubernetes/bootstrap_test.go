package kubernetes

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/bench/benchkit"
	"github.com/slotd/slotd/cmd/node/nodetest"
)

// local is a set of slotd processes on 127.0.0.1 standing in for the pods.
type local struct {
	t     *testing.T
	bin   string
	nodes []*benchkit.Proc
}

func newLocal(t *testing.T) *local {
	for _, tool := range []string{"redis-cli", "timeout", "getent"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	bin := filepath.Join(t.TempDir(), "slotd")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/slotd/slotd/cmd/slotd").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return &local{t: t, bin: bin}
}

// clusterPort is a free port whose bus port (+10000) is free too.
func clusterPort(t *testing.T) int {
	for range 100 {
		p, err := benchkit.FreePort()
		require.NoError(t, err)
		if p+10000 > 65535 {
			continue
		}
		if l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+10000)); err == nil {
			_ = l.Close()
			return p
		}
	}
	t.Fatal("no free port pair")
	return 0
}

// start runs a cluster-mode slotd on port with its data in dir.
func (l *local) start(port int, dir string) *benchkit.Proc {
	l.t.Helper()
	require.NoError(l.t, os.MkdirAll(dir, 0o755))
	p, err := benchkit.StartProc(context.Background(), "slotd-"+strconv.Itoa(port), port, []string{l.bin,
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes", "--dir", dir,
		"--save", "", "--cluster-node-timeout", "2000", "--loglevel", "warning"}, filepath.Join(dir, "log"))
	require.NoError(l.t, err)
	l.t.Cleanup(p.Stop)
	return p
}

func (l *local) addrs() string {
	var a []string
	for _, p := range l.nodes {
		a = append(a, p.Addr())
	}
	return strings.Join(a, " ")
}

// bootstrap runs bootstrap.sh against the nodes and returns its output.
func (l *local) bootstrap() string {
	l.t.Helper()
	cmd := exec.Command("./bootstrap.sh")
	cmd.Env = append(os.Environ(), "SLOTD_NODES="+l.addrs(), "SLOTD_REPLICAS=1", "SLOTD_TIMEOUT=90")
	out, err := cmd.CombinedOutput()
	require.NoError(l.t, err, "bootstrap.sh:\n%s", out)
	return string(out)
}

// probe runs probe.sh against one node and returns its exit status.
func probe(t *testing.T, p *benchkit.Proc, what string) int {
	t.Helper()
	cmd := exec.Command("./probe.sh", what)
	cmd.Env = append(os.Environ(), "SLOTD_PORT="+strconv.Itoa(p.Port), "SLOTD_PRESTOP_TIMEOUT=20")
	out, err := cmd.CombinedOutput()
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "%s", out)
	return ee.ExitCode()
}

func text(t *testing.T, p *benchkit.Proc, args ...string) string {
	t.Helper()
	cli := p.Client()
	defer cli.Close()
	s, err := cli.Text(args...)
	require.NoError(t, err)
	return s
}

func field(t *testing.T, p *benchkit.Proc, field string, args ...string) string {
	for _, l := range strings.Split(text(t, p, args...), "\r\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			return v
		}
	}
	return ""
}

// The bootstrap Job's script forms a cluster of 3 primaries with a
// replica each, is a no-op when run again, brings back a node that lost
// its data, and the pods' probes and pre-stop hook mean what they say.
func TestBootstrapScriptAndProbes(t *testing.T) {
	l := newLocal(t)
	base := t.TempDir()
	for range 6 {
		port := clusterPort(t)
		l.nodes = append(l.nodes, l.start(port, filepath.Join(base, strconv.Itoa(port))))
	}
	lone := l.nodes[0]
	assert.Equal(t, 0, probe(t, lone, "live"), "a node that answers is live")
	assert.NotEqual(t, 0, probe(t, lone, "ready"), "a node outside a cluster is not ready")

	out := l.bootstrap()
	assert.Contains(t, out, "creating the cluster")
	ids := make([]string, 6)
	for i, p := range l.nodes {
		ids[i] = text(t, p, "CLUSTER", "MYID")
		assert.Equal(t, "ok", field(t, p, "cluster_state", "CLUSTER", "INFO"), "node %d", i)
	}
	for i, p := range l.nodes[:3] {
		assert.Equal(t, "master", field(t, p, "role", "INFO", "replication"), "node %d is a primary", i)
		assert.NotEqual(t, "0", field(t, p, "cluster_my_epoch", "CLUSTER", "INFO"))
	}
	for k, p := range l.nodes[3:] {
		assert.Equal(t, "slave", field(t, p, "role", "INFO", "replication"), "node %d is a replica", 3+k)
		assert.Equal(t, strconv.Itoa(l.nodes[k].Port), field(t, p, "master_port", "INFO", "replication"),
			"node %d replicates primary %d", 3+k, k)
		assert.Equal(t, 0, probe(t, p, "ready"))
	}

	// Again: nothing to do.
	out = l.bootstrap()
	assert.Contains(t, out, "the cluster exists")
	assert.NotContains(t, out, "adding")
	assert.NotContains(t, out, "CLUSTER MEET")
	for i, p := range l.nodes {
		assert.Equal(t, ids[i], text(t, p, "CLUSTER", "MYID"), "node %d kept its id", i)
	}

	// A replica's pod comes back with an empty volume: it rejoins as a
	// replica and the old node id is forgotten.
	old := l.nodes[5]
	old.Stop()
	nodetest.Eventually(t, 20*time.Second, func() bool {
		return strings.Contains(text(t, l.nodes[0], "CLUSTER", "NODES"), ids[5]+" "+old.Addr()+"@") &&
			strings.Contains(strings.Split(strings.Split(text(t, l.nodes[0], "CLUSTER", "NODES"), ids[5])[1], "\n")[0], "fail")
	}, "the cluster sees the lost replica as failed")
	l.nodes[5] = l.start(old.Port, filepath.Join(base, "fresh"))
	out = l.bootstrap()
	assert.Contains(t, out, "is empty and alone")
	assert.Contains(t, out, "forgetting "+ids[5])
	assert.Equal(t, "slave", field(t, l.nodes[5], "role", "INFO", "replication"))
	nodetest.Eventually(t, 20*time.Second, func() bool {
		return !strings.Contains(text(t, l.nodes[1], "CLUSTER", "NODES"), ids[5])
	}, "the old id is forgotten")

	// Pre-stop on a primary: its replica takes over before SIGTERM.
	assert.Equal(t, 0, probe(t, l.nodes[0], "prestop"))
	assert.Equal(t, "slave", field(t, l.nodes[0], "role", "INFO", "replication"), "the old primary is a replica")
	assert.Equal(t, "master", field(t, l.nodes[3], "role", "INFO", "replication"), "its replica is the primary")
	assert.Equal(t, 0, probe(t, l.nodes[0], "prestop"), "pre-stop on a replica does nothing")
	assert.Equal(t, "ok", field(t, l.nodes[3], "cluster_state", "CLUSTER", "INFO"))
}

// After every pod restarted at once with a new address (here: a new port,
// the same data), the nodes cannot find each other from nodes.conf; the
// bootstrap script meets them at their new addresses.
func TestBootstrapScriptHealsNewAddresses(t *testing.T) {
	l := newLocal(t)
	base := t.TempDir()
	dirs := make([]string, 6)
	for i := range 6 {
		dirs[i] = filepath.Join(base, strconv.Itoa(i))
		l.nodes = append(l.nodes, l.start(clusterPort(t), dirs[i]))
	}
	l.bootstrap()
	ids := make([]string, 6)
	for i, p := range l.nodes {
		ids[i] = text(t, p, "CLUSTER", "MYID")
		p.Stop()
	}
	for i := range l.nodes {
		l.nodes[i] = l.start(clusterPort(t), dirs[i])
	}
	out := l.bootstrap()
	assert.Contains(t, out, "CLUSTER MEET")
	for i, p := range l.nodes {
		assert.Equal(t, ids[i], text(t, p, "CLUSTER", "MYID"), "node %d kept its id (nodes.conf)", i)
		assert.Equal(t, "ok", field(t, p, "cluster_state", "CLUSTER", "INFO"))
		assert.Equal(t, "6", field(t, p, "cluster_known_nodes", "CLUSTER", "INFO"), "no stale entries")
	}
}
