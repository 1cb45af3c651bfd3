package sim

import (
	"fmt"
	"testing"

	"github.com/slotd/slotd/bus"
	busv1 "github.com/slotd/slotd/proto/slotd/bus/v1"
)

// Manual failover scenarios (CLUSTER FAILOVER [FORCE|TAKEOVER]), with the
// checks of failover_test.go at every step.

// failoverDo runs CLUSTER FAILOVER on node i.
func failoverDo(n *Net, i int, mode bus.FailoverMode) error {
	return n.Do(i, func(s *bus.State, now int64) error { return s.Failover(now, mode) })
}

// CLUSTER FAILOVER: the replica wins its election (forced votes) while its
// primary still takes writes; then the primary pauses, the replica waits
// until it has applied everything the primary took before pausing (no
// acknowledged write is lost: it is told through AwaitOffset / Applied),
// claims the slots, and the old primary resumes as a replica of the new
// one. A replica that never catches up gives up after the manual-failover
// timeout and the primary resumes writes.
func TestManualFailover(t *testing.T) {
	scenarioN(t, failoverSeeds, func(seed uint64, trace func(string)) error {
		l, err := buildCluster(seed, shape{replicas: []int{1, 1, 1}}, trace, nil)
		if err != nil {
			return err
		}
		n := l.n
		// MFSTART is sent once, as in Redis: over TCP it is not lost.
		n.cfg.Loss = 0
		k := n.Rand().IntN(3)
		p, r := l.primary[k], l.replicas[k][0]
		l.setOffsets(map[int]uint64{p: 5000, r: 4000})
		if err := failoverDo(n, r, bus.FailoverDefault); err != nil {
			return err
		}
		if !n.RunUntil(2000, func() bool { return len(n.Nodes[p].Pauses) > 0 }) {
			return fmt.Errorf("primary never paused writes (%v)", n.Err())
		}
		if n.Nodes[r].State.Stats().Sent[bus.MsgMFStart] == 0 || n.Nodes[p].State.Stats().Received[bus.MsgMFStart] == 0 {
			return fmt.Errorf("MFSTART not counted")
		}
		if acks := n.Nodes[r].Received[busv1.Type_TYPE_FAILOVER_AUTH_ACK]; acks < 2 {
			return fmt.Errorf("primary paused before the replica had its votes (%d)", acks)
		}
		if !n.RunUntil(1000, func() bool { return len(n.Nodes[r].Awaits) > 0 }) {
			return fmt.Errorf("replica never asked to be told of its offset (%v)", n.Err())
		}
		if got := n.Nodes[r].Awaits[0]; got != 5000 {
			return fmt.Errorf("replica awaits offset %d, want 5000", got)
		}
		n.Run(1000)
		if n.Nodes[r].Promotions != 0 {
			return fmt.Errorf("replica promoted before catching up")
		}
		if seed%4 == 0 {
			// It never catches up.
			if !n.RunUntil(bus.MFTimeout+1000, func() bool { return len(n.Nodes[p].Unpauses) > 0 }) {
				return fmt.Errorf("primary still paused after the timeout (%v)", n.Err())
			}
			n.Run(2000)
			if me := n.Nodes[p].State.Myself(); n.Nodes[r].Promotions != 0 || !me.IsMaster() {
				return fmt.Errorf("failover happened without catching up")
			}
			return settle(n, 500)
		}
		applied := n.Now()
		if err := n.Applied(r, 5000); err != nil {
			return err
		}
		if n.Nodes[r].Promotions != 1 || n.Nodes[r].PromotedAt[0] != applied {
			return fmt.Errorf("replica not promoted the moment it caught up")
		}
		if _, err := l.waitPromoted(5000, l.slots[k][0], []int{r}, l.others()); err != nil {
			return err
		}
		rID := n.Nodes[r].ID
		if !n.RunUntil(10000, func() bool { return n.Nodes[p].State.Myself().MasterID == rID }) {
			return fmt.Errorf("old primary never became a replica (%v)", n.Err())
		}
		if len(n.Nodes[p].Unpauses) == 0 {
			return fmt.Errorf("old primary never resumed")
		}
		if !n.RunUntil(30000, func() bool { return n.SlotsAgree() == nil && l.allOK() == nil }) {
			return fmt.Errorf("no agreement: %v / %v (%v)", n.SlotsAgree(), l.allOK(), n.Err())
		}
		return settle(n, 1000)
	})
}

// A manual failover waits for no Tick: with a replica already caught up,
// the primary's writes are paused for two frame latencies (the PING that
// tells the paused offset, the PONG with the new configuration) and no
// more, and the whole hand-off takes seven (AUTH_REQUEST, AUTH_ACK,
// MFSTART, PING, PONG, plus the old primary's view of the new primary's
// slots) — all shorter than a Tick.
func TestManualFailoverWaitsForNoTick(t *testing.T) {
	scenarioN(t, failoverSeeds, func(seed uint64, trace func(string)) error {
		l, err := buildCluster(seed, shape{replicas: []int{1, 1, 1}}, trace, nil)
		if err != nil {
			return err
		}
		n := l.n
		n.cfg.Loss, n.cfg.Reorder = 0, 0
		k := n.Rand().IntN(3)
		p, r := l.primary[k], l.replicas[k][0]
		l.setOffsets(map[int]uint64{p: 5000, r: 5000})
		start := n.Now()
		if err := failoverDo(n, r, bus.FailoverDefault); err != nil {
			return err
		}
		rID := n.Nodes[r].ID
		if !n.RunUntil(5000, func() bool { return len(n.Nodes[p].Unpauses) > 0 }) {
			return fmt.Errorf("old primary never resumed (%v)", n.Err())
		}
		hop := n.cfg.MaxDelay
		paused := n.Nodes[p].Unpauses[0] - n.Nodes[p].PausedAt[0]
		if paused > 2*hop {
			return fmt.Errorf("writes paused %d ms, more than two hops of at most %d ms", paused, hop)
		}
		if me := n.Nodes[p].State.Myself(); me.MasterID != rID {
			return fmt.Errorf("old primary resumed without following the new one")
		}
		if took := n.Nodes[p].Unpauses[0] - start; took > 5*hop {
			return fmt.Errorf("hand-off took %d ms, more than five hops of at most %d ms", took, hop)
		}
		if len(n.Nodes[r].Awaits) != 0 {
			return fmt.Errorf("a caught-up replica asked to be told of its offset")
		}
		if !n.RunUntil(30000, func() bool { return n.SlotsAgree() == nil && l.allOK() == nil }) {
			return fmt.Errorf("no agreement: %v / %v (%v)", n.SlotsAgree(), l.allOK(), n.Err())
		}
		return settle(n, 1000)
	})
}

// A manual failover whose replica holds the votes but cannot reach its
// primary any more (partitioned right after CLUSTER FAILOVER): no pause
// ever reaches the primary; once the primary is FAIL the replica claims
// with the votes it holds, without a second election (the voters would
// refuse a new vote about that primary for twice the node timeout).
func TestManualFailoverPrimaryLostWithVotes(t *testing.T) {
	scenarioN(t, failoverSeeds, func(seed uint64, trace func(string)) error {
		l, err := buildCluster(seed, shape{replicas: []int{1, 1, 1}}, trace, nil)
		if err != nil {
			return err
		}
		n := l.n
		n.cfg.Loss = 0
		k := n.Rand().IntN(3)
		p, r := l.primary[k], l.replicas[k][0]
		if err := failoverDo(n, r, bus.FailoverDefault); err != nil {
			return err
		}
		n.Partition([]int{p}, l.others(p))
		if _, err := l.waitPromoted(4*n.cfg.NodeTimeout, l.slots[k][0], []int{r}, l.others(p)); err != nil {
			return err
		}
		// One election: one request to every other node.
		if req := n.Nodes[r].Sent[busv1.Type_TYPE_FAILOVER_AUTH_REQUEST]; req != len(n.Nodes)-1 {
			return fmt.Errorf("%d vote requests, want the manual election's only", req)
		}
		if len(n.Nodes[p].Pauses) != 0 {
			return fmt.Errorf("the partitioned primary paused")
		}
		n.Heal()
		rID := n.Nodes[r].ID
		if !n.RunUntil(20000, func() bool { return n.Nodes[p].State.Myself().MasterID == rID }) {
			return fmt.Errorf("old primary never became a replica (%v)", n.Err())
		}
		if !n.RunUntil(30000, func() bool { return n.SlotsAgree() == nil && l.allOK() == nil }) {
			return fmt.Errorf("no agreement: %v / %v (%v)", n.SlotsAgree(), l.allOK(), n.Err())
		}
		return settle(n, 1000)
	})
}

// CLUSTER FAILOVER FORCE: no handshake with the primary (no MFSTART, no
// pause, no catching up), but an election whose votes are forced although
// the primary is not failing. TAKEOVER: no election at all; the replica
// bumps its epoch and takes the slots at once, even cut off from the
// voters.
func TestManualFailoverForceAndTakeover(t *testing.T) {
	scenarioN(t, failoverSeeds, func(seed uint64, trace func(string)) error {
		l, err := buildCluster(seed, shape{replicas: []int{1, 1, 1}}, trace, nil)
		if err != nil {
			return err
		}
		n := l.n
		k := n.Rand().IntN(3)
		p, r := l.primary[k], l.replicas[k][0]
		l.setOffsets(map[int]uint64{p: 5000, r: 4000})
		takeover := seed%2 == 1
		if takeover {
			n.Partition([]int{p, r}, l.others(p, r))
			if err := failoverDo(n, r, bus.FailoverTakeover); err != nil {
				return err
			}
			if me := n.Nodes[r].State.Myself(); n.Nodes[r].Promotions != 1 || !me.IsMaster() {
				return fmt.Errorf("TAKEOVER did not promote at once")
			}
			if n.Nodes[r].State.Stats().Sent[bus.MsgFailoverAuthRequest] != 0 {
				return fmt.Errorf("TAKEOVER ran an election")
			}
			n.Run(n.Rand().Int64N(3000))
			n.Heal()
		} else if err := failoverDo(n, r, bus.FailoverForce); err != nil {
			return err
		}
		if _, err := l.waitPromoted(30000, l.slots[k][0], []int{r}, l.others()); err != nil {
			return err
		}
		if n.Nodes[p].Received[busv1.Type_TYPE_MFSTART] != 0 || len(n.Nodes[p].Pauses) != 0 {
			return fmt.Errorf("forced failover talked to the primary")
		}
		rID := n.Nodes[r].ID
		if !n.RunUntil(10000, func() bool { return n.Nodes[p].State.Myself().MasterID == rID }) {
			return fmt.Errorf("old primary never became a replica (%v)", n.Err())
		}
		if !n.RunUntil(30000, func() bool { return n.SlotsAgree() == nil && l.allOK() == nil }) {
			return fmt.Errorf("no agreement: %v / %v (%v)", n.SlotsAgree(), l.allOK(), n.Err())
		}
		return settle(n, 1000)
	})
}

// Failover on shutdown: the primary asks its replica with the greatest
// offset to take over (HandOff); that replica runs a manual failover (its
// votes first, then the pause and the catch-up), the primary ends up its
// replica, and then it goes away: the cluster stays ok all along, with no
// automatic failover. A primary whose replicas are all unreachable hands
// off to nobody.
func TestFailoverOnShutdown(t *testing.T) {
	scenarioN(t, failoverSeeds, func(seed uint64, trace func(string)) error {
		l, err := buildCluster(seed, shape{replicas: []int{2, 1, 1}}, trace, nil)
		if err != nil {
			return err
		}
		n := l.n
		n.cfg.Loss = 0
		p, r1, r2 := l.primary[0], l.replicas[0][0], l.replicas[0][1]
		best, other := r1, r2
		if seed%2 == 1 {
			best, other = r2, r1
		}
		l.setOffsets(map[int]uint64{p: 9000, best: 8000, other: 7000})
		// Let the offsets spread (pings carry them).
		n.Run(3 * n.cfg.NodeTimeout)
		var target string
		_ = n.Do(p, func(s *bus.State, now int64) error { target = s.HandOff(now); return nil })
		if target != n.Nodes[best].ID {
			return fmt.Errorf("handed off to %q, want the replica with the greatest offset (%d)", target, best)
		}
		if !n.RunUntil(2000, func() bool { return len(n.Nodes[best].Awaits) > 0 }) {
			return fmt.Errorf("the replica never waited for the paused offset (%v)", n.Err())
		}
		if err := n.Applied(best, 9000); err != nil {
			return err
		}
		bID := n.Nodes[best].ID
		if !n.RunUntil(5000, func() bool { return n.Nodes[p].State.Myself().MasterID == bID }) {
			return fmt.Errorf("the primary never became a replica of %d (%v)", best, n.Err())
		}
		n.Run(n.cfg.MaxDelay) // its PONG with the new role
		n.Crash(p)            // the shutdown
		// Every node serves the shard from best. (Which role a node that
		// is gone had last is not checked: a frame it sent before the
		// hand-off may arrive on another connection after its last one.)
		var last error
		if !n.RunUntil(5000, func() bool {
			for _, i := range l.others() {
				if o := l.ownerOf(i, l.slots[0][0]); o != best {
					last = fmt.Errorf("node %d: slot %d owned by %d", i, l.slots[0][0], o)
					return false
				}
			}
			last = l.allOK()
			return last == nil
		}) {
			return fmt.Errorf("the cluster did not move on: %v (%v)", last, n.Err())
		}
		if n.Nodes[other].Promotions != 0 {
			return fmt.Errorf("the other replica was promoted too")
		}
		// The second primary's only replica is cut off: no hand-off.
		q, rq := l.primary[1], l.replicas[1][0]
		n.Partition(l.others(rq), []int{rq})
		if !n.RunUntil(4*n.cfg.NodeTimeout, func() bool {
			nd, _ := n.Nodes[q].State.Lookup(n.Nodes[rq].ID)
			return nd.Flags&(bus.FlagPFail|bus.FlagFail) != 0
		}) {
			return fmt.Errorf("the cut-off replica was never flagged (%v)", n.Err())
		}
		_ = n.Do(q, func(s *bus.State, now int64) error { target = s.HandOff(now); return nil })
		if target != "" {
			return fmt.Errorf("handed off to an unreachable replica")
		}
		n.Heal()
		return settle(n, 1000)
	})
}
