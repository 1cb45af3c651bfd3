package bus

import (
	"fmt"
	"sort"
)

// Verify checks the state's internal consistency (for tests and the
// simulator): the node index and the sorted list agree, myself is in both,
// slot owners and node slot sets match, links and nodes point at each
// other, and no configEpoch exceeds currentEpoch's reach.
func (s *State) Verify() error {
	if len(s.nodes) != len(s.sorted) {
		return fmt.Errorf("%d nodes indexed, %d sorted", len(s.nodes), len(s.sorted))
	}
	if !sort.SliceIsSorted(s.sorted, func(i, j int) bool { return s.sorted[i].ID < s.sorted[j].ID }) {
		return fmt.Errorf("node list not sorted")
	}
	for _, n := range s.sorted {
		if s.nodes[n.ID] != n {
			return fmt.Errorf("node %s: index mismatch", n.ID)
		}
		if n.Flags&FlagMyself != 0 && n != s.myself {
			return fmt.Errorf("node %s flagged myself", n.ID)
		}
		if c := n.Slots.Count(); c != n.numSlots {
			return fmt.Errorf("node %s: %d slots counted, %d cached", n.ID, c, n.numSlots)
		}
		if n.link != nil && (n.link.node != n || n.link.inbound || s.links[n.link.id] != n.link) {
			return fmt.Errorf("node %s: bad outbound link %d", n.ID, n.link.id)
		}
		if n.inLink != nil && (n.inLink.node != n || !n.inLink.inbound || s.links[n.inLink.id] != n.inLink) {
			return fmt.Errorf("node %s: bad inbound link %d", n.ID, n.inLink.id)
		}
		if n != s.myself && n.Linked != (n.link != nil && n.link.up) {
			return fmt.Errorf("node %s: Linked %v disagrees with its link", n.ID, n.Linked)
		}
		if n.ConfigEpoch > s.currentEpoch {
			return fmt.Errorf("node %s: configEpoch %d > currentEpoch %d", n.ID, n.ConfigEpoch, s.currentEpoch)
		}
	}
	if s.nodes[s.myself.ID] != s.myself || s.myself.Flags&FlagMyself == 0 {
		return fmt.Errorf("myself missing")
	}
	for slot, n := range s.owner {
		if n != nil && (!n.Slots.Has(slot) || s.nodes[n.ID] != n) {
			return fmt.Errorf("slot %d: owner %s does not have it", slot, n.ID)
		}
	}
	for _, n := range s.sorted {
		bad := -1
		n.Slots.ForEach(func(slot int) {
			if s.owner[slot] != n && bad < 0 {
				bad = slot
			}
		})
		if bad >= 0 {
			return fmt.Errorf("node %s has slot %d owned by another", n.ID, bad)
		}
	}
	for id, lk := range s.links {
		if lk.id != id || lk.closed {
			return fmt.Errorf("link %d: bad entry", id)
		}
		if lk.node != nil {
			if s.nodes[lk.node.ID] != lk.node {
				return fmt.Errorf("link %d: node %s is gone", id, lk.node.ID)
			}
			if (lk.inbound && lk.node.inLink != lk) || (!lk.inbound && lk.node.link != lk) {
				return fmt.Errorf("link %d: node %s does not own it", id, lk.node.ID)
			}
		} else if !lk.inbound {
			return fmt.Errorf("link %d: outbound without node", id)
		}
	}
	return nil
}

// ConfigDigest hashes what nodes.conf records, except what changes without
// being worth saving (ping/pong times, link status): it changes exactly
// when State.Config would, apart from those. The simulator uses it to check
// that every such change comes with a Save effect.
func (s *State) ConfigDigest() uint64 {
	h := uint64(14695981039346656037)
	mix := func(v uint64) {
		h ^= v
		h *= 1099511628211
	}
	str := func(v string) {
		mix(uint64(len(v)))
		for i := 0; i < len(v); i++ {
			mix(uint64(v[i]))
		}
	}
	mix(s.currentEpoch)
	mix(s.lastVoteEpoch)
	for _, n := range s.sorted {
		if n.Flags&FlagHandshake != 0 {
			continue
		}
		str(n.ID)
		str(n.IP)
		str(n.Hostname)
		str(n.ShardID)
		mix(uint64(n.Port)<<32 | uint64(n.CPort))
		mix(uint64(n.Flags))
		if n.IsReplica() {
			str(n.MasterID)
		}
		mix(s.nodeEpoch(n))
		if n.numSlots > 0 {
			for _, w := range n.Slots {
				mix(w)
			}
		}
	}
	// Maps iterate in random order: add their entries up instead.
	var open uint64
	for slot, n := range s.migrating {
		open += (uint64(slot)+1)*0x9e3779b97f4a7c15 ^ idHash(n.ID)
	}
	for slot, n := range s.importing {
		open += (uint64(slot)+1)*0xc2b2ae3d27d4eb4f ^ idHash(n.ID)
	}
	mix(open)
	return h
}

// idHash hashes an id.
func idHash(id string) uint64 {
	var v uint64
	for i := 0; i < len(id); i++ {
		v = v*31 + uint64(id[i])
	}
	return v
}
