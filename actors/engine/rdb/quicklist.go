package rdb

import "iter"

// Lists are written as Redis 7.0 writes them: TypeListQuicklist2, the node
// count, and per node its container and its listpack (or, for an element
// of 1 GB or more, the element itself). The split into nodes follows
// Redis's rule for a list built by pushes at the tail, so a list pushed
// that way DUMPs byte-identically; any other history leads Redis to other
// (equally valid) node boundaries.

const (
	qlPlainThreshold = 1 << 30 // elements this long get a plain node of their own
	qlSafetyLimit    = 8192    // no node grows past this size for count-based fills
	qlSizeOverhead   = 8       // Redis's per-element size estimate on top of the bytes
	qlFillMax        = 1<<15 - 1
)

// qlSizeLevels are the node size limits of fills -1 … -5.
var qlSizeLevels = [...]int{4096, 8192, 16384, 32768, 65536}

// qlAllowInsert is Redis's test for adding an element of sz bytes to a
// node of nodeSize bytes holding count elements.
func qlAllowInsert(nodeSize, count, sz, fill int) bool {
	newSize := nodeSize + sz + qlSizeOverhead
	if fill < 0 {
		if off := -fill - 1; off < len(qlSizeLevels) && newSize <= qlSizeLevels[off] {
			return true
		}
	}
	if newSize > qlSafetyLimit {
		return false
	}
	return count < fill
}

// List writes a list value (type byte included) whose elements seq yields
// in order; seq is iterated twice.
func (e *Encoder) List(seq iter.Seq[string]) {
	fill := min(max(e.Opt.ListFill, -5), qlFillMax)
	// First pass: node boundaries, as element counts (0 marks a plain node).
	var nodes []int
	size, count := 0, 0
	flush := func() {
		if count > 0 {
			nodes = append(nodes, count)
		}
		size, count = 0, 0
	}
	for s := range seq {
		if len(s) >= qlPlainThreshold {
			flush()
			nodes = append(nodes, 0)
			continue
		}
		if count > 0 && !qlAllowInsert(size, count, len(s), fill) {
			flush()
		}
		if count == 0 {
			size = lpHeaderSize + 1
		}
		size += lpEntrySize(s)
		count++
	}
	flush()

	e.Type(TypeListQuicklist2)
	e.Len(uint64(len(nodes)))
	lp := NewListpack()
	ni, left := 0, 0
	for s := range seq {
		if ni >= len(nodes) {
			break // the list changed between passes: cannot happen inside an actor
		}
		if nodes[ni] == 0 {
			e.Len(containerPlain)
			e.String(s)
			ni++
			continue
		}
		if left == 0 {
			lp.Reset()
			left = nodes[ni]
		}
		lp.Append(s)
		left--
		if left == 0 {
			e.Len(containerPacked)
			e.Bytes(lp.Finish())
			ni++
		}
	}
}
