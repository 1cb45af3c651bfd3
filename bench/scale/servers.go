package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/slotd/slotd/bench/benchkit"
)

// side is one server side of a comparison: one process or the primaries of
// a cluster, all cluster-mode nodes that together own every slot.
type side struct {
	name  string
	procs []*benchkit.Proc
	bus   []int  // the cluster bus port of each process
	cpus  string // what the side is pinned to, for the record ("" = unpinned)
}

// entry is the address the load generators start from.
func (s *side) entry() *benchkit.Proc { return s.procs[0] }

// cpu is the user+system CPU time of every process of the side.
func (s *side) cpu() (time.Duration, error) {
	var sum time.Duration
	for _, p := range s.procs {
		d, err := p.CPU()
		if err != nil {
			return 0, fmt.Errorf("%s: %w", p.Name, err)
		}
		sum += d
	}
	return sum, nil
}

// check fails when a process of the side has exited.
func (s *side) check() error {
	for _, p := range s.procs {
		if gone, how := p.Exited(); gone {
			return fmt.Errorf("%s exited (%s)\n--- %s ---\n%s", p.Name, how, p.Log, benchkit.Tail(p.Log, 20))
		}
	}
	return nil
}

func (s *side) stop() {
	for _, p := range s.procs {
		p.Stop()
	}
}

// node describes one server process to start.
type node struct {
	kind  string // "slotd", "redis" or "valkey"
	cpus  string // taskset -c list, "" for none
	extra []string
}

// launch starts nodes as one side and forms them into a cluster: slots
// split evenly, distinct config epochs, everyone meets the first node, and
// every node reports cluster_state:ok and knows all the others.
func (st *study) launch(ctx context.Context, name, cpus string, nodes []node) (*side, error) {
	s := &side{name: name, cpus: cpus}
	for i, nd := range nodes {
		p, bus, err := st.start(ctx, fmt.Sprintf("%s-%d", name, i), nd)
		if err != nil {
			s.stop()
			return nil, err
		}
		s.procs, s.bus = append(s.procs, p), append(s.bus, bus)
	}
	if err := formCluster(ctx, s.procs, s.bus); err != nil {
		s.stop()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return s, nil
}

// start runs one cluster-mode node in its own directory under st.tmp and
// returns it with its bus port.
func (st *study) start(ctx context.Context, name string, nd node) (*benchkit.Proc, int, error) {
	port, err := benchkit.FreePort()
	if err != nil {
		return nil, 0, err
	}
	busPort, err := benchkit.FreePort()
	if err != nil {
		return nil, 0, err
	}
	dir, err := os.MkdirTemp(st.tmp, name+"-")
	if err != nil {
		return nil, 0, err
	}
	var argv []string
	if nd.cpus != "" {
		argv = []string{"taskset", "-c", nd.cpus} // taskset execs: the pid stays the server's
	}
	bin := map[string]string{"slotd": st.o.slotdBin, "redis": st.o.redisBin, "valkey": st.o.valkeyBin}[nd.kind]
	argv = append(argv, bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--save", "", "--appendonly", "no", "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
		"--cluster-port", strconv.Itoa(busPort), "--loglevel", "warning",
		// A lone node learns no address from a MEET: announce it, else
		// CLUSTER SLOTS reports "" and memtier cannot connect.
		"--cluster-announce-ip", "127.0.0.1")
	argv = append(argv, nd.extra...)
	p, err := benchkit.StartProc(ctx, name, port, argv, filepath.Join(dir, "log"))
	return p, busPort, err
}

// formCluster assigns the slots and joins the nodes (what redis-cli
// --cluster create does, also for 1 or 2 primaries, which it refuses).
func formCluster(ctx context.Context, procs []*benchkit.Proc, bus []int) error {
	n := len(procs)
	for i, p := range procs {
		cli := p.Client()
		lo, hi := i*16384/n, (i+1)*16384/n-1
		_, err := cli.Text("CLUSTER", "ADDSLOTSRANGE", strconv.Itoa(lo), strconv.Itoa(hi))
		if err == nil {
			_, err = cli.Text("CLUSTER", "SET-CONFIG-EPOCH", strconv.Itoa(i+1))
		}
		if err == nil && i > 0 {
			_, err = cli.Text("CLUSTER", "MEET", "127.0.0.1", strconv.Itoa(procs[0].Port), strconv.Itoa(bus[0]))
		}
		cli.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", p.Name, err)
		}
	}
	for _, p := range procs {
		cli := p.Client()
		err := p.Poll(ctx, 30*time.Second, func() bool {
			info, err := cli.Text("CLUSTER", "INFO")
			return err == nil && strings.Contains(info, "cluster_state:ok\r\n") &&
				strings.Contains(info, "cluster_known_nodes:"+strconv.Itoa(n)+"\r\n")
		})
		cli.Close()
		if err != nil {
			return fmt.Errorf("%s: waiting for cluster_state:ok with %d nodes: %w", p.Name, n, err)
		}
	}
	return nil
}

// sides starts the server sides of core count c on cpus.
func (st *study) sides(ctx context.Context, c int, cpus []int, valkey bool) ([]*side, error) {
	list := cpuList(cpus)
	var out []*side
	fail := func(err error) ([]*side, error) {
		for _, s := range out {
			s.stop()
		}
		return nil, err
	}
	add := func(name, pinned string, nodes ...node) error {
		s, err := st.launch(ctx, name, pinned, nodes)
		if err == nil {
			out = append(out, s)
		}
		return err
	}
	if err := add("slotd", list, node{kind: "slotd", cpus: list}); err != nil {
		return fail(err)
	}
	if err := add("redis", list, node{kind: "redis", cpus: list}); err != nil {
		return fail(err)
	}
	if c > 1 {
		nodes := make([]node, c)
		for i := range nodes {
			nodes[i] = node{kind: "redis", cpus: strconv.Itoa(cpus[i])}
		}
		if err := add("redis-cluster", list, nodes...); err != nil {
			return fail(err)
		}
	}
	if valkey {
		if err := add("valkey", list, node{kind: "valkey", cpus: list,
			extra: []string{"--io-threads", strconv.Itoa(c)}}); err != nil {
			return fail(err)
		}
	}
	return out, nil
}
