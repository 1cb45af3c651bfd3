package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Net is a bridge in the caller's namespace and one namespace per node.
type Net struct {
	// Subnet is the second octet of 10.N.0.0/24.
	Subnet int
	// Names of the namespaces, node i (1-based) at index i-1.
	NS     []string
	bridge string
	tag    string
}

// HostIP is the proxy's address, in the caller's namespace.
func (n *Net) HostIP() string { return fmt.Sprintf("10.%d.0.254", n.Subnet) }

// NodeIP is node i's address (i from 1).
func (n *Net) NodeIP(i int) string { return fmt.Sprintf("10.%d.0.%d", n.Subnet, i) }

// ip runs the ip command.
func ip(args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Available reports why namespaces cannot be used here ("" when they can):
// not root, no ip command, or a kernel without network namespaces.
func Available() string {
	if os.Geteuid() != 0 {
		return "the fault suite needs root (network namespaces)"
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return "the fault suite needs the ip command (iproute2)"
	}
	name := "sdprobe" + strconv.Itoa(os.Getpid()%100000)
	if err := ip("netns", "add", name); err != nil {
		return "network namespaces unavailable: " + err.Error()
	}
	_ = ip("netns", "del", name)
	return ""
}

// NewNet creates the bridge and nodes namespaces, on a subnet no
// interface of the caller's namespace uses. Close removes them.
func NewNet(nodes int) (*Net, error) {
	used, _ := exec.Command("ip", "-o", "addr").Output()
	var n *Net
	var err error
	for try := 0; try < 10; try++ {
		tag := strconv.Itoa(os.Getpid()%10000) + strconv.Itoa(rand.IntN(100))
		n = &Net{Subnet: 100 + rand.IntN(150), bridge: "sdbr" + tag, tag: tag}
		if strings.Contains(string(used), fmt.Sprintf(" 10.%d.0.", n.Subnet)) {
			continue
		}
		if err = ip("link", "add", n.bridge, "type", "bridge"); err == nil {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	steps := [][]string{
		{"addr", "add", n.HostIP() + "/24", "dev", n.bridge},
		{"link", "set", n.bridge, "up"},
	}
	for i := 1; i <= nodes; i++ {
		ns := fmt.Sprintf("sd%s-%d", n.tag, i)
		host := fmt.Sprintf("sdv%s-%d", n.tag, i)
		n.NS = append(n.NS, ns)
		steps = append(steps,
			[]string{"netns", "add", ns},
			[]string{"link", "add", host, "type", "veth", "peer", "name", "eth0", "netns", ns},
			[]string{"link", "set", host, "master", n.bridge},
			[]string{"link", "set", host, "up"},
			[]string{"-n", ns, "addr", "add", n.NodeIP(i) + "/24", "dev", "eth0"},
			[]string{"-n", ns, "link", "set", "eth0", "up"},
			[]string{"-n", ns, "link", "set", "lo", "up"},
		)
	}
	for _, s := range steps {
		if err := ip(s...); err != nil {
			n.Close()
			return nil, err
		}
	}
	return n, nil
}

// Command is a command run in node i's namespace.
func (n *Net) Command(i int, bin string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", n.NS[i-1], bin}, args...)...)
}

// Close removes the namespaces (and their veths) and the bridge.
func (n *Net) Close() {
	for _, ns := range n.NS {
		_ = ip("netns", "del", ns)
	}
	_ = ip("link", "del", n.bridge)
}
