package sim

import (
	"fmt"

	"testing"

	"github.com/slotd/slotd/bus"
)

// cluster-replica-no-failover sets myself's nofailover flag; it travels
// in frame headers, so every node lists it (Redis's 13-no-failover-option
// checks CLUSTER NODES everywhere), and clearing it clears it everywhere.
func TestNoFailoverFlagPropagates(t *testing.T) {
	scenarioN(t, 8, func(seed uint64, trace func(string)) error {
		n := newNet(noisy(seed, 3+int(seed%3)), trace)
		if err := meshOf(n, 60000); err != nil {
			return err
		}
		id := n.Nodes[1].State.MyID()
		set := func(on bool) error {
			return n.Do(1, func(s *bus.State, _ int64) error {
				o := s.Options()
				o.ReplicaNoFailover = on
				s.SetOptions(o)
				return nil
			})
		}
		seen := func(on bool) bool {
			for _, nd := range n.Up() {
				v, ok := nd.State.Lookup(id)
				if !ok || (v.Flags&bus.FlagNoFailover != 0) != on {
					return false
				}
			}
			return true
		}
		for _, on := range []bool{true, false} {
			if err := set(on); err != nil {
				return err
			}
			if !n.RunUntil(30000, func() bool { return seen(on) }) {
				return fmt.Errorf("nofailover=%v not seen by every node", on)
			}
		}
		return n.Err()
	})
}
