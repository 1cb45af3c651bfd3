package main

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slotd/slotd/cmd/slotd/faults"
	"github.com/slotd/slotd/netio/resp"
)

// sceneMinority: a primary and its client are cut off from the rest of
// the cluster. The primary keeps acknowledging the client's writes until
// its lease runs out (cluster-node-timeout after the last PONG from a
// majority), the majority promotes its replica, and after the heal the
// writes it acknowledged meanwhile are gone.
//
// The partition needs links between nodes that can be cut one by one: each
// node announces ports of a proxy in this process and dials its peers from
// an address of its own (bind-source-addr 127.0.0.11, .12, ...), so the
// proxy knows who is talking; this client is not cut off.
func sceneMinority(s *scene) (string, error) {
	total := 6
	proxy := faults.NewLocalProxy("127.0.0.1", func(ip string) int {
		if v, ok := strings.CutPrefix(ip, "127.0.0."); ok {
			if i, err := strconv.Atoi(v); err == nil && i > 10 && i <= 10+total {
				return i - 10
			}
		}
		return 0
	})
	defer proxy.Close()
	for i := 0; i < total; i++ {
		real := s.port + total + i
		if err := proxy.Forward(s.port+i, i+1, net.JoinHostPort("127.0.0.1", strconv.Itoa(real))); err != nil {
			return "", err
		}
		if err := proxy.Forward(s.port+i+10000, i+1, net.JoinHostPort("127.0.0.1", strconv.Itoa(real+10000))); err != nil {
			return "", err
		}
	}
	if err := s.cluster(3, 1, func(i int) []string {
		real := s.port + total + i
		return []string{"--port", strconv.Itoa(real), "--cluster-port", strconv.Itoa(real + 10000),
			"--cluster-announce-port", strconv.Itoa(s.port + i),
			"--cluster-announce-bus-port", strconv.Itoa(s.port + i + 10000),
			"--bind-source-addr", "127.0.0." + strconv.Itoa(11+i)}
	}); err != nil {
		return "", err
	}
	p, r := s.node(0), s.node(3)
	tag, _ := s.keyIn(0, "orders")
	list := "{" + tag + "}:log"
	if _, err := s.cli(p, "RPUSH", list, "0"); err != nil {
		return "", err
	}
	s.note("a client keeps appending to %s on 127.0.0.1:%d", list, p.port)
	w := &minorityWriter{cli: &resp.Client{Addr: "127.0.0.1:" + strconv.Itoa(p.port), Timeout: time.Second},
		stop: make(chan struct{}), done: make(chan struct{})}
	go w.run(list)
	defer w.halt()
	time.Sleep(300 * time.Millisecond)
	proxy.Partition([]int{1}, []int{2, 3, 4, 5, 6})
	cut := time.Now()
	s.note("partition: 127.0.0.1:%d (and the client) | the five other nodes", p.port)
	if err := s.waitFor(30*time.Second, "the primary to refuse writes", func() bool { return w.firstErr() != "" }); err != nil {
		return "", err
	}
	stopped, errText := w.errAt()
	accepted := w.sentAfter(cut)
	s.note("127.0.0.1:%d refuses writes %.2fs after the cut: (error) %s — it acknowledged %d writes since the cut",
		p.port, stopped.Sub(cut).Seconds(), errText, len(accepted))
	if err := s.waitFor(30*time.Second, "the replica to take over", func() bool { return nodeRole(r) == "master" }); err != nil {
		return "", err
	}
	s.note("the majority promoted 127.0.0.1:%d, %.2fs after the cut", r.port, time.Since(cut).Seconds())
	w.halt()
	proxy.Heal()
	healed := time.Now()
	s.note("the partition heals")
	if err := s.waitFor(30*time.Second, "the old primary to follow the new one", func() bool {
		info, err := p.cli.Text("INFO", "replication")
		return err == nil && strings.Contains(info, "role:slave") && strings.Contains(info, "master_link_status:up")
	}); err != nil {
		return "", err
	}
	s.note("127.0.0.1:%d is a replica of 127.0.0.1:%d %.2fs later, with the new primary's data", p.port, r.port,
		time.Since(healed).Seconds())
	rep, err := s.cli(r, "LLEN", list)
	if err != nil {
		return "", err
	}
	all, err := r.cli.Do("LRANGE", list, "0", "-1")
	if err != nil {
		return "", err
	}
	have := map[string]bool{}
	for _, e := range all.Elems {
		have[e.Str] = true
	}
	present := 0
	for _, v := range accepted {
		if have[v] {
			present++
		}
	}
	_ = rep
	return fmt.Sprintf("acknowledged by the cut-off primary after the cut: %d writes in %.2fs; present after the heal: %d (lost %d)",
		len(accepted), stopped.Sub(cut).Seconds(), present, len(accepted)-present), nil
}

// minorityWriter appends increasing numbers to a list, one at a time, and
// remembers which were acknowledged, when each of those was sent, and its
// first error.
type minorityWriter struct {
	cli  *resp.Client
	mu   sync.Mutex
	acks []string
	sent []time.Time
	err  string
	errT time.Time
	stop chan struct{}
	once sync.Once
	done chan struct{}
}

func (w *minorityWriter) run(list string) {
	defer close(w.done)
	for i := 1; ; i++ {
		select {
		case <-w.stop:
			return
		default:
		}
		v := strconv.Itoa(i)
		sent := time.Now()
		rep, err := w.cli.Do("RPUSH", list, v)
		now := time.Now()
		w.mu.Lock()
		switch {
		case err == nil && rep.Type == ':':
			w.acks = append(w.acks, v)
			w.sent = append(w.sent, sent)
		case w.err == "":
			w.err, w.errT = rep.Str, now
			if err != nil {
				w.err = err.Error()
			}
		}
		w.mu.Unlock()
		if err != nil || rep.Type != ':' {
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func (w *minorityWriter) halt() {
	w.once.Do(func() {
		close(w.stop)
		<-w.done
		w.cli.Close()
	})
}

func (w *minorityWriter) firstErr() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *minorityWriter) errAt() (time.Time, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.errT, w.err
}

// sentAfter are the acknowledged values sent after t. A write sent before
// the cut and acknowledged after it may have reached the replica before
// the cut (its reply was on its way): neither lost nor taken by a primary
// already cut off, so it is not counted.
func (w *minorityWriter) sentAfter(t time.Time) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for i, at := range w.sent {
		if at.After(t) {
			out = append(out, w.acks[i])
		}
	}
	return out
}
