package stream

import (
	"encoding/binary"
	"errors"
	"sort"
)

// ErrCorrupt reports a serialized stream that Redis would refuse to load.
var ErrCorrupt = errors.New("stream: corrupt serialized value")

// lpCheck walks a listpack checking every element's bounds and back-length
// and the header, as a deep sanitize-dump-payload does. It returns the
// element offsets.
func lpCheck(lp []byte) ([]int, bool) {
	if len(lp) < lpHeader+1 || int(binary.LittleEndian.Uint32(lp)) != len(lp) || lp[len(lp)-1] != lpEnd {
		return nil, false
	}
	end := len(lp) - 1
	var offs []int
	for p := lpHeader; p < end; {
		b := lp[p]
		var size int
		switch {
		case b&0x80 == 0:
			size = 1
		case b&0xc0 == 0x80:
			size = 1 + int(b&0x3f)
		case b&0xe0 == 0xc0:
			size = 2
		case b&0xf0 == 0xe0:
			if p+2 > end {
				return nil, false
			}
			size = 2 + (int(b&0x0f)<<8 | int(lp[p+1]))
		case b == 0xf0:
			if p+5 > end {
				return nil, false
			}
			l := uint64(binary.LittleEndian.Uint32(lp[p+1:]))
			if l > uint64(end) {
				return nil, false
			}
			size = 5 + int(l)
		case b >= 0xf1 && b <= 0xf4:
			size = 1 + [...]int{2, 3, 4, 8}[b-0xf1]
		default:
			return nil, false
		}
		bl := backlenLen(size)
		if p+size+bl > end {
			return nil, false
		}
		var want [5]byte
		if string(appendBacklen(want[:0], size)) != string(lp[p+size:p+size+bl]) {
			return nil, false
		}
		offs = append(offs, p)
		p += size + bl
	}
	if c := lpCount(lp); c != lpUnknown && c != len(offs) {
		return nil, false
	}
	return offs, true
}

// checkNode validates a node's stream structure (master entry, entries,
// lp-counts) and returns its live and deleted counts.
func checkNode(lp []byte) (live, dead int64, ok bool) {
	offs, ok := lpCheck(lp)
	if !ok {
		return 0, 0, false
	}
	k := 0
	intAt := func() (int64, bool) {
		if k >= len(offs) {
			return 0, false
		}
		e, _ := lpRead(lp, offs[k])
		k++
		return e.i, e.isInt
	}
	skip := func(n int64) bool {
		if n < 0 || int64(len(offs)-k) < n {
			return false
		}
		k += int(n)
		return true
	}
	var okL, okD, okF bool
	var nf int64
	live, okL = intAt()
	dead, okD = intAt()
	nf, okF = intAt()
	if !okL || !okD || !okF || live < 0 || dead < 0 || !skip(nf) {
		return 0, 0, false
	}
	if z, ok := intAt(); !ok || z != 0 {
		return 0, 0, false
	}
	var seenLive, seenDead int64
	for k < len(offs) {
		flags, ok := intAt()
		if !ok {
			return 0, 0, false
		}
		if _, ok := intAt(); !ok {
			return 0, 0, false
		}
		if _, ok := intAt(); !ok {
			return 0, 0, false
		}
		fields, extra := nf, int64(3)
		if flags&flagSameFields == 0 {
			if fields, ok = intAt(); !ok || !skip(fields) {
				return 0, 0, false
			}
			extra += fields + 1
		}
		if !skip(fields) {
			return 0, 0, false
		}
		if c, ok := intAt(); !ok || c != fields+extra {
			return 0, 0, false
		}
		if flags&flagDeleted != 0 {
			seenDead++
		} else {
			seenLive++
		}
	}
	if seenLive != live || seenDead != dead {
		return 0, 0, false
	}
	return live, dead, true
}

// Meta is the bookkeeping of a serialized stream.
type Meta struct {
	Length                        uint64
	LastID, FirstID, MaxDeletedID ID
	EntriesAdded                  uint64
	// V1 means the serialization predates Redis 7.0 (RDB type 15):
	// FirstID, MaxDeletedID and EntriesAdded are derived as Redis derives
	// them.
	V1 bool
}

// NodeBlob is a serialized node.
type NodeBlob struct {
	Master ID
	LP     []byte
}

// Load builds a stream from serialized nodes (taken over, not copied) and
// bookkeeping, checking them deeply.
func Load(nodes []NodeBlob, m Meta) (*Stream, error) {
	s := New()
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Master.Less(nodes[j].Master) })
	var total uint64
	for i, n := range nodes {
		if i > 0 && nodes[i-1].Master == n.Master {
			return nil, ErrCorrupt
		}
		live, _, ok := checkNode(n.LP)
		if !ok {
			return nil, ErrCorrupt
		}
		total += uint64(live)
		s.nodes = append(s.nodes, node{master: n.Master, lp: n.LP})
	}
	if total != m.Length {
		return nil, ErrCorrupt
	}
	s.length = m.Length
	s.LastID = m.LastID
	if m.V1 {
		s.EntriesAdded = s.length
		if s.length > 0 {
			s.FirstID, _ = s.Edge(true, true)
		}
	} else {
		s.FirstID, s.MaxDeletedID, s.EntriesAdded = m.FirstID, m.MaxDeletedID, m.EntriesAdded
	}
	return s, nil
}

// EachNode calls fn with every node in order (for serialization); lp must
// not be changed.
func (s *Stream) EachNode(fn func(master ID, lp []byte)) {
	for i := range s.nodes {
		fn(s.nodes[i].master, s.nodes[i].lp)
	}
}

// Meta returns the stream's bookkeeping.
func (s *Stream) Meta() Meta {
	return Meta{Length: s.length, LastID: s.LastID, FirstID: s.FirstID, MaxDeletedID: s.MaxDeletedID,
		EntriesAdded: s.EntriesAdded}
}

// LoadPending adds a pending entry while loading a group (before its
// consumers are known); it reports false for a duplicate.
func (g *Group) LoadPending(id ID, deliveryTime int64, count uint64) bool {
	return g.pel.Set(id, &Pending{DeliveryTime: deliveryTime, DeliveryCount: count})
}

// LoadConsumerPending assigns a loaded pending entry to c; it reports false
// when the group has no such entry or c has it already.
func (g *Group) LoadConsumerPending(c *Consumer, id ID) bool {
	p, ok := g.pel.Get(id)
	if !ok || p.Consumer != nil {
		return false
	}
	p.Consumer = c
	return c.pel.Set(id, p)
}

// Orphans reports whether some pending entry has no consumer (corrupt).
func (g *Group) Orphans() bool {
	bad := false
	g.pel.Ascend(MinID, func(_ ID, p *Pending) bool {
		bad = p.Consumer == nil
		return !bad
	})
	return bad
}
