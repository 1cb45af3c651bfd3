package stream

// Strategy is how a trim decides what to remove.
type Strategy uint8

// Trim strategies.
const (
	TrimNone Strategy = iota
	TrimMaxLen
	TrimMinID
)

// TrimArgs are the trimming part of XADD and XTRIM.
type TrimArgs struct {
	Strategy Strategy
	// Approx is "~": only whole nodes are removed.
	Approx bool
	// Limit caps the entries removed (0: no cap).
	Limit  int64
	MaxLen int64
	MinID  ID
}

// Trim removes entries from the head of the stream as Redis's streamTrim
// does, and returns how many it removed. Approximate trimming removes
// whole nodes only; exact trimming then marks the remaining entries of the
// first node deleted. Limit is checked per node before removing it.
func (s *Stream) Trim(a TrimArgs) int64 {
	if a.Strategy == TrimNone {
		return 0
	}
	var deleted int64
	for len(s.nodes) > 0 {
		if a.Strategy == TrimMaxLen && int64(s.length) <= a.MaxLen {
			break
		}
		n := &s.nodes[0]
		live, dead, nf, first := n.counts()
		if a.Limit != 0 && deleted+live > a.Limit {
			break
		}
		var whole bool
		if a.Strategy == TrimMaxLen {
			whole = int64(s.length)-live >= a.MaxLen
		} else {
			whole = n.lastID().Less(a.MinID)
		}
		if whole {
			s.removeNode(0)
			s.length -= uint64(live)
			deleted += live
			continue
		}
		if a.Approx {
			break
		}
		var gone int64
		it := Iter{s: s, masterNF: nf}
		for p := first; p < len(n.lp)-1; {
			flags, q := lpInt(n.lp, p)
			dms, q := lpInt(n.lp, q)
			dseq, _ := lpInt(n.lp, q)
			var stop bool
			if a.Strategy == TrimMaxLen {
				stop = int64(s.length) <= a.MaxLen
			} else {
				id := ID{n.master.Ms + uint64(dms), n.master.Seq + uint64(dseq)}
				stop = id.Compare(a.MinID) >= 0
			}
			if stop {
				break
			}
			next := it.skipEntry(n.lp, p)
			if flags&flagDeleted == 0 {
				n.lp[p] = byte(flags | flagDeleted)
				gone++
				s.length--
				s.lastOK = false
			}
			p = next
		}
		deleted += gone
		n.setCounts(live-gone, dead+gone)
		break
	}
	if s.length == 0 {
		s.FirstID = ID{}
	} else if deleted > 0 {
		s.FirstID, _ = s.Edge(true, true)
	}
	return deleted
}

// lastID is the ID of the node's last entry, tombstone or not.
func (n *node) lastID() ID {
	// The last element is the entry's lp-count; walking back over it
	// lands on the entry's flags.
	offs := Iter{}
	_, _, nf, first := n.counts()
	offs.masterNF = nf
	last := first
	for p := first; p < len(n.lp)-1; p = offs.skipEntry(n.lp, p) {
		last = p
	}
	_, q := lpInt(n.lp, last)
	dms, q := lpInt(n.lp, q)
	dseq, _ := lpInt(n.lp, q)
	return ID{n.master.Ms + uint64(dms), n.master.Seq + uint64(dseq)}
}
