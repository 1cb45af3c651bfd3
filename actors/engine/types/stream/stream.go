package stream

import (
	"errors"
	"sort"
)

// Entry flags, as stored in a node.
const (
	flagDeleted    = 1
	flagSameFields = 2
)

// MaxListpackSize is the largest node Redis builds (1 GiB), also the limit
// on the total size of one entry's fields and values.
const MaxListpackSize = 1 << 30

// preallocate is the capacity a new tail node starts with (Redis's
// STREAM_LISTPACK_MAX_PRE_ALLOCATE); a node is shrunk to fit when the
// next one starts.
const preallocate = 4096

// node is one listpack of entries and its master ID.
type node struct {
	master ID
	lp     []byte
}

// Config are the node limits (stream-node-max-bytes and
// stream-node-max-entries); zero means no limit.
type Config struct {
	NodeMaxBytes   int64
	NodeMaxEntries int64
}

// DefaultConfig is Redis's default.
var DefaultConfig = Config{NodeMaxBytes: 4096, NodeMaxEntries: 100}

// Stream is a stream value. The zero value is an empty stream.
type Stream struct {
	nodes  []node
	length uint64
	// LastID is the largest ID ever added (or set by XSETID).
	LastID ID
	// FirstID is the first live entry's ID (0-0 when empty).
	FirstID ID
	// MaxDeletedID is the largest ID removed by XDEL (0-0 when none).
	MaxDeletedID ID
	// EntriesAdded counts every entry ever added.
	EntriesAdded uint64

	groups []*Group // by name

	// lastLive caches LastValid while lastOK is set (appends keep it,
	// deletions and trims drop it).
	lastLive ID
	lastOK   bool
}

// New returns an empty stream.
func New() *Stream { return &Stream{} }

// Len is the number of live entries.
func (s *Stream) Len() uint64 { return s.length }

// Nodes is the number of listpack nodes (XINFO STREAM radix-tree-nodes is
// derived from it by the caller).
func (s *Stream) Nodes() int { return len(s.nodes) }

// Errors of Add.
var (
	// ErrIDTooSmall: the ID is not above the stream's last ID.
	ErrIDTooSmall = errors.New("ID too small")
	// ErrTooLarge: the entry's fields and values exceed MaxListpackSize.
	ErrTooLarge = errors.New("elements too large")
)

// NextID is the ID an auto-ID XADD at time now (unix ms) gets.
func (s *Stream) NextID(now uint64) (ID, bool) {
	if now > s.LastID.Ms {
		return ID{now, 0}, true
	}
	return s.LastID.Incr()
}

// Add appends an entry with fields and values interleaved in fv (an even,
// non-zero count). id is the ID to use; with seqGiven false only its ms
// part is, and the sequence is generated as Redis does for "<ms>-*". It
// returns the ID added.
func (s *Stream) Add(cfg Config, id ID, seqGiven bool, fv [][]byte) (ID, error) {
	if !seqGiven {
		if s.LastID.Ms == id.Ms {
			if s.LastID.Seq == 1<<64-1 {
				return ID{}, ErrIDTooSmall
			}
			id = ID{id.Ms, s.LastID.Seq + 1}
		}
	}
	if id.Compare(s.LastID) <= 0 {
		return ID{}, ErrIDTooSmall
	}
	total := 0
	for _, b := range fv {
		total += len(b)
	}
	if total > MaxListpackSize {
		return ID{}, ErrTooLarge
	}
	nf := len(fv) / 2
	var tail *node
	if n := len(s.nodes); n > 0 {
		tail = &s.nodes[n-1]
		maxBytes := cfg.NodeMaxBytes
		if maxBytes <= 0 || maxBytes > MaxListpackSize {
			maxBytes = MaxListpackSize
		}
		full := int64(len(tail.lp)+total) >= maxBytes
		if !full && cfg.NodeMaxEntries > 0 {
			live, p := lpInt(tail.lp, lpHeader)
			dead, _ := lpInt(tail.lp, p)
			full = live+dead >= cfg.NodeMaxEntries
		}
		if full {
			tail.lp = append([]byte(nil), tail.lp...) // shrink to fit
			tail = nil
		}
	}
	flags := 0
	var enc []byte
	if tail == nil {
		capHint := preallocate
		if cfg.NodeMaxBytes > 0 && cfg.NodeMaxBytes < preallocate {
			capHint = int(cfg.NodeMaxBytes)
		}
		lp := lpNew(capHint)
		enc = elemInt(enc, 1)
		enc = elemInt(enc, 0)
		enc = elemInt(enc, int64(nf))
		for i := 0; i < nf; i++ {
			enc = elemText(enc, fv[2*i])
		}
		enc = elemInt(enc, 0)
		lp = lpAppend(lp, enc, nf+4)
		enc = enc[:0]
		s.nodes = append(s.nodes, node{master: id, lp: lp})
		tail = &s.nodes[len(s.nodes)-1]
		flags = flagSameFields
	} else {
		live, _ := lpInt(tail.lp, lpHeader)
		tail.lp, _ = lpReplaceInt(tail.lp, lpHeader, live+1)
		if tail.sameFields(fv) {
			flags = flagSameFields
		}
	}
	enc = elemInt(enc, int64(flags))
	enc = elemInt(enc, int64(id.Ms-tail.master.Ms))
	enc = elemInt(enc, int64(id.Seq-tail.master.Seq))
	n := 3 + nf
	if flags&flagSameFields == 0 {
		enc = elemInt(enc, int64(nf))
		n += nf + 1
	}
	for i := 0; i < nf; i++ {
		if flags&flagSameFields == 0 {
			enc = elemText(enc, fv[2*i])
		}
		enc = elemText(enc, fv[2*i+1])
	}
	enc = elemInt(enc, int64(n))
	tail.lp = lpAppend(tail.lp, enc, n+1)
	s.length++
	s.EntriesAdded++
	s.LastID = id
	s.lastLive, s.lastOK = id, true
	if s.length == 1 {
		s.FirstID = id
	}
	return id, nil
}

// sameFields reports whether fv's fields are the node's master fields.
func (n *node) sameFields(fv [][]byte) bool {
	p := lpSkip(n.lp, lpSkip(n.lp, lpHeader))
	nf, p := lpInt(n.lp, p)
	if int(nf) != len(fv)/2 {
		return false
	}
	var buf [20]byte
	for i := 0; i < int(nf); i++ {
		var e elem
		e, p = lpRead(n.lp, p)
		if string(e.text(&buf)) != string(fv[2*i]) {
			return false
		}
	}
	return true
}

// counts returns the node's live and deleted entry counts, its master
// field count and the offset of its first entry.
func (n *node) counts() (live, dead, nf int64, first int) {
	live, p := lpInt(n.lp, lpHeader)
	dead, p = lpInt(n.lp, p)
	nf, p = lpInt(n.lp, p)
	for i := int64(0); i < nf; i++ {
		p = lpSkip(n.lp, p)
	}
	return live, dead, nf, lpSkip(n.lp, p) // skip the master terminator
}

// setCounts rewrites the node's live and deleted counts.
func (n *node) setCounts(live, dead int64) {
	n.lp, _ = lpReplaceInt(n.lp, lpHeader, live)
	n.lp, _ = lpReplaceInt(n.lp, lpSkip(n.lp, lpHeader), dead)
}

// findNode returns the index of the last node whose master ID is ≤ id, or
// -1.
func (s *Stream) findNode(id ID) int {
	i := sort.Search(len(s.nodes), func(i int) bool { return id.Less(s.nodes[i].master) })
	return i - 1
}

func (s *Stream) removeNode(i int) {
	s.lastOK = false
	copy(s.nodes[i:], s.nodes[i+1:])
	s.nodes[len(s.nodes)-1] = node{}
	s.nodes = s.nodes[:len(s.nodes)-1]
	if cap(s.nodes) > 64 && len(s.nodes)*4 < cap(s.nodes) {
		s.nodes = append([]node(nil), s.nodes...)
	}
}

// Delete marks the entry id deleted (XDEL); it reports whether a live
// entry was there. The caller updates MaxDeletedID and FirstID as XDEL
// does (see DeleteIDs).
func (s *Stream) Delete(id ID) bool {
	it := s.Iter(id, id, false)
	if _, _, ok := it.Next(); !ok {
		return false
	}
	it.remove()
	return true
}

// DeleteIDs is XDEL: it deletes each ID and keeps the bookkeeping Redis
// keeps (the largest deleted ID, the first entry). It returns the number
// deleted.
func (s *Stream) DeleteIDs(ids []ID) int {
	n := 0
	firstGone := false
	for _, id := range ids {
		if s.Delete(id) {
			n++
			if s.MaxDeletedID.Less(id) {
				s.MaxDeletedID = id
			}
			if id == s.FirstID {
				firstGone = true
			}
		}
	}
	if firstGone {
		if s.length == 0 {
			s.FirstID = ID{}
		} else {
			s.FirstID, _ = s.Edge(true, true)
		}
	}
	return n
}

// Edge returns the first (or last) entry ID, skipping tombstones or not;
// ok is false when there is none (the ID is then MaxID for first, 0-0 for
// last, as Redis's streamGetEdgeID returns).
func (s *Stream) Edge(first, skipTombstones bool) (ID, bool) {
	it := s.Iter(MinID, MaxID, !first)
	it.tombstones = !skipTombstones
	id, _, ok := it.Next()
	if !ok {
		if first {
			return MaxID, false
		}
		return ID{}, false
	}
	return id, true
}

// LastValid is the last live entry's ID (0-0 when empty).
func (s *Stream) LastValid() ID {
	if !s.lastOK {
		s.lastLive, _ = s.Edge(false, true)
		s.lastOK = true
	}
	return s.lastLive
}

// Exists reports whether a live entry with ID id exists.
func (s *Stream) Exists(id ID) bool {
	it := s.Iter(id, id, false)
	_, _, ok := it.Next()
	return ok
}

// HasTombstones is Redis's streamRangeHasTombstones for [start, end]: it
// reports whether the range may contain a deleted entry.
func (s *Stream) HasTombstones(start, end ID) bool {
	if s.length == 0 || s.MaxDeletedID.IsZero() {
		return false
	}
	if s.MaxDeletedID.Less(s.FirstID) {
		return false
	}
	return start.Compare(s.MaxDeletedID) <= 0 && s.MaxDeletedID.Compare(end) <= 0
}

// Invalid is the entries-read value meaning "unknown".
const Invalid = -1

// EstimateDistance is Redis's streamEstimateDistanceFromFirstEverEntry:
// the logical read counter of id, or Invalid when it cannot be known.
func (s *Stream) EstimateDistance(id ID) int64 {
	if s.EntriesAdded == 0 {
		return 0
	}
	if s.length == 0 && id.Compare(s.LastID) < 1 {
		return int64(s.EntriesAdded)
	}
	switch c := id.Compare(s.LastID); {
	case c == 0:
		return int64(s.EntriesAdded)
	case c > 0:
		return Invalid
	}
	if s.MaxDeletedID.IsZero() || s.MaxDeletedID.Less(s.FirstID) {
		switch id.Compare(s.FirstID) {
		case -1:
			return int64(s.EntriesAdded - s.length)
		case 0:
			return int64(s.EntriesAdded - s.length + 1)
		}
	}
	return Invalid
}

// Clone returns a deep copy (COPY): nodes, bookkeeping, groups, consumers
// and pending entries.
func (s *Stream) Clone() any {
	c := &Stream{length: s.length, LastID: s.LastID, FirstID: s.FirstID, MaxDeletedID: s.MaxDeletedID,
		EntriesAdded: s.EntriesAdded}
	c.nodes = make([]node, len(s.nodes))
	for i, n := range s.nodes {
		c.nodes[i] = node{master: n.master, lp: append([]byte(nil), n.lp...)}
	}
	for _, g := range s.groups {
		ng := c.CreateGroup([]byte(g.Name), g.LastID, g.EntriesRead)
		byName := map[*Consumer]*Consumer{}
		for _, cons := range g.consumers {
			byName[cons] = ng.CreateConsumer([]byte(cons.Name), cons.SeenTime)
		}
		g.pel.Ascend(MinID, func(id ID, p *Pending) bool {
			np := &Pending{Consumer: byName[p.Consumer], DeliveryTime: p.DeliveryTime, DeliveryCount: p.DeliveryCount}
			ng.pel.Set(id, np)
			np.Consumer.pel.Set(id, np)
			return true
		})
	}
	return c
}

// Encoding is what OBJECT ENCODING reports.
func (s *Stream) Encoding() string { return "stream" }

// MemoryBytes estimates what the value takes in Redis (MEMORY USAGE): the
// listpacks' allocations, the radix tree keys and the groups' pending
// entries and consumers.
func (s *Stream) MemoryBytes(alloc func(int64) int64) int64 {
	size := int64(16 + 136) // robj + stream struct
	for _, n := range s.nodes {
		size += alloc(int64(cap(n.lp))) + 32 // listpack + radix tree share
	}
	for _, g := range s.groups {
		size += 64 + int64(len(g.Name)) + int64(g.pel.Len())*(24+40)
		for _, c := range g.consumers {
			size += 48 + int64(len(c.Name)) + int64(c.pel.Len())*24
		}
	}
	return size
}
