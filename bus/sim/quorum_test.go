package sim

import (
	"fmt"
	"slices"
	"testing"

	"github.com/slotd/slotd/bus"
)

// The minority rule (bus/quorum.go): a primary cut off from the others
// turns its cluster state fail — it stops taking writes — within a Tick of
// the moment the last PONG it had from a majority of the primaries is a
// quorum timeout old, never before; with cluster-quorum-timeout shorter
// than the node timeout, that much earlier. A healthy cluster with the
// shorter timeout never turns fail.
func TestMinorityStopsOnTime(t *testing.T) {
	scenarioN(t, failoverSeeds, func(seed uint64, trace func(string)) error {
		short := seed%2 == 1
		var q int64
		l, err := buildCluster(seed, shape{replicas: []int{1, 1, 1}}, trace, func(_ int, o *bus.Options) {
			if short {
				o.QuorumTimeout = max(o.NodeTimeout/4, 500)
			}
			q = o.NodeTimeout
			if short {
				q = o.QuorumTimeout
			}
		})
		if err != nil {
			return err
		}
		n := l.n
		n.cfg.Loss = 0 // a lost frame may cost an early PONG, which would blur the bound
		var flapped error
		n.RunUntil(5*n.cfg.NodeTimeout, func() bool {
			flapped = l.allOK()
			return flapped != nil
		})
		if flapped != nil {
			return fmt.Errorf("healthy cluster turned fail (quorum timeout %d): %v", q, flapped)
		}
		k := n.Rand().IntN(3)
		victim := l.primary[k]
		v := n.Nodes[victim].State
		n.Partition([]int{victim}, l.others(victim))
		cut := n.Now()
		// The others' last answers to the victim's PINGs: it needs one more
		// primary than itself for a majority of 3.
		var pongs []int64
		for _, p := range l.primary {
			if p != victim {
				pongs = append(pongs, v.LastOwnPong(n.Nodes[p].ID))
			}
		}
		slices.Sort(pongs)
		deadline := pongs[len(pongs)-1] + q
		if lease := v.WriteLease(); lease != deadline {
			return fmt.Errorf("write lease %+d ms after the cut, want %+d (the same instant)", lease-cut, deadline-cut)
		}
		if deadline <= cut {
			return fmt.Errorf("the last PONG from the majority was already %d ms old at the cut", cut-pongs[len(pongs)-1])
		}
		n.Run(deadline - n.Now())
		if !v.OK() {
			return fmt.Errorf("state fail already %+d ms after the cut, before the quorum timeout after the last PONG (%+d)",
				n.Now()-cut, deadline-cut)
		}
		for v.OK() && n.Now() < deadline+2*q {
			n.Run(1)
		}
		failed := n.Now()
		if failed > deadline+bus.TickInterval {
			return fmt.Errorf("state fail at %+d ms, want within a Tick after %+d (last PONG from the majority %+d, quorum timeout %d)",
				failed-cut, deadline-cut, pongs[len(pongs)-1]-cut, q)
		}
		n.Heal()
		if !n.RunUntil(60000, func() bool { return n.SlotsAgree() == nil && l.allOK() == nil }) {
			return fmt.Errorf("no agreement after healing: %v / %v (%v)", n.SlotsAgree(), l.allOK(), n.Err())
		}
		return settle(n, 1000)
	})
}
