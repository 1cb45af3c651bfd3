package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/slotd/slotd/netio/resp"
	"github.com/slotd/slotd/slots"
)

// demoUsage is printed by "slotd demo -h" (followed by the scenarios).
const demoUsage = `usage: slotd demo [--nodes N] [--replicas R] [--port P] [--dir D] [--timeout T]
       slotd demo <scenario> [--port P]

Starts a local slotd cluster of N primaries (default 3), each with R replicas
(default 1), as child processes on 127.0.0.1:P, P+1, ... (bus ports P+10000,
...): the first N are the primaries. It assigns the hash slots evenly to the
primaries, joins the nodes with CLUSTER MEET, makes the others replicas with
CLUSTER REPLICATE, waits until every node reports cluster_state:ok and every
replica is in sync, and prints how to connect. Ctrl-C (or SIGTERM) stops every
node. Each node logs to D/<port>/slotd.log; without --dir, D is a temporary
directory removed at exit.
`

// demoNode is one child process.
type demoNode struct {
	port int
	dir  string
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // its exit status, once done
	cli  *resp.Client
}

// runDemo is "slotd demo": it returns the process exit code.
func runDemo(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		return runScenario(args[0], args[1:], stdout, stderr) // demo_scenarios.go
	}
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, demoUsage+scenarioList()) }
	nodes := fs.Int("nodes", 3, "number of primaries")
	replicas := fs.Int("replicas", 1, "replicas per primary")
	port := fs.Int("port", 7000, "client port of the first node")
	dir := fs.String("dir", "", "data directory (default: a temporary one, removed at exit)")
	timeout := fs.Duration("timeout", 60*time.Second, "how long to wait for the cluster to come up")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "slotd demo: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return 2
	}
	if *nodes < 1 || *nodes > slots.NumSlots {
		fmt.Fprintf(stderr, "slotd demo: --nodes must be between 1 and %d\n", slots.NumSlots)
		return 2
	}
	if *replicas < 0 || *replicas > 16 {
		fmt.Fprintln(stderr, "slotd demo: --replicas must be between 0 and 16")
		return 2
	}
	total := *nodes * (1 + *replicas)
	if *port < 1 || *port+total-1 > 65535-10000 {
		fmt.Fprintln(stderr, "slotd demo: --port out of range (the bus ports are port+10000)")
		return 2
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stderr, "slotd demo: can't find my own binary:", err)
		return 1
	}
	base := *dir
	if base == "" {
		if base, err = os.MkdirTemp("", "slotd-demo-"); err != nil {
			fmt.Fprintln(stderr, "slotd demo:", err)
			return 1
		}
		defer os.RemoveAll(base)
	}

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case s := <-sig:
			fmt.Fprintf(stdout, "\nReceived %s, stopping the cluster...\n", s)
			cancel()
		case <-ctx.Done():
		}
	}()

	d := &demo{stdout: stdout, stderr: stderr, primaries: *nodes}
	defer d.stopAll()
	for i := 0; i < total; i++ {
		p := *port + i
		nd, err := d.start(self, p, filepath.Join(base, strconv.Itoa(p)), "--cluster-node-timeout", "5000")
		if err != nil {
			fmt.Fprintf(stderr, "slotd demo: node %d: %v\n", p, err)
			return 1
		}
		d.nodes = append(d.nodes, nd)
	}
	upCtx, upCancel := context.WithTimeout(ctx, *timeout)
	err = d.form(upCtx)
	upCancel()
	if err != nil {
		if ctx.Err() != nil {
			return 0 // interrupted during start-up
		}
		fmt.Fprintln(stderr, "slotd demo:", err)
		fmt.Fprintf(stderr, "node logs are in %s/<port>/slotd.log\n", base)
		if *dir == "" {
			d.dumpLogs()
		}
		return 1
	}
	fmt.Fprintf(stdout, "\nCluster ready: %d primaries on 127.0.0.1:%d-%d", *nodes, *port, *port+*nodes-1)
	if *replicas > 0 {
		fmt.Fprintf(stdout, ", %d replicas on 127.0.0.1:%d-%d", total-*nodes, *port+*nodes, *port+total-1)
	}
	fmt.Fprintf(stdout, " (data in %s).\n", base)
	fmt.Fprintf(stdout, "Connect with:\n\n    redis-cli -c -p %d\n\nPress Ctrl-C to stop.\n", *port)

	// Run until a signal, or until a node dies on its own.
	died := make(chan *demoNode, len(d.nodes))
	for _, nd := range d.nodes {
		go func(nd *demoNode) {
			<-nd.done
			died <- nd
		}(nd)
	}
	select {
	case <-ctx.Done():
		return 0
	case nd := <-died:
		if ctx.Err() != nil {
			return 0
		}
		fmt.Fprintf(stderr, "slotd demo: node %d exited (%v); stopping the cluster\n", nd.port, nd.err)
		return 1
	}
}

type demo struct {
	stdout, stderr io.Writer
	nodes          []*demoNode // the primaries first
	primaries      int
	stopOnce       sync.Once
	quiet          bool // scenarios narrate themselves
}

// say prints a line about the cluster's set-up (not in scenarios).
func (d *demo) say(format string, args ...any) {
	if !d.quiet {
		fmt.Fprintf(d.stdout, format, args...)
	}
}

// start launches one node in dir with its log in dir/slotd.log; extra
// directives follow the defaults.
func (d *demo) start(self string, port int, dir string, extra ...string) (*demoNode, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
		"--cluster-config-file", "nodes.conf", "--dir", dir, "--logfile", "slotd.log", "--save", ""}, extra...)
	cmd := exec.Command(self, args...)
	cmd.Dir = dir
	setChildAttrs(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	nd := &demoNode{port: port, dir: dir, cmd: cmd, done: make(chan struct{})}
	go func() {
		nd.err = cmd.Wait()
		close(nd.done)
	}()
	nd.cli = &resp.Client{Addr: "127.0.0.1:" + strconv.Itoa(port), Timeout: 5 * time.Second}
	d.say("started node 127.0.0.1:%d (pid %d)\n", port, cmd.Process.Pid)
	return nd, nil
}

// form waits for every node to answer, gives each an even share of the
// slots and a distinct config epoch (unless it already serves slots: a
// --dir reused from an earlier run), meets them with the first node and
// waits for cluster_state:ok everywhere.
func (d *demo) form(ctx context.Context) error {
	for _, nd := range d.nodes {
		if err := poll(ctx, nd, "to accept connections", func() (bool, error) {
			_, err := nd.cli.Text("ping")
			return err == nil, nil
		}); err != nil {
			return err
		}
	}
	n := d.primaries
	for i, nd := range d.nodes[:n] {
		info, err := nd.cli.Text("cluster", "info")
		if err != nil {
			return fmt.Errorf("node %d: CLUSTER INFO: %w", nd.port, err)
		}
		if infoField(info, "cluster_slots_assigned") != "0" {
			continue // data dir of an earlier run: the node keeps its slots
		}
		lo, hi := i*slots.NumSlots/n, (i+1)*slots.NumSlots/n-1
		if _, err := nd.cli.Text("cluster", "addslotsrange", strconv.Itoa(lo), strconv.Itoa(hi)); err != nil {
			return fmt.Errorf("node %d: CLUSTER ADDSLOTSRANGE %d %d: %w", nd.port, lo, hi, err)
		}
		// Distinct epochs up front, as redis-cli --cluster create does,
		// spare the nodes a round of epoch-collision resolution.
		_, _ = nd.cli.Do("cluster", "set-config-epoch", strconv.Itoa(i+1))
		d.say("node %d serves slots %d-%d\n", nd.port, lo, hi)
	}
	first := d.nodes[0]
	for _, nd := range d.nodes[1:] {
		if _, err := nd.cli.Text("cluster", "meet", "127.0.0.1", strconv.Itoa(first.port)); err != nil {
			return fmt.Errorf("node %d: CLUSTER MEET: %w", nd.port, err)
		}
	}
	d.say("waiting for the cluster to agree...\n")
	for _, nd := range d.nodes {
		if err := poll(ctx, nd, "to report cluster_state:ok", func() (bool, error) {
			info, err := nd.cli.Text("cluster", "info")
			if err != nil {
				return false, nil
			}
			return infoField(info, "cluster_state") == "ok" &&
				infoField(info, "cluster_known_nodes") == strconv.Itoa(len(d.nodes)), nil
		}); err != nil {
			return err
		}
	}
	return d.pair(ctx)
}

// pair makes node n+i a replica of primary i%n (n primaries) and waits
// until every replica's link is up.
func (d *demo) pair(ctx context.Context) error {
	n := d.primaries
	ids := make([]string, n)
	for i, nd := range d.nodes[:n] {
		id, err := nd.cli.Text("cluster", "myid")
		if err != nil {
			return fmt.Errorf("node %d: CLUSTER MYID: %w", nd.port, err)
		}
		ids[i] = id
	}
	for i, nd := range d.nodes[n:] {
		info, err := nd.cli.Text("info", "replication")
		if err != nil {
			return fmt.Errorf("node %d: INFO: %w", nd.port, err)
		}
		if strings.Contains(info, "role:slave") {
			continue // data dir of an earlier run: already a replica
		}
		p := d.nodes[i%n]
		if _, err := nd.cli.Text("cluster", "replicate", ids[i%n]); err != nil {
			return fmt.Errorf("node %d: CLUSTER REPLICATE %s: %w", nd.port, ids[i%n], err)
		}
		d.say("node %d replicates node %d\n", nd.port, p.port)
	}
	for _, nd := range d.nodes[n:] {
		if err := poll(ctx, nd, "to sync with its primary", func() (bool, error) {
			info, err := nd.cli.Text("info", "replication")
			return err == nil && strings.Contains(info, "master_link_status:up"), nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// poll calls cond every 100 ms until it holds, fails, the node exits or ctx
// ends.
func poll(ctx context.Context, nd *demoNode, what string, cond func() (bool, error)) error {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("timed out waiting for node %d %s", nd.port, what)
		case <-nd.done:
			return fmt.Errorf("node %d exited (%v) while waiting for it %s", nd.port, nd.err, what)
		case <-t.C:
		}
	}
}

// stopAll sends SIGTERM to every node, waits up to 10 s, then kills the
// ones still running.
func (d *demo) stopAll() {
	d.stopOnce.Do(func() {
		for _, nd := range d.nodes {
			nd.cli.Close()
			_ = nd.cmd.Process.Signal(syscall.SIGTERM)
		}
		deadline := time.NewTimer(10 * time.Second)
		defer deadline.Stop()
		expired := false
		for _, nd := range d.nodes {
			if !expired {
				select {
				case <-nd.done:
					continue
				case <-deadline.C:
					expired = true
				}
			}
			select {
			case <-nd.done:
			default:
				fmt.Fprintf(d.stderr, "node %d did not stop in time: killing it\n", nd.port)
				_ = nd.cmd.Process.Kill()
				<-nd.done
			}
		}
		d.say("all nodes stopped\n")
	})
}

// dumpLogs prints the tail of each node's log (the temp dir is about to go).
func (d *demo) dumpLogs() {
	for _, nd := range d.nodes {
		b, err := os.ReadFile(filepath.Join(nd.dir, "slotd.log"))
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		if len(lines) > 20 {
			lines = lines[len(lines)-20:]
		}
		fmt.Fprintf(d.stderr, "--- node %d log (tail) ---\n%s\n", nd.port, strings.Join(lines, "\n"))
	}
}

// infoField returns a field of CLUSTER INFO text.
func infoField(info, field string) string {
	for _, l := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			return v
		}
	}
	return ""
}
