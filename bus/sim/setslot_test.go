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

// migrationCluster builds three primaries with a replica each and opens
// one of primary 0's slots for a move to primary 1, as redis-cli does:
// IMPORTING on the target, MIGRATING on the source.
func migrationCluster(seed uint64, trace func(string)) (*layout, int, error) {
	l, err := buildCluster(seed, shape{replicas: []int{1, 1, 1}}, trace, nil)
	if err != nil {
		return nil, 0, err
	}
	n := l.n
	src, dst := l.primary[0], l.primary[1]
	slot := l.slots[0][0] + int(seed%100)
	if err := setSlot(n, dst, slot, "importing", n.Nodes[src].ID); err != nil {
		return nil, 0, err
	}
	return l, slot, setSlot(n, src, slot, "migrating", n.Nodes[dst].ID)
}

// crashPrimary crashes primary k and waits until one of its replicas took
// over; it returns the winner's index and id.
func crashPrimary(l *layout, k int) (int, string, error) {
	victim := l.primary[k]
	l.n.Crash(victim)
	winner, err := l.waitPromoted(60000, l.slots[k][0], l.replicas[k], l.others(victim))
	if err != nil {
		return -1, "", err
	}
	return winner, l.n.Nodes[winner].ID, nil
}

// openSlotsOf returns node i's migrating and importing peer of slot
// ("" for none).
func openSlotsOf(n *Net, i, slot int) (migrating, importing string) {
	m, im := n.Nodes[i].State.OpenSlots()
	return m[slot], im[slot]
}

// TestSetSlotTargetFailover: the target of a migration fails and its
// replica takes over; the source's migrating state follows the new primary
// (Valkey 8), so ASK redirects keep pointing at a node that imports.
func TestSetSlotTargetFailover(t *testing.T) {
	scenarioN(t, setSlotSeeds, func(seed uint64, trace func(string)) error {
		l, slot, err := migrationCluster(seed, trace)
		if err != nil {
			return err
		}
		n := l.n
		src, dst := l.primary[0], l.primary[1]
		_, wID, err := crashPrimary(l, 1)
		if err != nil {
			return err
		}
		var got string
		if !n.RunUntil(30000, func() bool {
			got, _ = openSlotsOf(n, src, slot)
			return got == wID
		}) {
			return fmt.Errorf("source migrates slot %d to %s, not to the new primary %s (%v)", slot, short(got),
				short(wID), n.Err())
		}
		if o := l.ownerOf(src, slot); o != src {
			return fmt.Errorf("source lost slot %d to %d", slot, o)
		}
		// The old target comes back as a replica: nothing moves back.
		if err := n.Restart(dst, ""); err != nil {
			return err
		}
		if !n.RunUntil(30000, func() bool { return n.Nodes[dst].State.Myself().MasterID == wID }) {
			return fmt.Errorf("old target never followed the winner (%v)", n.Err())
		}
		if err := settle(n, 2000); err != nil {
			return err
		}
		if got, _ = openSlotsOf(n, src, slot); got != wID {
			return fmt.Errorf("after the rejoin the source migrates slot %d to %s", slot, short(got))
		}
		return nil
	})
}

// TestSetSlotSourceFailover: the source of a migration fails and its
// replica takes over its slots, the open one included; the target rebinds
// that slot to the new primary and imports it from there (Valkey 8)
// instead of leaving it with a failed node.
func TestSetSlotSourceFailover(t *testing.T) {
	scenarioN(t, setSlotSeeds, func(seed uint64, trace func(string)) error {
		l, slot, err := migrationCluster(seed, trace)
		if err != nil {
			return err
		}
		n := l.n
		dst, other := l.primary[1], l.primary[2]
		winner, wID, err := crashPrimary(l, 0)
		if err != nil {
			return err
		}
		var imp string
		if !n.RunUntil(30000, func() bool {
			_, imp = openSlotsOf(n, dst, slot)
			return imp == wID && l.ownerOf(dst, slot) == winner && l.ownerOf(other, slot) == winner
		}) {
			return fmt.Errorf("target imports slot %d from %s (owner %d), not from the new primary %s (%v)", slot,
				short(imp), l.ownerOf(dst, slot), short(wID), n.Err())
		}
		return settle(n, 2000)
	})
}

// TestSetSlotImportClosedBySource: the source gives the slot to the target
// (SETSLOT NODE) but the target never gets its own SETSLOT NODE (it was
// promoted, or the tool died): once the source stops claiming the slot,
// the target closes the import and takes the slot with a new configEpoch
// (Valkey 8), and every node agrees.
func TestSetSlotImportClosedBySource(t *testing.T) {
	scenarioN(t, setSlotSeeds, func(seed uint64, trace func(string)) error {
		l, slot, err := migrationCluster(seed, trace)
		if err != nil {
			return err
		}
		n := l.n
		src, dst := l.primary[0], l.primary[1]
		if err := setSlot(n, src, slot, "node", n.Nodes[dst].ID); err != nil {
			return err
		}
		var last error
		if !n.RunUntil(30000, func() bool {
			if _, imp := openSlotsOf(n, dst, slot); imp != "" {
				last = fmt.Errorf("target still imports from %s", short(imp))
				return false
			}
			for _, nd := range n.Up() {
				if o := l.ownerOf(nd.Index, slot); o != dst {
					last = fmt.Errorf("node %d sees slot %d owned by %d", nd.Index, slot, o)
					return false
				}
			}
			return true
		}) {
			return fmt.Errorf("import not closed: %v (%v)", last, n.Err())
		}
		return settle(n, 2000)
	})
}
