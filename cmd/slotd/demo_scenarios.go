package main

// slotd demo <scenario>: the four demonstrations of Redis Cluster's
// guarantees (and their limits), each on a cluster of its own that the
// scenario starts, narrated as a redis-cli session — every command with
// the node it went to, the time since the scenario began and the real
// reply — and ending with the measured figure.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/slotd/slotd/netio/resp"
	"github.com/slotd/slotd/slots"
)

// scenario is one demonstration.
type scenario struct {
	name, title string
	// primaries and replicas per primary of its cluster.
	primaries, replicas int
	run                 func(sc *scene) (string, error)
}

var scenarios = []scenario{
	{"moved", "MOVED, and a client that learns the slot map", 3, 0, sceneMoved},
	{"lost-write", "an acknowledged write lost in a failover", 3, 1, sceneLostWrite},
	{"minority", "a primary cut off in a minority partition with its client", 3, 1, sceneMinority},
	{"coverage", "a primary and its replica both down (cluster-require-full-coverage)", 3, 1, sceneCoverage},
}

// scenarioList is the help text's list of scenarios.
func scenarioList() string {
	var b strings.Builder
	b.WriteString("\nScenarios (each starts its own cluster on 127.0.0.1:P..., narrates, and ends with the measured figure):\n")
	for _, s := range scenarios {
		fmt.Fprintf(&b, "  %-11s %s\n", s.name, s.title)
	}
	return b.String()
}

// scene is a scenario's running cluster and narration.
type scene struct {
	d     *demo
	out   io.Writer
	start time.Time
	self  string
	base  string
	port  int
	nt    time.Duration // cluster-node-timeout of the scenario's nodes
	ctx   context.Context
}

// runScenario is "slotd demo <name>".
func runScenario(name string, args []string, stdout, stderr io.Writer) int {
	var sc *scenario
	for i := range scenarios {
		if scenarios[i].name == name {
			sc = &scenarios[i]
		}
	}
	if sc == nil {
		fmt.Fprintf(stderr, "slotd demo: unknown scenario %q\n%s", name, scenarioList())
		return 2
	}
	fs := flag.NewFlagSet("demo "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	port := fs.Int("port", 7000, "client port of the first node")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stderr, "slotd demo:", err)
		return 1
	}
	base, err := os.MkdirTemp("", "slotd-demo-"+name+"-")
	if err != nil {
		fmt.Fprintln(stderr, "slotd demo:", err)
		return 1
	}
	defer os.RemoveAll(base)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s := &scene{d: &demo{stdout: stdout, stderr: stderr, primaries: sc.primaries, quiet: true}, out: stdout,
		self: self, base: base, port: *port, nt: 2 * time.Second, ctx: ctx, start: time.Now()}
	defer s.d.stopAll()
	fmt.Fprintf(stdout, "== slotd demo %s: %s ==\n", sc.name, sc.title)
	figure, err := sc.run(s)
	if err != nil {
		fmt.Fprintln(stderr, "slotd demo:", err)
		s.d.dumpLogs()
		return 1
	}
	fmt.Fprintf(stdout, "\nResult: %s\n", figure)
	return 0
}

// cluster starts primaries×(1+replicas) nodes on port, port+1, ... (the
// primaries first) with cluster-node-timeout nt, forms the cluster and
// pairs the replicas; extra(i) adds directives for node i.
func (s *scene) cluster(primaries, replicas int, extra func(i int) []string) error {
	s.d.primaries = primaries
	total := primaries * (1 + replicas)
	for i := 0; i < total; i++ {
		p := s.port + i
		args := []string{"--cluster-node-timeout", strconv.Itoa(int(s.nt.Milliseconds()))}
		if extra != nil {
			args = append(args, extra(i)...)
		}
		nd, err := s.d.start(s.self, p, filepath.Join(s.base, strconv.Itoa(p)), args...)
		if err != nil {
			return err
		}
		s.d.nodes = append(s.d.nodes, nd)
	}
	ctx, cancel := context.WithTimeout(s.ctx, 60*time.Second)
	defer cancel()
	if err := s.d.form(ctx); err != nil {
		return err
	}
	desc := fmt.Sprintf("%d primaries on 127.0.0.1:%d-%d", primaries, s.port, s.port+primaries-1)
	if replicas > 0 {
		desc += fmt.Sprintf(", each with a replica (127.0.0.1:%d-%d)", s.port+primaries, s.port+total-1)
	}
	s.note("cluster ready: %s, cluster-node-timeout %v", desc, s.nt)
	return nil
}

// note prints a narration line, stamped with the time since the start.
func (s *scene) note(format string, args ...any) {
	fmt.Fprintf(s.out, "[%7.3fs] %s\n", time.Since(s.start).Seconds(), fmt.Sprintf(format, args...))
}

// node is the i-th node (the primaries first).
func (s *scene) node(i int) *demoNode { return s.d.nodes[i] }

// cli runs one command on nd, prints it as redis-cli would show it and
// returns the reply.
func (s *scene) cli(nd *demoNode, args ...string) (resp.Reply, error) {
	began := time.Now()
	rep, err := nd.cli.Do(args...)
	took := time.Since(began)
	fmt.Fprintf(s.out, "[%7.3fs] 127.0.0.1:%d> %s\n", began.Sub(s.start).Seconds(), nd.port, quoteArgs(args))
	if err != nil {
		fmt.Fprintf(s.out, "Error: %v\n", err)
		return rep, err
	}
	fmt.Fprintf(s.out, "%s", formatReply(rep, ""))
	if took > 50*time.Millisecond {
		fmt.Fprintf(s.out, "(%.2fs)\n", took.Seconds())
	}
	return rep, nil
}

// quoteArgs writes a command line the way one would type it.
func quoteArgs(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\"'") {
			a = strconv.Quote(a)
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// formatReply renders a reply as redis-cli does (RESP2).
func formatReply(r resp.Reply, indent string) string {
	switch r.Type {
	case '+':
		return r.Str + "\n"
	case '-':
		return "(error) " + r.Str + "\n"
	case ':':
		return "(integer) " + strconv.FormatInt(r.Int, 10) + "\n"
	case '_':
		return "(nil)\n"
	case '$', '=':
		if strings.Contains(r.Str, "\r\n") { // INFO-like text, shown as lines
			return strings.ReplaceAll(strings.TrimRight(r.Str, "\r\n"), "\r\n", "\n") + "\n"
		}
		return strconv.Quote(r.Str) + "\n"
	case '*', '~', '>', '%':
		if len(r.Elems) == 0 {
			return "(empty array)\n"
		}
		var b strings.Builder
		w := len(strconv.Itoa(len(r.Elems)))
		for i, e := range r.Elems {
			prefix := fmt.Sprintf("%*d) ", w, i+1)
			if i > 0 {
				b.WriteString(indent)
			}
			b.WriteString(prefix)
			b.WriteString(formatReply(e, indent+strings.Repeat(" ", len(prefix))))
		}
		return b.String()
	}
	return r.Str + "\n"
}

// keyIn returns a key whose slot primary i serves.
func (s *scene) keyIn(i int, prefix string) (string, int) {
	n := len(s.d.nodes[:s.d.primaries])
	lo, hi := i*slots.NumSlots/n, (i+1)*slots.NumSlots/n-1
	for j := 0; ; j++ {
		k := prefix + strconv.Itoa(j)
		if slot := slots.HashSlotString(k); slot >= lo && slot <= hi {
			return k, slot
		}
	}
}

// waitFor polls cond every 20 ms for up to d.
func (s *scene) waitFor(d time.Duration, what string, cond func() bool) error {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out waiting for %s", what)
		}
		select {
		case <-s.ctx.Done():
			return s.ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// nodeRole is the first element of ROLE on nd ("" on error).
func nodeRole(nd *demoNode) string {
	rep, err := nd.cli.Do("role")
	if err != nil || len(rep.Elems) == 0 {
		return ""
	}
	return rep.Elems[0].Str
}

// signal sends sig to nd and narrates it.
func (s *scene) signal(nd *demoNode, sig syscall.Signal, why string) {
	_ = nd.cmd.Process.Signal(sig)
	name := map[syscall.Signal]string{syscall.SIGSTOP: "kill -STOP", syscall.SIGCONT: "kill -CONT",
		syscall.SIGKILL: "kill -9"}[sig]
	s.note("$ %s %d   # 127.0.0.1:%d: %s", name, nd.cmd.Process.Pid, nd.port, why)
	if sig == syscall.SIGKILL {
		<-nd.done
		nd.cli.Close()
	}
}

// sceneMoved: a node answers MOVED for a key it does not serve; a client
// that follows redirects finds the key, and one that learned the slot map
// (CLUSTER SLOTS) is never redirected.
func sceneMoved(s *scene) (string, error) {
	if err := s.cluster(3, 0, nil); err != nil {
		return "", err
	}
	a, c := s.node(0), s.node(2)
	key, slot := s.keyIn(2, "user:")
	if _, err := s.cli(a, "CLUSTER", "KEYSLOT", key); err != nil {
		return "", err
	}
	rep, err := s.cli(a, "SET", key, "alice")
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(rep.Str, "MOVED ") {
		return "", fmt.Errorf("expected MOVED, got %q", rep.Str)
	}
	s.note("slot %d is served by 127.0.0.1:%d: a cluster client retries there (redis-cli -c does)", slot, c.port)
	if _, err := s.cli(c, "SET", key, "alice"); err != nil {
		return "", err
	}
	s.note("the slot map a client learns once, and keeps until the next MOVED:")
	if _, err := s.cli(a, "CLUSTER", "SLOTS"); err != nil {
		return "", err
	}
	const n = 300
	naive, tNaive, err := s.writes(n, false)
	if err != nil {
		return "", err
	}
	mapped, tMapped, err := s.writes(n, true)
	if err != nil {
		return "", err
	}
	s.note("%d SETs sent to 127.0.0.1:%d first: %d answered MOVED and were retried at the owner (%v)", n, a.port,
		naive, tNaive.Round(time.Millisecond))
	s.note("%d SETs routed with the slot map from CLUSTER SLOTS: %d MOVED (%v)", n, mapped,
		tMapped.Round(time.Millisecond))
	return fmt.Sprintf("%d writes; redirected with MOVED without the slot map: %d, with it: %d", n, naive, mapped), nil
}

// writes sets n keys, either sending each to the first node and following
// MOVED, or routing by the slot map from CLUSTER SLOTS; it returns the
// number of MOVED replies.
func (s *scene) writes(n int, useMap bool) (int, time.Duration, error) {
	byPort := map[int]*demoNode{}
	for _, nd := range s.d.nodes {
		byPort[nd.port] = nd
	}
	owner := map[int]*demoNode{}
	if useMap {
		rep, err := s.node(0).cli.Do("CLUSTER", "SLOTS")
		if err != nil {
			return 0, 0, err
		}
		for _, r := range rep.Elems {
			if len(r.Elems) < 3 || len(r.Elems[2].Elems) < 2 {
				continue
			}
			nd := byPort[int(r.Elems[2].Elems[1].Int)]
			for slot := r.Elems[0].Int; slot <= r.Elems[1].Int; slot++ {
				owner[int(slot)] = nd
			}
		}
	}
	moved := 0
	began := time.Now()
	for i := 0; i < n; i++ {
		k := "item:" + strconv.Itoa(i)
		nd := s.node(0)
		if o := owner[slots.HashSlotString(k)]; o != nil {
			nd = o
		}
		rep, err := nd.cli.Do("SET", k, strconv.Itoa(i))
		if err != nil {
			return 0, 0, err
		}
		if f := strings.Fields(rep.Str); rep.Type == '-' && len(f) == 3 && f[0] == "MOVED" {
			moved++
			_, port, _ := strings.Cut(f[2], ":")
			p, _ := strconv.Atoi(port)
			if o := byPort[p]; o != nil {
				if rep, err = o.cli.Do("SET", k, strconv.Itoa(i)); err != nil {
					return 0, 0, err
				}
			}
		}
		if rep.Type == '-' {
			return 0, 0, fmt.Errorf("SET %s: %s", k, rep.Str)
		}
	}
	return moved, time.Since(began), nil
}

// sceneLostWrite: a write the primary acknowledged, that no replica had
// yet (replication is asynchronous), is gone once the replica takes over.
func sceneLostWrite(s *scene) (string, error) {
	if err := s.cluster(3, 1, nil); err != nil {
		return "", err
	}
	p, r := s.node(0), s.node(3)
	key, _ := s.keyIn(0, "account:")
	for _, cmd := range [][]string{{"SET", key, "v1"}, {"WAIT", "1", "1000"}} {
		if _, err := s.cli(p, cmd...); err != nil {
			return "", err
		}
	}
	s.signal(r, syscall.SIGSTOP, "the replica stalls")
	if _, err := s.cli(p, "CLIENT", "KILL", "TYPE", "replica"); err != nil {
		return "", err
	}
	s.note("the primary dropped its replication link (as a network cut would): new writes reach no replica")
	rep, err := s.cli(p, "SET", key, "v2")
	if err != nil || rep.Str != "OK" {
		return "", fmt.Errorf("SET not acknowledged: %v %q", err, rep.Str)
	}
	if _, err := s.cli(p, "WAIT", "1", "200"); err != nil {
		return "", err
	}
	s.note("the primary acknowledged v2; no replica has it")
	s.signal(p, syscall.SIGKILL, "the primary dies")
	killed := time.Now()
	s.signal(r, syscall.SIGCONT, "the replica is back; its primary is gone")
	if err := s.waitFor(30*time.Second, "the replica to take over", func() bool { return nodeRole(r) == "master" }); err != nil {
		return "", err
	}
	s.note("127.0.0.1:%d is the new primary, %.2fs after the kill (failure detection, cluster-node-timeout %v, then an election)",
		r.port, time.Since(killed).Seconds(), s.nt)
	rep, err = s.cli(r, "GET", key)
	if err != nil {
		return "", err
	}
	present := 0
	if rep.Str == "v2" {
		present = 1
	}
	return fmt.Sprintf("acknowledged: 1 write (SET %s v2), present after failover: %d", key, present), nil
}

// sceneCoverage: with a primary and its replica both down, no node takes
// writes while cluster-require-full-coverage is yes; with no, the other
// shards do, and the dead one's slots point at a node that is gone.
func sceneCoverage(s *scene) (string, error) {
	if err := s.cluster(3, 1, nil); err != nil {
		return "", err
	}
	live := s.node(1)
	keys := make([]string, 3)
	for i := range keys {
		keys[i], _ = s.keyIn(i, "k")
	}
	if _, err := s.cli(live, "SET", keys[1], "before"); err != nil {
		return "", err
	}
	s.signal(s.node(0), syscall.SIGKILL, "a primary dies")
	s.signal(s.node(3), syscall.SIGKILL, "and its replica")
	down := time.Now()
	if err := s.waitFor(30*time.Second, "the cluster to fail", func() bool {
		info, err := live.cli.Text("CLUSTER", "INFO")
		return err == nil && infoField(info, "cluster_state") == "fail"
	}); err != nil {
		return "", err
	}
	s.note("every node turns cluster_state:fail %.2fs later (the dead primary's slots are not served)",
		time.Since(down).Seconds())
	if _, err := s.cli(live, "CLUSTER", "INFO"); err != nil {
		return "", err
	}
	full := s.writable(keys)
	if _, err := s.cli(live, "SET", keys[1], "after"); err != nil {
		return "", err
	}
	if _, err := s.cli(live, "CONFIG", "SET", "cluster-require-full-coverage", "no"); err != nil {
		return "", err
	}
	for _, i := range []int{2, 4, 5} {
		if _, err := s.node(i).cli.Do("CONFIG", "SET", "cluster-require-full-coverage", "no"); err != nil {
			return "", err
		}
	}
	s.note("(the same CONFIG SET on the other three nodes)")
	if err := s.waitFor(10*time.Second, "cluster_state:ok", func() bool {
		info, err := live.cli.Text("CLUSTER", "INFO")
		return err == nil && infoField(info, "cluster_state") == "ok"
	}); err != nil {
		return "", err
	}
	if _, err := s.cli(live, "SET", keys[1], "after"); err != nil {
		return "", err
	}
	if _, err := s.cli(live, "SET", keys[0], "after"); err != nil {
		return "", err
	}
	s.note("the dead shard's slots still name 127.0.0.1:%d, which refuses connections", s.node(0).port)
	partial := s.writable(keys)
	info, _ := live.cli.Text("CLUSTER", "INFO")
	return fmt.Sprintf("shards taking writes with cluster-require-full-coverage yes: %d of 3; with no: %d of 3 "+
		"(slots served: %s of %d)", full, partial, infoField(info, "cluster_slots_ok"), slots.NumSlots), nil
}

// writable counts the keys a write succeeds for, following one MOVED.
func (s *scene) writable(keys []string) int {
	n := 0
	for _, k := range keys {
		for _, nd := range s.d.nodes {
			select {
			case <-nd.done:
				continue
			default:
			}
			rep, err := nd.cli.Do("SET", k, "probe")
			if err == nil && rep.Str == "OK" {
				n++
				break
			}
		}
	}
	return n
}
