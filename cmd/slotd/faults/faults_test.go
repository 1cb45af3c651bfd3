package faults

import (
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The documented loss windows (README, "Failover"): an acknowledged write
// may be lost only if the primary that acknowledged it lost its shard in a
// fault that cut it off from the majority or stopped it, and it
// acknowledged the write
//   - async: at most asyncLag before the fault began (replication is
//     asynchronous: the replica that took over may not have had it yet),
//     or up to inFlight after it (the reply was on its way: the client
//     stamps an acknowledgement when it reads it);
//   - minority: after the fault began and before the primary stopped
//     taking writes (the node timeout after its last PONG from a majority,
//     plus a Tick);
//   - wake: a stopped primary, right after it resumed and before it
//     learned it had been failed over.
const (
	asyncLag     = time.Second
	inFlight     = 200 * time.Millisecond
	minoritySpan = nodeTimeout + 300*time.Millisecond
	wakeSpan     = time.Second
)

// verdict reads every writer list back and sorts the acknowledged writes
// that are missing into the windows above (lost counts them by window,
// "unexplained" for those that fit none, the first of which are listed).
func (s *suite) verdict() (acked int, lost map[string]int, unexplained []string) {
	s.w.halt()
	lost = map[string]int{}
	for _, key := range s.w.keys {
		var vals []string
		var err error
		for try := 0; try < 50; try++ {
			if vals, err = s.w.cc.LRange(bgctx, key, 0, -1).Result(); err == nil {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if err != nil {
			s.t.Fatalf("LRANGE %s: %v", key, err)
		}
		present := make(map[int64]bool, len(vals))
		for _, v := range vals {
			n, _ := strconv.ParseInt(v, 10, 64)
			present[n] = true
		}
		for _, a := range s.w.acks[key] {
			acked++
			if present[a.seq] {
				continue
			}
			win := s.window(a)
			if win == "" {
				win = "unexplained"
				if len(unexplained) < 20 {
					unexplained = append(unexplained, fmt.Sprintf("%s #%d acknowledged by %s at %s", key, a.seq,
						a.addr, a.at.Format("15:04:05.000")))
				}
			}
			lost[win]++
		}
	}
	return acked, lost, unexplained
}

// window names the loss window that explains losing a ("" if none).
func (s *suite) window(a ack) string {
	node := 0
	for i := range s.c.Nodes {
		if s.c.Addr(i+1) == a.addr {
			node = i + 1
		}
	}
	for _, f := range s.faults {
		if !f.lostPrimary[node] {
			continue
		}
		switch {
		case f.kind != "sigstop" && a.at.After(f.start) && !a.at.After(f.start.Add(minoritySpan)):
			return "minority"
		case !a.at.Before(f.start.Add(-asyncLag)) && !a.at.After(f.start.Add(inFlight)):
			return "async"
		case f.kind == "sigstop" && !a.at.Before(f.end) && !a.at.After(f.end.Add(wakeSpan)):
			return "wake"
		}
	}
	return ""
}

var bgctx = contextBackground()

// others are the nodes other than skip.
func (s *suite) others(skip ...int) []int {
	var out []int
	for i := 1; i <= len(s.c.Nodes); i++ {
		isSkip := false
		for _, k := range skip {
			isSkip = isSkip || k == i
		}
		if !isSkip {
			out = append(out, i)
		}
	}
	return out
}

// inject runs one fault for hold, heals it and checks the invariants.
func (s *suite) inject(kind string, target int, hold time.Duration) {
	s.t.Helper()
	was := s.isPrimary()
	rest := s.others(target)
	var f *fault
	switch kind {
	case "partition": // both ways, the target alone (it keeps its clients)
		f = s.begin(kind, target)
		s.c.Proxy.Partition([]int{target}, rest)
	case "oneway-out": // the others do not hear the target
		f = s.begin(kind, target)
		s.c.Proxy.Cut([]int{target}, rest)
	case "oneway-in": // the target does not hear the others
		f = s.begin(kind, target)
		s.c.Proxy.Cut(rest, []int{target})
	case "sigstop":
		f = s.begin(kind, target)
		if err := s.c.Signal(target, syscall.SIGSTOP); err != nil {
			s.t.Fatal(err)
		}
	case "delay": // 300 ms on each of the target's bus and replication links
		f = s.begin(kind, target)
		s.c.Proxy.Delay([]int{target}, rest, 300*time.Millisecond)
		s.c.Proxy.Delay(rest, []int{target}, 300*time.Millisecond)
	default:
		s.t.Fatalf("unknown fault %s", kind)
	}
	time.Sleep(hold)
	if kind == "sigstop" {
		_ = s.c.Signal(target, syscall.SIGCONT)
	} else {
		s.c.Proxy.Heal()
	}
	f.end = time.Now()
	s.check()
	s.end(f, was)
	s.t.Logf("%v: primaries now %v, %d invariant checks so far", f, s.primaries(), s.checks)
}

// report logs what the run did and fails on unexplained losses.
func (s *suite) report() {
	s.t.Helper()
	acked, lost, unexplained := s.verdict()
	kinds := map[string]int{}
	failovers := 0
	for _, f := range s.faults {
		kinds[f.kind]++
		failovers += len(f.lostPrimary)
	}
	var ks []string
	for k, n := range kinds {
		ks = append(ks, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(ks)
	total := 0
	for _, n := range lost {
		total += n
	}
	s.t.Logf("faults injected: %d (%s), primaries failed over: %d; writes acknowledged: %d, lost: %d %v; "+
		"invariant checks passed: %d; writer errors (retried): %d", len(s.faults), strings.Join(ks, ", "), failovers,
		acked, total, lost, s.checks, s.w.errs.Load())
	if len(unexplained) > 0 {
		s.t.Errorf("acknowledged writes lost outside every documented window: %v", unexplained)
	}
}

// TestFaults: scripted faults, one of each kind, on a primary; then, with
// SLOTD_FAULTS_DURATION (a Go duration, e.g. 10m), random faults for that
// long.
func TestFaults(t *testing.T) {
	need(t) // before building slotd: where it skips, it skips at once
	s := newSuite(t, slotdBinary(t))
	s.startWriter(2)
	time.Sleep(500 * time.Millisecond)
	long := 2*nodeTimeout + 1500*time.Millisecond
	for _, step := range []struct {
		kind string
		hold time.Duration
	}{{"partition", long}, {"oneway-out", long}, {"oneway-in", 3 * time.Second}, {"sigstop", long},
		{"delay", 3 * time.Second}} {
		s.inject(step.kind, s.primaries()[0], step.hold)
	}
	if d, err := time.ParseDuration(os.Getenv("SLOTD_FAULTS_DURATION")); err == nil && d > 0 {
		s.random(d)
	}
	s.report()
}

// random injects random faults on random nodes for d.
func (s *suite) random(d time.Duration) {
	kinds := []string{"partition", "oneway-out", "oneway-in", "sigstop", "delay"}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		kind := kinds[rng.IntN(len(kinds))]
		target := 1 + rng.IntN(len(s.c.Nodes))
		if rng.IntN(2) == 0 {
			ps := s.primaries()
			target = ps[rng.IntN(len(ps))]
		}
		hold := time.Duration(500+rng.IntN(5500)) * time.Millisecond
		s.inject(kind, target, hold)
	}
}
