package sim

import (
	"fmt"

	"github.com/slotd/slotd/bus"
	"github.com/slotd/slotd/slots"
)

// The failover checks and the replication model: a replica's link to its
// primary is up while both are up and not partitioned from each other; the
// state is told since when it is down (SetReplLinkDownSince).

// ByID returns the node created with id (nil if none).
func (n *Net) ByID(id string) *Node {
	for _, nd := range n.Nodes {
		if nd.ID == id {
			return nd
		}
	}
	return nil
}

// replLinks updates every up replica's view of its replication link.
func (n *Net) replLinks() {
	for _, r := range n.Nodes {
		if !r.Up {
			continue
		}
		me := r.State.Myself()
		down := int64(0)
		if me.IsReplica() {
			m := n.ByID(me.MasterID)
			if m == nil || !m.Up || n.cut[m.Index][r.Index] || n.cut[r.Index][m.Index] {
				down = r.ReplDown
				if down == 0 {
					down = n.now
				}
			}
		}
		if down != r.ReplDown {
			r.ReplDown = down
			r.State.SetReplLinkDownSince(down)
		}
	}
}

// checkVote verifies a FAILOVER_AUTH_ACK about to leave nd: its epoch was
// saved as lastVoteEpoch first, and nd never voted in that epoch before.
func (n *Net) checkVote(nd *Node, s bus.Send) {
	epoch := s.Frame.GetHeader().GetCurrentEpoch()
	if nd.syncedLVE < epoch {
		n.fail(nd, "vote for epoch %d sent, lastVoteEpoch durable %d", epoch, nd.syncedLVE)
	}
	to := fmt.Sprint(s.Link)
	if prev, dup := nd.Votes[epoch]; dup {
		n.fail(nd, "second vote in epoch %d (link %s, before link %s)", epoch, to, prev)
	}
	nd.Votes[epoch] = to
}

// checkClaims verifies that nd, if it is a primary, shares no slot with
// another up primary claiming it with the same configEpoch.
func (n *Net) checkClaims(nd *Node) {
	me := nd.State.Myself()
	if !me.IsMaster() || me.NumSlots() == 0 {
		return
	}
	for _, o := range n.Nodes {
		if o == nd || !o.Up {
			continue
		}
		om := o.State.Myself()
		if !om.IsMaster() || om.ConfigEpoch != me.ConfigEpoch || om.NumSlots() == 0 {
			continue
		}
		if overlap(&me.Slots, &om.Slots) {
			n.fail(nd, "node %d also claims its slots with configEpoch %d", o.Index, me.ConfigEpoch)
		}
	}
}

func overlap(a, b *slots.Set) bool {
	for i := range a {
		if a[i]&b[i] != 0 {
			return true
		}
	}
	return false
}
