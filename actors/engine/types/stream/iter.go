package stream

// Iter walks the entries of a stream between two IDs (inclusive), forward
// or backward, skipping tombstones unless asked. Typical use:
//
//	it := s.Iter(start, end, false)
//	for id, n, ok := it.Next(); ok; id, n, ok = it.Next() {
//		for i := 0; i < n; i++ {
//			f, v := it.Field()
//		}
//	}
//
// Field's results are valid until the next call on the iterator. The
// stream must not change while an iterator is in use, except through the
// iterator's own methods.
type Iter struct {
	s          *Stream
	start, end ID
	rev        bool
	tombstones bool

	ni   int   // current node index; -1 before the first
	p    int   // forward: offset of the next entry in the node
	offs []int // backward: entry offsets of the node
	k    int   // backward: next index into offs

	// the entry returned by the last Next
	flagsAt  int
	flags    int64
	fieldAt  int // next master field (SAMEFIELDS) or next own field
	valueAt  int // next value (SAMEFIELDS only)
	buf      [2][20]byte
	done     bool
	masterNF int64
}

// Iter returns an iterator over [start, end]; rev walks from end down.
func (s *Stream) Iter(start, end ID, rev bool) *Iter {
	it := &Iter{}
	s.IterInto(it, start, end, rev)
	return it
}

// IterInto is Iter reusing it's buffers.
func (s *Stream) IterInto(it *Iter, start, end ID, rev bool) {
	*it = Iter{s: s, start: start, end: end, rev: rev, offs: it.offs[:0], ni: -1}
	if len(s.nodes) == 0 || end.Less(start) {
		it.done = true
		return
	}
	if !rev {
		i := 0
		if !start.IsZero() {
			i = max(s.findNode(start), 0)
		}
		it.enter(i)
	} else {
		i := s.findNode(end)
		if i < 0 {
			it.done = true
			return
		}
		it.enter(i)
	}
}

// IncludeTombstones makes Next return deleted entries too.
func (it *Iter) IncludeTombstones() { it.tombstones = true }

// enter positions the iterator at node i.
func (it *Iter) enter(i int) {
	it.ni = i
	n := &it.s.nodes[i]
	_, _, nf, first := n.counts()
	it.masterNF = nf
	if !it.rev {
		it.p = first
		return
	}
	it.offs = it.offs[:0]
	for p := first; p < len(n.lp)-1; {
		it.offs = append(it.offs, p)
		p = it.skipEntry(n.lp, p)
	}
	it.k = len(it.offs) - 1
}

// skipEntry returns the offset after the entry at p.
func (it *Iter) skipEntry(lp []byte, p int) int {
	flags, p := lpInt(lp, p)
	p = lpSkip(lp, lpSkip(lp, p))
	k := it.masterNF
	if flags&flagSameFields == 0 {
		var nf int64
		nf, p = lpInt(lp, p)
		k = 2 * nf
	}
	for ; k > 0; k-- {
		p = lpSkip(lp, p)
	}
	return lpSkip(lp, p) // lp-count
}

// Next moves to the next entry in range and returns its ID and field
// count; ok is false at the end.
func (it *Iter) Next() (id ID, nfields int, ok bool) {
	for !it.done {
		n := &it.s.nodes[it.ni]
		var p int
		if !it.rev {
			if it.p >= len(n.lp)-1 {
				if it.ni+1 >= len(it.s.nodes) {
					it.done = true
					break
				}
				it.enter(it.ni + 1)
				continue
			}
			p = it.p
		} else {
			if it.k < 0 {
				if it.ni == 0 {
					it.done = true
					break
				}
				it.enter(it.ni - 1)
				continue
			}
			p = it.offs[it.k]
			it.k--
		}
		flagsAt := p
		flags, p := lpInt(n.lp, p)
		dms, p := lpInt(n.lp, p)
		dseq, p := lpInt(n.lp, p)
		id = ID{n.master.Ms + uint64(dms), n.master.Seq + uint64(dseq)}
		nf := it.masterNF
		skip := nf
		if flags&flagSameFields == 0 {
			nf, p = lpInt(n.lp, p)
			skip = 2 * nf
		}
		if !it.rev {
			q := p
			for ; skip > 0; skip-- {
				q = lpSkip(n.lp, q)
			}
			it.p = lpSkip(n.lp, q) // lp-count
		}
		if flags&flagDeleted != 0 && !it.tombstones {
			continue
		}
		if !it.rev {
			if id.Less(it.start) {
				continue
			}
			if it.end.Less(id) {
				it.done = true
				break
			}
		} else {
			if it.end.Less(id) {
				continue
			}
			if id.Less(it.start) {
				it.done = true
				break
			}
		}
		it.flagsAt, it.flags = flagsAt, flags
		if flags&flagSameFields != 0 {
			// the master fields follow the node's three counters
			it.fieldAt = lpSkip(n.lp, lpSkip(n.lp, lpSkip(n.lp, lpHeader)))
			it.valueAt = p
		} else {
			it.fieldAt = p
		}
		return id, int(nf), true
	}
	return ID{}, 0, false
}

// Deleted reports whether the current entry is a tombstone.
func (it *Iter) Deleted() bool { return it.flags&flagDeleted != 0 }

// Field returns the current entry's next field and value.
func (it *Iter) Field() (field, value []byte) {
	lp := it.s.nodes[it.ni].lp
	var f, v elem
	if it.flags&flagSameFields != 0 {
		f, it.fieldAt = lpRead(lp, it.fieldAt)
		v, it.valueAt = lpRead(lp, it.valueAt)
	} else {
		f, it.fieldAt = lpRead(lp, it.fieldAt)
		v, it.fieldAt = lpRead(lp, it.fieldAt)
	}
	return f.text(&it.buf[0]), v.text(&it.buf[1])
}

// remove marks the current entry deleted; the iterator must not be used
// afterwards.
func (it *Iter) remove() {
	s := it.s
	n := &s.nodes[it.ni]
	n.lp[it.flagsAt] = byte(it.flags | flagDeleted) // flags fit one byte
	live, dead, _, _ := n.counts()
	if live == 1 {
		s.removeNode(it.ni)
	} else {
		n.setCounts(live-1, dead+1)
	}
	s.length--
	s.lastOK = false
	it.done = true
}
