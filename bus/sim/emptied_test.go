package sim

import (
	"fmt"
	"testing"

	"github.com/slotd/slotd/bus"
)

// A primary resharded down to no slots (redis-cli rebalance with weight 0:
// SETSLOT NODE on the importing node, then on the migrating one, slot by
// slot) becomes a replica of the node that took its last slot, and its
// replicas follow, when cluster-allow-replica-migration is yes; with no it
// stays a primary and keeps its replicas (Redis's 12-replica-migration-2
// and 12.1-replica-migration-3).
func TestEmptiedPrimaryAndReplicaMigration(t *testing.T) {
	for _, allow := range []bool{true, false} {
		t.Run(fmt.Sprintf("allow=%v", allow), func(t *testing.T) {
			scenarioN(t, 6, func(seed uint64, trace func(string)) error {
				l, err := buildCluster(seed, shape{replicas: []int{1, 1}}, trace,
					func(_ int, o *bus.Options) { o.AllowReplicaMigration = allow })
				if err != nil {
					return err
				}
				n := l.n
				src, dst := l.primary[0], l.primary[1]
				rep := l.replicas[0][0]
				did := n.Nodes[dst].ID
				for slot := l.slots[0][0]; slot <= l.slots[0][1]; slot++ {
					if err := setSlot(n, dst, slot, "node", did); err != nil {
						return err
					}
					if err := setSlot(n, src, slot, "node", did); err != nil && allow {
						// src may already follow dst: Redis answers SETSLOT
						// on a replica with an error redis-cli tolerates.
						continue
					} else if err != nil {
						return fmt.Errorf("slot %d on the source: %v", slot, err)
					}
				}
				masterOf := func(i int) string { return n.Nodes[i].State.Myself().MasterID }
				want := ""
				if allow {
					want = did
				}
				wantRep := n.Nodes[src].ID
				if allow {
					wantRep = did
				}
				var last error
				if !n.RunUntil(30000, func() bool {
					if got := masterOf(src); got != want {
						last = fmt.Errorf("source follows %q, want %q", got, want)
						return false
					}
					if got := masterOf(rep); got != wantRep {
						last = fmt.Errorf("its replica follows %q, want %q", got, wantRep)
						return false
					}
					return true
				}) {
					return last
				}
				if err := settle(n, 3000); err != nil {
					return err
				}
				if got := masterOf(rep); got != wantRep {
					return fmt.Errorf("after settling, the replica follows %q, want %q", got, wantRep)
				}
				return n.Err()
			})
		})
	}
}
