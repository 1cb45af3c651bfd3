package sim

import (
	"fmt"
	"testing"

	"github.com/slotd/slotd/bus"
)

// Live resharding scenarios (issue 7): CLUSTER SETSLOT on the nodes of a
// migration, and what the rest of the cluster learns from it.

const setSlotSeeds = 100

// setSlot runs CLUSTER SETSLOT slot action [id] on node i, which holds no
// keys.
func setSlot(n *Net, i, slot int, action string, id ...string) error {
	a := [][]byte{[]byte(fmt.Sprint(slot)), []byte(action)}
	for _, s := range id {
		a = append(a, []byte(s))
	}
	return n.Do(i, func(s *bus.State, now int64) error {
		return s.SetSlot(now, a, func(int) int64 { return 0 })
	})
}

// TestSetSlotImportPong: closing an import on the target alone (the other
// primaries are not told, as when redis-cli dies after the target's
// SETSLOT NODE) reaches every node with the PONG the target broadcasts with
// its next step, within a tick and a frame's latency, well before the
// periodic pings would carry it.
func TestSetSlotImportPong(t *testing.T) {
	scenarioN(t, setSlotSeeds, func(seed uint64, trace func(string)) error {
		l, err := buildCluster(seed, shape{replicas: []int{1, 1, 1}}, trace, nil)
		if err != nil {
			return err
		}
		n := l.n
		src, dst := l.primary[0], l.primary[1]
		slot := l.slots[0][0] + int(seed%100)
		sid, did := n.Nodes[src].ID, n.Nodes[dst].ID
		if err := setSlot(n, dst, slot, "importing", sid); err != nil {
			return err
		}
		if err := setSlot(n, src, slot, "migrating", did); err != nil {
			return err
		}
		if err := setSlot(n, dst, slot, "node", did); err != nil {
			return err
		}
		if got := l.ownerOf(dst, slot); got != dst {
			return fmt.Errorf("target sees slot %d owned by %d", slot, got)
		}
		cfg := failoverConfig(seed, len(n.Nodes))
		limit := 2*bus.TickInterval + 2*max(cfg.MaxDelay, 10)
		if cfg.Loss > 0 || cfg.Reorder > 0 || cfg.DialFail > 0 {
			limit = 30000 // a lost PONG leaves it to the periodic pings
		}
		start := n.Now()
		var last error
		if !n.RunUntil(limit, func() bool {
			for _, nd := range n.Up() {
				if got := l.ownerOf(nd.Index, slot); got != dst {
					last = fmt.Errorf("node %d sees slot %d owned by %d", nd.Index, slot, got)
					return false
				}
			}
			return true
		}) {
			if n.Err() != nil {
				return n.Err()
			}
			return fmt.Errorf("after %d ms: %v", n.Now()-start, last)
		}
		return settle(n, 2000)
	})
}
