package faults

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Proxy forwards every port a node announces to the node, and applies the
// link rules between the dialling side and the node: who dials is known
// from the source address (node i from 10.N.0.i, 0 for the test's own
// clients). A cut direction stalls — bytes wait in the proxy and in the
// kernel's buffers until the cut heals, as over a real partition where TCP
// keeps retransmitting; a delay holds each chunk that long.
type Proxy struct {
	host     string              // the address it listens on
	sourceOf func(ip string) int // the node dialling from ip (0: a client)
	mu       sync.Mutex
	cut      map[[2]int]bool          // [from, to]: bytes from → to stall
	lag      map[[2]int]time.Duration // [from, to]: added latency
	// changed is closed and replaced at every rule change (stalled copies
	// wait on it).
	changed   chan struct{}
	listeners []net.Listener
	conns     map[net.Conn]struct{}
	closed    bool
}

// NewProxy returns a proxy with no rules for the nodes of n.
func NewProxy(n *Net) *Proxy {
	prefix := fmt.Sprintf("10.%d.0.", n.Subnet)
	return NewLocalProxy(n.HostIP(), func(ip string) int {
		if !strings.HasPrefix(ip, prefix) {
			return 0
		}
		i, err := strconv.Atoi(strings.TrimPrefix(ip, prefix))
		if err != nil || i == 254 {
			return 0
		}
		return i
	})
}

// NewLocalProxy returns a proxy listening on host that tells the dialling
// node by its source address with sourceOf (0: a client): with nodes that
// dial from addresses of their own (bind-source-addr), it works without
// namespaces, on the loopback network.
func NewLocalProxy(host string, sourceOf func(ip string) int) *Proxy {
	return &Proxy{host: host, sourceOf: sourceOf, cut: map[[2]int]bool{}, lag: map[[2]int]time.Duration{},
		changed: make(chan struct{}), conns: map[net.Conn]struct{}{}}
}

// Forward listens on the host address at port and forwards to node's
// address at target.
func (p *Proxy) Forward(port, node int, target string) error {
	l, err := net.Listen("tcp", net.JoinHostPort(p.host, strconv.Itoa(port)))
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.listeners = append(p.listeners, l)
	p.mu.Unlock()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go p.serve(c, node, target)
		}
	}()
	return nil
}

// source is the node a connection comes from (0: a client).
func (p *Proxy) source(c net.Conn) int {
	host, _, _ := net.SplitHostPort(c.RemoteAddr().String())
	return p.sourceOf(host)
}

func (p *Proxy) serve(c net.Conn, node int, target string) {
	from := p.source(c)
	up, err := net.DialTimeout("tcp", target, 5*time.Second)
	if err != nil {
		_ = c.Close()
		return
	}
	if !p.track(c, up) {
		return
	}
	done := make(chan struct{}, 2)
	go func() { p.copy(up, c, from, node); done <- struct{}{} }()
	go func() { p.copy(c, up, node, from); done <- struct{}{} }()
	<-done
	_ = c.Close()
	_ = up.Close()
	<-done
	p.untrack(c, up)
}

func (p *Proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		for _, c := range cs {
			_ = c.Close()
		}
		return false
	}
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *Proxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.conns, c)
	}
}

// chunk is bytes read at a time.
type chunk struct {
	b  []byte
	at time.Time
}

// copy moves bytes from src to dst, the direction from → to: a reader
// stamps each chunk, a writer delivers it once its delay has passed and
// the direction is not cut.
func (p *Proxy) copy(dst, src net.Conn, from, to int) {
	q := make(chan chunk, 256)
	go func() {
		defer close(q)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				q <- chunk{buf[:n], time.Now()}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range q {
		if !p.pass(from, to, c.at) {
			break
		}
		if _, err := dst.Write(c.b); err != nil {
			break
		}
	}
	if tc, ok := dst.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
	_ = src.Close() // a reader still blocked ends
	for range q {
	}
}

// pass waits while from → to is cut, then until the chunk read at at has
// been delayed enough; false when the proxy closed meanwhile.
func (p *Proxy) pass(from, to int, at time.Time) bool {
	key := [2]int{from, to}
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return false
		}
		cut, lag, ch := p.cut[key], p.lag[key], p.changed
		p.mu.Unlock()
		if !cut {
			if wait := time.Until(at.Add(lag)); wait > 0 {
				time.Sleep(wait)
			}
			return true
		}
		<-ch
	}
}

func (p *Proxy) notify() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// Cut stalls bytes from each node of from to each node of to (one way).
func (p *Proxy) Cut(from, to []int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, a := range from {
		for _, b := range to {
			if a != b {
				p.cut[[2]int{a, b}] = true
			}
		}
	}
	p.notify()
}

// Partition cuts both ways between group a and group b.
func (p *Proxy) Partition(a, b []int) {
	p.Cut(a, b)
	p.Cut(b, a)
}

// Delay adds d to every chunk from each node of from to each node of to.
func (p *Proxy) Delay(from, to []int, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, a := range from {
		for _, b := range to {
			if a != b {
				p.lag[[2]int{a, b}] = d
			}
		}
	}
	p.notify()
}

// Heal lifts every cut and delay.
func (p *Proxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	clear(p.cut)
	clear(p.lag)
	p.notify()
}

// Close stops listening and closes every connection.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	ls := p.listeners
	cs := make([]net.Conn, 0, len(p.conns))
	for c := range p.conns {
		cs = append(cs, c)
	}
	p.notify()
	p.mu.Unlock()
	for _, l := range ls {
		_ = l.Close()
	}
	for _, c := range cs {
		_ = c.Close()
	}
}
