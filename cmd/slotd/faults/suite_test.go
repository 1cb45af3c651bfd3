package faults

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/slotd/slotd/slots"
)

// The suite's cluster: 3 primaries and 3 replicas, cluster-node-timeout
// 2000, each node in its namespace; a go-redis ClusterClient in the test's
// namespace writes through the proxy (clients are never cut off: a
// partitioned primary keeps its clients, the worst case for lost writes).

const nodeTimeout = 2000 * time.Millisecond

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		_ = os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

func slotdBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "slotd-faults-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "slotd")
		if out, err := exec.Command("go", "build", "-o", binPath, "..").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// need skips the test where the suite cannot run.
func need(t *testing.T) {
	t.Helper()
	if why := Available(); why != "" {
		t.Skip(why)
	}
	for _, tool := range []string{"redis-cli"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
}

// suite is a running cluster with its writer and what happened to it.
type suite struct {
	t      *testing.T
	c      *Cluster
	w      *writer
	faults []*fault
	checks int // invariant checks passed
}

// fault is one injected fault: the nodes it cut off from the majority or
// stopped (whose acknowledged writes may be lost) and when.
type fault struct {
	kind       string
	isolated   []int // nodes the majority could not hear
	start, end time.Time
	// lostPrimary: isolated primaries whose shard failed over meanwhile.
	lostPrimary map[int]bool
}

func (f *fault) String() string {
	return fmt.Sprintf("%s of %v %s–%s", f.kind, f.isolated, f.start.Format("15:04:05.000"),
		f.end.Format("15:04:05.000"))
}

func newSuite(t *testing.T, bin string, args ...string) *suite {
	t.Helper()
	need(t)
	c, err := StartCluster(6, bin, t.TempDir(), append([]string{"--cluster-node-timeout",
		strconv.Itoa(int(nodeTimeout.Milliseconds())), "--enable-debug-command", "yes"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	s := &suite{t: t, c: c}
	t.Cleanup(func() {
		if t.Failed() {
			for i := range c.Nodes {
				t.Logf("--- node %d log tail:\n%s", i+1, tail(c.Log(i+1), 40))
			}
		}
		c.Close()
	})
	if err := c.Create(1); err != nil {
		t.Fatal(err)
	}
	s.waitHealthy(60 * time.Second)
	return s
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// nodeView is one node's CLUSTER NODES myself line.
type nodeView struct {
	id, role, master string
	slots            []string
}

// view reads node i's myself line (direct, bypassing the proxy).
func (s *suite) view(i int) (nodeView, error) {
	text, err := Do(s.c.Direct(i), 2*time.Second, "CLUSTER", "NODES")
	if err != nil {
		return nodeView{}, err
	}
	for _, l := range strings.Split(text, "\n") {
		f := strings.Fields(l)
		if len(f) >= 8 && strings.Contains(f[2], "myself") {
			v := nodeView{id: f[0], role: "master", master: f[3], slots: f[8:]}
			if strings.Contains(f[2], "slave") {
				v.role = "slave"
			}
			return v, nil
		}
	}
	return nodeView{}, fmt.Errorf("no myself line")
}

// roles maps node index → its own view.
func (s *suite) roles() map[int]nodeView {
	out := map[int]nodeView{}
	for i := range s.c.Nodes {
		if v, err := s.view(i + 1); err == nil {
			out[i+1] = v
		}
	}
	return out
}

// primaries are the nodes that say they are primaries serving slots.
func (s *suite) primaries() []int {
	var out []int
	for i, v := range s.roles() {
		if v.role == "master" && len(v.slots) > 0 {
			out = append(out, i)
		}
	}
	sort.Ints(out)
	return out
}

// replicaOf is the node replicating primary p.
func (s *suite) replicaOf(p int) int {
	rs := s.roles()
	for i, v := range rs {
		if v.role == "slave" && v.master == rs[p].id {
			return i
		}
	}
	return 0
}

// waitHealthy waits until every node reports cluster_state:ok, there are
// three primaries each with a replica whose link is up.
func (s *suite) waitHealthy(d time.Duration) {
	s.t.Helper()
	deadline := time.Now().Add(d)
	var why string
	for time.Now().Before(deadline) {
		why = s.unhealthy()
		if why == "" {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.t.Fatalf("cluster not healthy within %v: %s", d, why)
}

func (s *suite) unhealthy() string {
	for i := range s.c.Nodes {
		info, err := Do(s.c.Direct(i+1), 2*time.Second, "CLUSTER", "INFO")
		if err != nil {
			return fmt.Sprintf("node %d: %v", i+1, err)
		}
		if !strings.Contains(info, "cluster_state:ok") {
			return fmt.Sprintf("node %d: cluster_state not ok", i+1)
		}
	}
	ps := s.primaries()
	if len(ps) != 3 {
		return fmt.Sprintf("%d primaries serving slots", len(ps))
	}
	for _, p := range ps {
		r := s.replicaOf(p)
		if r == 0 {
			return fmt.Sprintf("primary %d has no replica", p)
		}
		info, _ := Do(s.c.Direct(r), 2*time.Second, "INFO", "replication")
		if !strings.Contains(info, "master_link_status:up") {
			return fmt.Sprintf("replica %d not in sync", r)
		}
	}
	return ""
}

// begin records a fault; end (once the cluster is healthy again) notes
// which isolated primaries lost their shard.
func (s *suite) begin(kind string, isolated ...int) *fault {
	f := &fault{kind: kind, isolated: isolated, start: time.Now(), lostPrimary: map[int]bool{}}
	s.faults = append(s.faults, f)
	return f
}

func (s *suite) end(f *fault, wasPrimary map[int]bool) {
	rs := s.roles()
	for _, i := range f.isolated {
		if wasPrimary[i] && rs[i].role != "master" {
			f.lostPrimary[i] = true
		}
	}
}

// isPrimary snapshots which nodes are primaries.
func (s *suite) isPrimary() map[int]bool {
	out := map[int]bool{}
	for _, p := range s.primaries() {
		out[p] = true
	}
	return out
}

// check runs the invariants after a heal: healthy again, no slot with two
// owners, every replica's digest equal to its primary's.
func (s *suite) check() {
	s.t.Helper()
	s.waitHealthy(60 * time.Second)
	owner := map[string]int{}
	for i, v := range s.roles() {
		if v.role != "master" {
			continue
		}
		for _, r := range v.slots {
			if strings.HasPrefix(r, "[") {
				continue // open slot
			}
			if o, dup := owner[r]; dup {
				s.t.Fatalf("slots %s owned by nodes %d and %d", r, o, i)
			}
			owner[r] = i
		}
	}
	s.checks++
	// The digests are compared with the writer held (its writes in flight
	// answered, no new one sent): under a live writer a replica equals its
	// primary only by chance (its digest is read a moment after the
	// primary's, at another offset), a chance that shrinks as the lists
	// grow and the machine gets busier.
	if s.w != nil {
		s.w.hold.Lock()
		defer s.w.hold.Unlock()
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, p := range s.primaries() {
		r := s.replicaOf(p)
		for {
			a, err1 := Do(s.c.Direct(p), 5*time.Second, "DEBUG", "DIGEST")
			b, err2 := Do(s.c.Direct(r), 5*time.Second, "DEBUG", "DIGEST")
			if err1 == nil && err2 == nil && a == b {
				break
			}
			if time.Now().After(deadline) {
				po, _ := Do(s.c.Direct(p), 5*time.Second, "INFO", "replication")
				ro, _ := Do(s.c.Direct(r), 5*time.Second, "INFO", "replication")
				s.t.Fatalf("replica %d digest %s (%v) != primary %d digest %s (%v), writes held\n"+
					"primary:\n%s\nreplica:\n%s", r, b, err2, p, a, err1, po, ro)
			}
			time.Sleep(100 * time.Millisecond)
		}
		s.checks++
	}
}

// writer pushes sequence numbers to lists on every shard and records each
// acknowledgement: when, and which node answered it.
type writer struct {
	cc   *redis.ClusterClient
	keys []string
	stop atomic.Bool
	wg   sync.WaitGroup
	mu   sync.Mutex
	acks map[string][]ack
	errs atomic.Int64
	// hold: every write holds it shared; the checker takes it to stop
	// the writes while it compares digests.
	hold sync.RWMutex
}

type ack struct {
	seq  int64
	at   time.Time
	addr string
}

type ackKey struct{}

func (s *suite) startWriter(perShard int) *writer {
	w := &writer{acks: map[string][]ack{}}
	w.cc = redis.NewClusterClient(&redis.ClusterOptions{Addrs: s.c.Addrs(), MaxRedirects: 16,
		ReadTimeout: time.Second, WriteTimeout: time.Second, DialTimeout: 500 * time.Millisecond,
		MinRetryBackoff: time.Millisecond, MaxRetryBackoff: 20 * time.Millisecond, MaxRetries: 2,
		ClusterStateReloadInterval: time.Second, DialerRetries: 1})
	w.cc.OnNewNode(func(rdb *redis.Client) { rdb.AddHook(ackHook{addr: rdb.Options().Addr}) })
	for _, p := range s.primaries() {
		v, _ := s.view(p)
		lo, _, _ := strings.Cut(v.slots[0], "-")
		slot, _ := strconv.Atoi(lo)
		tag := tagFor(slot)
		for k := 0; k < perShard; k++ {
			w.keys = append(w.keys, fmt.Sprintf("{%s}:f%d", tag, len(w.keys)))
		}
	}
	for _, k := range w.keys {
		w.wg.Add(1)
		go w.run(k)
	}
	s.w = w
	s.t.Cleanup(func() { w.halt(); _ = w.cc.Close() })
	return w
}

func (w *writer) run(key string) {
	defer w.wg.Done()
	for seq := int64(0); !w.stop.Load(); seq++ {
		where := new(string)
		ctx := context.WithValue(context.Background(), ackKey{}, where)
		w.hold.RLock()
		err := w.cc.RPush(ctx, key, seq).Err()
		w.hold.RUnlock()
		if err != nil {
			w.errs.Add(1)
			time.Sleep(5 * time.Millisecond)
			continue
		}
		w.mu.Lock()
		w.acks[key] = append(w.acks[key], ack{seq: seq, at: time.Now(), addr: *where})
		w.mu.Unlock()
	}
}

func (w *writer) halt() {
	w.stop.Store(true)
	w.wg.Wait()
}

// ackHook notes which node answered a command successfully.
type ackHook struct{ addr string }

func (h ackHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h ackHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if err == nil {
			if where, ok := ctx.Value(ackKey{}).(*string); ok {
				*where = h.addr
			}
		}
		return err
	}
}
func (h ackHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func tagFor(slot int) string {
	for i := 0; ; i++ {
		tag := "t" + strconv.Itoa(i)
		if slots.HashSlotString(tag) == slot {
			return tag
		}
	}
}

func contextBackground() context.Context { return context.Background() }
