package sim

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/slotd/slotd/bus"
	busv1 "github.com/slotd/slotd/proto/slotd/bus/v1"
	"github.com/slotd/slotd/slots"
)

// roundTrip sends f through the wire codec.
func roundTrip(f *busv1.Frame) (*busv1.Frame, error) {
	b, err := bus.AppendFrame(nil, f)
	if err != nil {
		return nil, err
	}
	return bus.NewDecoder(bytes.NewReader(b), 0).Next()
}

// Up lists the nodes that are up.
func (n *Net) Up() []*Node {
	var out []*Node
	for _, nd := range n.Nodes {
		if nd.Up {
			out = append(out, nd)
		}
	}
	return out
}

// FullMesh reports why the nodes in idx (all up nodes if none given) do not
// form a full mesh yet: each must know exactly the others, at their current
// addresses, with no handshake or address-less entry left.
func (n *Net) FullMesh(idx ...int) error {
	group := n.Up()
	if len(idx) > 0 {
		group = group[:0]
		for _, i := range idx {
			group = append(group, n.Nodes[i])
		}
	}
	want := map[string]*Node{}
	for _, nd := range group {
		want[nd.State.MyID()] = nd
	}
	for _, nd := range group {
		list := nd.State.NodeList()
		if len(list) != len(want) {
			return fmt.Errorf("node %d knows %d nodes, want %d", nd.Index, len(list), len(want))
		}
		for _, e := range list {
			o := want[e.ID]
			switch {
			case o == nil:
				return fmt.Errorf("node %d knows %s, not in the group", nd.Index, e.ID[:8])
			case e.Flags&(bus.FlagHandshake|bus.FlagNoAddr) != 0:
				return fmt.Errorf("node %d: %s is %s", nd.Index, e.ID[:8], e.Flags)
			case o != nd && (e.IP != o.IP || e.Port != o.Port || e.CPort != o.CPort):
				return fmt.Errorf("node %d knows node %d at %s:%d@%d, it is at %s:%d@%d", nd.Index, o.Index,
					e.IP, e.Port, e.CPort, o.IP, o.Port, o.CPort)
			}
		}
	}
	return nil
}

// SlotsAgree reports why the up nodes in idx (all if none) do not agree on
// every slot's owner and on every node's configEpoch and role.
func (n *Net) SlotsAgree(idx ...int) error {
	group := n.Up()
	if len(idx) > 0 {
		group = group[:0]
		for _, i := range idx {
			group = append(group, n.Nodes[i])
		}
	}
	if len(group) == 0 {
		return nil
	}
	ref := group[0].State
	for _, nd := range group[1:] {
		for slot := range slots.NumSlots {
			if a, b := ref.Owner(slot), nd.State.Owner(slot); a != b {
				return fmt.Errorf("slot %d: node %d says %q, node %d says %q", slot, group[0].Index, short(a),
					nd.Index, short(b))
			}
		}
	}
	if err := n.epochsAgree(group); err != nil {
		return err
	}
	return nil
}

func (n *Net) epochsAgree(group []*Node) error {
	view := func(s *bus.State) string {
		var b strings.Builder
		for _, e := range s.NodeList() {
			if e.IsReplica() {
				// A replica's own configEpoch is whatever its primary's was
				// when we last heard from it: only its primary matters.
				fmt.Fprintf(&b, "%s:S%s ", short(e.ID), short(e.MasterID))
			} else {
				fmt.Fprintf(&b, "%s:%d:M ", short(e.ID), e.ConfigEpoch)
			}
		}
		return b.String()
	}
	ref := view(group[0].State)
	for _, nd := range group[1:] {
		if v := view(nd.State); v != ref {
			return fmt.Errorf("node %d sees %s, node %d sees %s", group[0].Index, ref, nd.Index, v)
		}
	}
	return nil
}

// UniqueEpochs reports primaries sharing a configEpoch in node i's view.
func (n *Net) UniqueEpochs(i int) error {
	seen := map[uint64]string{}
	var ids []string
	for _, e := range n.Nodes[i].State.NodeList() {
		if !e.IsMaster() {
			continue
		}
		if o, dup := seen[e.ConfigEpoch]; dup {
			ids = append(ids, short(o)+"="+short(e.ID))
		}
		seen[e.ConfigEpoch] = e.ID
	}
	if len(ids) > 0 {
		sort.Strings(ids)
		return fmt.Errorf("node %d: primaries share configEpochs: %v", i, ids)
	}
	return nil
}

func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
