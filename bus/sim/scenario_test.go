package sim

import (
	"fmt"
	"slices"
	"testing"

	"github.com/slotd/slotd/bus"
	busv1 "github.com/slotd/slotd/proto/slotd/bus/v1"
)

// meshOf makes the nodes of n meet along a random chain (each MEET in a
// random direction) and waits for the full mesh.
func meshOf(n *Net, limit int64) error {
	order := n.Rand().Perm(len(n.Nodes))
	for k := 1; k < len(order); k++ {
		a, b := order[k-1], order[k]
		if n.Rand().IntN(2) == 0 {
			a, b = b, a
		}
		if err := n.Meet(a, b); err != nil {
			return err
		}
		n.Run(n.Rand().Int64N(200))
	}
	var last error
	if !n.RunUntil(limit, func() bool { last = n.FullMesh(); return last == nil }) {
		if n.Err() != nil {
			return n.Err()
		}
		return fmt.Errorf("no full mesh after %d ms: %v", limit, last)
	}
	return n.Err()
}

// settle runs a while longer and checks the invariants again.
func settle(n *Net, d int64) error {
	n.Run(d)
	if n.Err() != nil {
		return n.Err()
	}
	for _, nd := range n.Up() {
		if err := nd.State.Verify(); err != nil {
			return fmt.Errorf("node %d: %v", nd.Index, err)
		}
	}
	return nil
}

func TestMeshFromChainOfMeets(t *testing.T) {
	scenario(t, func(seed uint64, trace func(string)) error {
		n := newNet(noisy(seed, 3+int(seed%6)), trace)
		if err := meshOf(n, 60000); err != nil {
			return err
		}
		if err := settle(n, 3000); err != nil {
			return err
		}
		if err := n.FullMesh(); err != nil {
			return fmt.Errorf("mesh lost: %v", err)
		}
		// Every node learned its own address from a MEET or PING.
		for _, nd := range n.Nodes {
			if ip := nd.State.Myself().IP; ip != nd.IP {
				return fmt.Errorf("node %d thinks it is at %q", nd.Index, ip)
			}
		}
		return nil
	})
}

var _ = bus.TickInterval

// assignSlots gives each of the first k nodes a contiguous share of the
// slots (the last one may leave a few unassigned) and returns the owner
// index of every slot (-1: unassigned).
func assignSlots(n *Net, k int, leaveGap bool) ([]int, error) {
	owner := make([]int, 16384)
	for i := range owner {
		owner[i] = -1
	}
	per := 16384 / k
	for i := range k {
		lo, hi := i*per, (i+1)*per-1
		if i == k-1 {
			hi = 16383
			if leaveGap {
				hi -= 10
			}
		}
		for s := lo; s <= hi; s++ {
			owner[s] = i
		}
		err := n.Do(i, func(s *bus.State, _ int64) error {
			return s.AddSlotsRange(args(lo, hi))
		})
		if err != nil {
			return nil, err
		}
	}
	return owner, nil
}

func args(v ...int) [][]byte {
	out := make([][]byte, len(v))
	for i, x := range v {
		out[i] = []byte(fmt.Sprint(x))
	}
	return out
}

// checkOwners compares node i's slot table with want (node indexes).
func checkOwners(n *Net, i int, want []int) error {
	st := n.Nodes[i].State
	for slot, o := range want {
		id := ""
		if o >= 0 {
			id = n.Nodes[o].ID
		}
		if got := st.Owner(slot); got != id {
			return fmt.Errorf("node %d: slot %d owned by %q, want %q", i, slot, short(got), short(id))
		}
	}
	return nil
}

func TestSlotClaimsPropagate(t *testing.T) {
	scenario(t, func(seed uint64, trace func(string)) error {
		nodes := 3 + int(seed%5)
		n := newNet(noisy(seed, nodes), trace)
		explicit := seed%2 == 0
		if explicit {
			// As redis-cli --cluster create: distinct epochs up front.
			for i := range nodes {
				if err := n.Do(i, func(s *bus.State, _ int64) error { return s.SetConfigEpoch(uint64(i + 1)) }); err != nil {
					return err
				}
			}
		}
		// Slots are claimed before, during or after the mesh forms.
		when := n.Rand().IntN(3)
		var owner []int
		var err error
		contested := map[int][2]int{} // slot → both claimants
		claim := func() error {
			owner, err = assignSlots(n, nodes-1, seed%3 == 0)
			if err != nil {
				return err
			}
			// A few slots are claimed twice: the claim with the greater
			// configEpoch must win everywhere.
			for range 3 {
				slot := n.Rand().IntN(16384)
				o := owner[slot]
				// Only nodes with slots of their own: one that lost its
				// only slot would turn replica, another scenario.
				other := n.Rand().IntN(nodes - 1)
				if o < 0 || other == o {
					continue
				}
				if n.Nodes[other].State.Owner(slot) != "" {
					continue // it already learned the first claim
				}
				if err := n.Do(other, func(s *bus.State, _ int64) error { return s.AddSlots(args(slot)) }); err != nil {
					return err
				}
				contested[slot] = [2]int{o, other}
				if other > o {
					// Node i has configEpoch i+1 when set explicitly.
					owner[slot] = other
				}
			}
			return nil
		}
		if when == 0 {
			if err := claim(); err != nil {
				return err
			}
		}
		if err := meshOf(n, 60000); err != nil {
			return err
		}
		if when == 1 {
			if err := claim(); err != nil {
				return err
			}
		}
		if when == 2 {
			n.Run(1000)
			if err := claim(); err != nil {
				return err
			}
		}
		var last error
		ok := n.RunUntil(60000, func() bool {
			last = n.SlotsAgree()
			if last == nil && !explicit {
				last = n.UniqueEpochs(0)
			}
			return last == nil
		})
		if !ok {
			if n.Err() != nil {
				return n.Err()
			}
			return fmt.Errorf("slots never agreed: %v", last)
		}
		if err := settle(n, 2000); err != nil {
			return err
		}
		if err := n.SlotsAgree(); err != nil {
			return err
		}
		want := owner
		if !explicit {
			// Collisions decide which epochs end up greater, and a claim
			// already lost is not renewed by a later bump: either claimant
			// may win, as long as everyone agrees.
			for slot, c := range contested {
				got := n.Nodes[0].State.Owner(slot)
				if got != n.Nodes[c[0]].ID && got != n.Nodes[c[1]].ID {
					return fmt.Errorf("slot %d: owner %q is no claimant", slot, short(got))
				}
				if got == n.Nodes[c[1]].ID {
					want[slot] = c[1]
				} else {
					want[slot] = c[0]
				}
			}
		}
		for i := range nodes {
			if err := checkOwners(n, i, want); err != nil {
				return err
			}
			if len(n.Nodes[i].Replicate) > 0 {
				return fmt.Errorf("node %d turned replica", i)
			}
		}
		// A claimant that lost a slot it served must drop its keys.
		for slot, c := range contested {
			loser := c[0]
			if want[slot] == c[0] {
				loser = c[1]
			}
			if !slices.Contains(n.Nodes[loser].DropSlots, slot) {
				return fmt.Errorf("node %d lost slot %d without DropSlots", loser, slot)
			}
		}
		return nil
	})
}

// A primary that was down while its slots moved to a node with a newer
// configEpoch comes back claiming them: the nodes that know better send it
// UPDATE messages, it adopts the new configuration and, having lost its
// last slot, becomes a replica of the new owner.
func TestStaleNodeReceivesUpdate(t *testing.T) {
	scenario(t, func(seed uint64, trace func(string)) error {
		nodes := 3 + int(seed%3)
		n := newNet(noisy(seed, nodes), trace)
		for i := range nodes {
			if err := n.Do(i, func(s *bus.State, _ int64) error { return s.SetConfigEpoch(uint64(i + 1)) }); err != nil {
				return err
			}
		}
		owner, err := assignSlots(n, 3, false)
		if err != nil {
			return err
		}
		if err := meshOf(n, 60000); err != nil {
			return err
		}
		if !n.RunUntil(30000, func() bool { return n.SlotsAgree() == nil }) {
			return fmt.Errorf("slots never agreed: %v (%v)", n.SlotsAgree(), n.Err())
		}
		const b, c = 1, 2
		lo, hi := 16384/3*2, 16383
		n.Crash(c)
		// The operator moves c's slots to b, which takes a new epoch.
		err = n.Do(b, func(s *bus.State, _ int64) error {
			if err := s.DelSlotsRange(args(lo, hi)); err != nil {
				return err
			}
			if err := s.AddSlotsRange(args(lo, hi)); err != nil {
				return err
			}
			if bumped, _ := s.BumpEpoch(); !bumped {
				return fmt.Errorf("b did not bump")
			}
			return nil
		})
		if err != nil {
			return err
		}
		for s := lo; s <= hi; s++ {
			owner[s] = b
		}
		others := []int{}
		for i := range nodes {
			if i != c {
				others = append(others, i)
			}
		}
		if !n.RunUntil(30000, func() bool { return n.SlotsAgree(others...) == nil }) {
			return fmt.Errorf("move never propagated: %v (%v)", n.SlotsAgree(others...), n.Err())
		}
		// c comes back where it cannot hear b itself: only UPDATEs from the
		// others can tell it.
		var rest []int
		for i := range nodes {
			if i != b {
				rest = append(rest, i)
			}
		}
		n.Partition(rest, []int{b})
		if err := n.Restart(c, ""); err != nil {
			return err
		}
		bID := n.Nodes[b].ID
		ok := n.RunUntil(30000, func() bool {
			me := n.Nodes[c].State.Myself()
			return me.IsReplica() && me.MasterID == bID
		})
		if !ok {
			return fmt.Errorf("c never followed b (%v): %s", n.Err(), n.Nodes[c].State.Nodes())
		}
		if n.Nodes[c].Received[busv1.Type_TYPE_UPDATE] == 0 {
			return fmt.Errorf("c received no UPDATE")
		}
		if got := n.Nodes[c].Replicate; len(got) != 1 || got[0] != bID {
			return fmt.Errorf("c's Replicate effects: %v", got)
		}
		if err := checkOwners(n, c, owner); err != nil {
			return err
		}
		n.Heal()
		if !n.RunUntil(30000, func() bool { return n.SlotsAgree() == nil && n.FullMesh() == nil }) {
			return fmt.Errorf("never agreed after healing: %v / %v (%v)", n.SlotsAgree(), n.FullMesh(), n.Err())
		}
		for i := range nodes {
			if err := checkOwners(n, i, owner); err != nil {
				return err
			}
			if i != c && len(n.Nodes[i].Replicate) > 0 {
				return fmt.Errorf("node %d turned replica", i)
			}
		}
		return settle(n, 2000)
	})
}

// Primaries that start with the same configEpoch (fresh nodes all have 0,
// or an operator assigned duplicates) end up with distinct ones: in every
// colliding pair the node with the smaller id takes a new epoch.
func TestEpochCollisionResolves(t *testing.T) {
	scenario(t, func(seed uint64, trace func(string)) error {
		nodes := 2 + int(seed%7)
		n := newNet(noisy(seed, nodes), trace)
		if seed%2 == 1 {
			for i := range nodes {
				e := uint64(n.Rand().IntN(3))
				if err := n.Do(i, func(s *bus.State, _ int64) error { return s.SetConfigEpoch(e) }); err != nil {
					return err
				}
			}
		}
		if seed%3 != 0 {
			if _, err := assignSlots(n, max(1, nodes-1), false); err != nil {
				return err
			}
		}
		if err := meshOf(n, 60000); err != nil {
			return err
		}
		var last error
		ok := n.RunUntil(60000, func() bool {
			for i := range nodes {
				if last = n.UniqueEpochs(i); last != nil {
					return false
				}
			}
			last = n.SlotsAgree()
			return last == nil
		})
		if !ok {
			if n.Err() != nil {
				return n.Err()
			}
			return fmt.Errorf("epochs never unique and agreed: %v", last)
		}
		// Every bump was saved before it was announced (checked as it ran),
		// and no epoch exceeds the current epoch anywhere.
		for _, nd := range n.Nodes {
			if me := nd.State.Myself(); me.ConfigEpoch > nd.State.CurrentEpoch() {
				return fmt.Errorf("node %d: configEpoch %d > currentEpoch %d", nd.Index, me.ConfigEpoch,
					nd.State.CurrentEpoch())
			}
		}
		return settle(n, 2000)
	})
}

// knows reports whether node i has id in its table.
func knows(n *Net, i int, id string) bool {
	_, ok := n.Nodes[i].State.Lookup(id)
	return ok
}

// CLUSTER FORGET keeps a node out for 60 s even though others still gossip
// about it (or it keeps calling): after that, gossip brings it back. When
// every node forgets it and it is shut down (redis-cli del-node), it never
// comes back.
func TestForgetBan(t *testing.T) {
	scenario(t, func(seed uint64, trace func(string)) error {
		nodes := 3 + int(seed%4)
		n := newNet(noisy(seed, nodes), trace)
		if err := meshOf(n, 60000); err != nil {
			return err
		}
		victim := n.Rand().IntN(nodes)
		vid := n.Nodes[victim].ID
		delNode := seed%2 == 0
		forgetters := []int{(victim + 1 + n.Rand().IntN(nodes-1)) % nodes}
		if delNode {
			forgetters = forgetters[:0]
			for i := range nodes {
				if i != victim {
					forgetters = append(forgetters, i)
				}
			}
		}
		start := n.Now()
		for _, i := range forgetters {
			if err := n.Do(i, func(s *bus.State, now int64) error { return s.Forget(now, vid) }); err != nil {
				return err
			}
			if knows(n, i, vid) {
				return fmt.Errorf("node %d still knows the victim", i)
			}
			n.Run(n.Rand().Int64N(50))
		}
		if delNode {
			n.Crash(victim)
		}
		// Banned for 60 s from the FORGET (the first one for del-node).
		var bad error
		n.RunUntil(bus.BanTTL-(n.Now()-start), func() bool {
			for _, i := range forgetters {
				if knows(n, i, vid) {
					bad = fmt.Errorf("node %d took the victim back after %d ms", i, n.Now()-start)
					return true
				}
			}
			return false
		})
		if bad != nil {
			return bad
		}
		if n.Err() != nil {
			return n.Err()
		}
		if delNode {
			n.Run(30000)
			for _, i := range forgetters {
				if knows(n, i, vid) {
					return fmt.Errorf("node %d took the removed node back", i)
				}
			}
			var up []int
			for i := range nodes {
				if i != victim {
					up = append(up, i)
				}
			}
			if err := n.FullMesh(up...); err != nil {
				return err
			}
			return settle(n, 1000)
		}
		// The ban is over: gossip from the others (or its MEET) brings it
		// back.
		var last error
		if !n.RunUntil(60000, func() bool { last = n.FullMesh(); return last == nil }) {
			return fmt.Errorf("victim never re-added: %v (%v)", last, n.Err())
		}
		return settle(n, 1000)
	})
}

// A node that comes back at another address (same id, from its nodes.conf)
// is re-learned by every other node from the PINGs it sends them.
func TestAddressChangeRelearned(t *testing.T) {
	scenario(t, func(seed uint64, trace func(string)) error {
		nodes := 3 + int(seed%5)
		n := newNet(noisy(seed, nodes), trace)
		if seed%2 == 0 {
			if _, err := assignSlots(n, nodes, false); err != nil {
				return err
			}
		}
		if err := meshOf(n, 60000); err != nil {
			return err
		}
		moved := n.Rand().IntN(nodes)
		n.Crash(moved)
		n.Run(n.Rand().Int64N(3000))
		if err := n.Restart(moved, fmt.Sprintf("10.0.1.%d", moved+1)); err != nil {
			return err
		}
		var last error
		ok := n.RunUntil(60000, func() bool {
			if last = n.FullMesh(); last == nil {
				last = n.SlotsAgree()
			}
			return last == nil
		})
		if !ok {
			return fmt.Errorf("new address never learned: %v (%v)", last, n.Err())
		}
		// Redis keeps a restarted node's own recorded address until a MEET
		// corrects it; the others' view is what routing uses.
		return settle(n, 2000)
	})
}

// The same seed replays the same run: same frames, same final states.
func TestSimDeterministic(t *testing.T) {
	t.Parallel()
	run := func(seed uint64) (string, string) {
		var tr []string
		n := New(noisy(seed, 5))
		n.Trace = func(l string) { tr = append(tr, l) }
		if err := meshOf(n, 60000); err != nil {
			t.Fatal(err)
		}
		if _, err := assignSlots(n, 4, false); err != nil {
			t.Fatal(err)
		}
		n.Run(5000)
		n.Crash(2)
		n.Partition([]int{0, 1}, []int{2, 3, 4})
		n.Run(3000)
		if err := n.Restart(2, "10.0.5.5"); err != nil {
			t.Fatal(err)
		}
		n.Heal()
		n.Run(5000)
		var confs []string
		for _, nd := range n.Nodes {
			confs = append(confs, nd.State.Nodes())
		}
		return fmt.Sprint(tr), fmt.Sprint(confs)
	}
	for _, seed := range []uint64{1, 2, 3, 7} {
		tr1, c1 := run(seed)
		tr2, c2 := run(seed)
		if tr1 != tr2 || c1 != c2 {
			t.Fatalf("seed %d: two runs differ", seed)
		}
	}
}

// The way Redis's cluster tests start every file: each node in turn forgets
// the others with CLUSTER RESET HARD (taking a new id) while the rest still
// ping it, then the nodes meet again. The new cluster must be exactly the
// new ids: no node may bring back an id that was reset away, as a MEET sent
// to an address that now answers under another id would.
func TestHardResetRejoin(t *testing.T) {
	scenario(t, func(seed uint64, trace func(string)) error {
		n := newNet(noisy(seed, 3+int(seed%6)), trace)
		if err := meshOf(n, 60000); err != nil {
			return err
		}
		n.Run(n.Rand().Int64N(5000))
		for i := range n.Nodes {
			err := n.Do(i, func(s *bus.State, now int64) error {
				if err := s.Reset(now, true, true); err != nil {
					return err
				}
				return s.SetConfigEpoch(uint64(i + 1))
			})
			if err != nil {
				return err
			}
			n.Run(n.Rand().Int64N(300))
		}
		n.Run(n.Rand().Int64N(3000))
		if err := meshOf(n, 60000); err != nil {
			return err
		}
		if err := settle(n, 3000); err != nil {
			return err
		}
		return n.FullMesh()
	})
}
