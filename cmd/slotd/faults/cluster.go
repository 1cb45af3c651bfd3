package faults

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/slotd/slotd/netio/resp"
)

// Ports inside every namespace, and the proxy's on the host address: node
// i's client port is ClientBase+i there, its bus port ClientBase+i+10000 (clear
// of the ports Redis's test suites use: 21111+, 30000+, 40000+, 45000+).
const (
	NodePort   = 7000
	NodeBus    = 17000
	ClientBase = 33000
)

// Cluster is one server process per namespace behind the proxy.
type Cluster struct {
	Net   *Net
	Proxy *Proxy
	Nodes []*Node
	// Bin is the server binary (slotd or redis-server); Args are added to
	// every node's command line.
	Bin  string
	Args []string
}

// Node is one server.
type Node struct {
	I   int
	Dir string
	mu  sync.Mutex
	cmd *exec.Cmd
	log *os.File
	// done is closed when the process exits.
	done chan struct{}
}

// Addr is the node's address as clients and peers use it (the proxy).
func (c *Cluster) Addr(i int) string {
	return net.JoinHostPort(c.Net.HostIP(), strconv.Itoa(ClientBase+i))
}

// Direct is the node's own address, bypassing the proxy (for checks).
func (c *Cluster) Direct(i int) string {
	return net.JoinHostPort(c.Net.NodeIP(i), strconv.Itoa(NodePort))
}

// Addrs are every node's proxied address.
func (c *Cluster) Addrs() []string {
	var out []string
	for i := range c.Nodes {
		out = append(out, c.Addr(i+1))
	}
	return out
}

// StartCluster creates n namespaces and starts a server in each, with data
// under dir, each reachable through the proxy.
func StartCluster(n int, bin, dir string, args ...string) (*Cluster, error) {
	nw, err := NewNet(n)
	if err != nil {
		return nil, err
	}
	c := &Cluster{Net: nw, Proxy: NewProxy(nw), Bin: bin, Args: args}
	for i := 1; i <= n; i++ {
		nd := &Node{I: i, Dir: filepath.Join(dir, strconv.Itoa(i))}
		if err := os.MkdirAll(nd.Dir, 0o755); err != nil {
			c.Close()
			return nil, err
		}
		c.Nodes = append(c.Nodes, nd)
		if err := c.Proxy.Forward(ClientBase+i, i, c.Direct(i)); err != nil {
			c.Close()
			return nil, err
		}
		bus := net.JoinHostPort(nw.NodeIP(i), strconv.Itoa(NodeBus))
		if err := c.Proxy.Forward(ClientBase+i+10000, i, bus); err != nil {
			c.Close()
			return nil, err
		}
		if err := c.Start(i); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// Start (re)starts node i's process and waits until it answers PING.
func (c *Cluster) Start(i int) error {
	nd := c.Nodes[i-1]
	args := append([]string{"--port", strconv.Itoa(NodePort), "--bind", c.Net.NodeIP(i), "--cluster-enabled", "yes",
		"--cluster-port", strconv.Itoa(NodeBus), "--dir", nd.Dir, "--cluster-announce-ip", c.Net.HostIP(),
		"--cluster-announce-port", strconv.Itoa(ClientBase + i),
		"--cluster-announce-bus-port", strconv.Itoa(ClientBase + i + 10000),
		"--save", "", "--appendonly", "no", "--protected-mode", "no", "--loglevel", "warning"}, c.Args...)
	cmd := c.Net.Command(i, c.Bin, args...)
	log, err := os.OpenFile(filepath.Join(nd.Dir, "log.txt"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		_ = log.Close()
		return err
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		_ = log.Close()
		close(done)
	}()
	nd.mu.Lock()
	nd.cmd, nd.log, nd.done = cmd, log, done
	nd.mu.Unlock()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if reply, err := Do(c.Direct(i), time.Second, "PING"); err == nil && reply == "PONG" {
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("node %d exited during start-up:\n%s", i, c.Log(i))
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("node %d does not answer PING", i)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Signal sends sig to node i.
func (c *Cluster) Signal(i int, sig syscall.Signal) error {
	nd := c.Nodes[i-1]
	nd.mu.Lock()
	defer nd.mu.Unlock()
	if nd.cmd == nil || nd.cmd.Process == nil {
		return fmt.Errorf("node %d not running", i)
	}
	return nd.cmd.Process.Signal(sig)
}

// Kill stops node i with SIGKILL and waits for it.
func (c *Cluster) Kill(i int) {
	nd := c.Nodes[i-1]
	nd.mu.Lock()
	cmd, done := nd.cmd, nd.done
	nd.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGCONT)
	_ = cmd.Process.Kill()
	<-done
}

// Log is node i's log so far.
func (c *Cluster) Log(i int) string {
	b, _ := os.ReadFile(filepath.Join(c.Nodes[i-1].Dir, "log.txt"))
	return string(b)
}

// Create forms the cluster with redis-cli --cluster create (replicas per
// primary), over the proxy.
func (c *Cluster) Create(replicas int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{"--cluster", "create"}, c.Addrs()...)
	args = append(args, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	out, err := exec.CommandContext(ctx, "redis-cli", args...).CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("[OK] All 16384 slots covered.")) {
		return fmt.Errorf("redis-cli --cluster create: %v\n%s", err, out)
	}
	return nil
}

// Close kills every node and removes the proxy and the namespaces.
func (c *Cluster) Close() {
	for i := range c.Nodes {
		c.Kill(i + 1)
	}
	c.Proxy.Close()
	c.Net.Close()
}

// Do sends one command over a fresh connection and returns the reply's
// text (an error reply as an error): the suite's checks bypass the proxy
// with it.
func Do(addr string, timeout time.Duration, args ...string) (string, error) {
	c := &resp.Client{Addr: addr, Timeout: timeout}
	defer c.Close()
	return c.Text(args...)
}
