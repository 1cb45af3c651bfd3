package zset

// ScoreRange is a score interval; MinEx/MaxEx make an end exclusive.
type ScoreRange struct {
	Min, Max     float64
	MinEx, MaxEx bool
}

// GteMin reports whether v is not below the range.
func (r ScoreRange) GteMin(v float64) bool {
	if r.MinEx {
		return v > r.Min
	}
	return v >= r.Min
}

// LteMax reports whether v is not above the range.
func (r ScoreRange) LteMax(v float64) bool {
	if r.MaxEx {
		return v < r.Max
	}
	return v <= r.Max
}

// Empty reports whether no score can be in the range.
func (r ScoreRange) Empty() bool {
	return r.Min > r.Max || (r.Min == r.Max && (r.MinEx || r.MaxEx))
}

// LexBound is one end of a lexicographic range: "-" (Inf < 0), "+"
// (Inf > 0) or a string, inclusive unless Ex.
type LexBound struct {
	Inf int
	Val string
	Ex  bool
}

// LexRange is a member interval.
type LexRange struct{ Min, Max LexBound }

// cmpBound compares a member with a bound: "-" is below every string, "+"
// above every string.
func cmpBound(v string, b LexBound) int {
	switch {
	case b.Inf < 0:
		return 1
	case b.Inf > 0:
		return -1
	case v < b.Val:
		return -1
	case v > b.Val:
		return 1
	}
	return 0
}

// GteMin reports whether member v is not below the range.
func (r LexRange) GteMin(v string) bool {
	c := cmpBound(v, r.Min)
	if r.Min.Ex {
		return c > 0
	}
	return c >= 0
}

// LteMax reports whether member v is not above the range.
func (r LexRange) LteMax(v string) bool {
	c := cmpBound(v, r.Max)
	if r.Max.Ex {
		return c < 0
	}
	return c <= 0
}

// Empty reports whether no member can be in the range ("-" and "+" compare
// equal to themselves, and are exclusive).
func (r LexRange) Empty() bool {
	var c int
	switch {
	case r.Min.Inf != 0 && r.Min.Inf == r.Max.Inf:
		c = 0
	case r.Min.Inf < 0 || r.Max.Inf > 0:
		c = -1
	case r.Min.Inf > 0 || r.Max.Inf < 0:
		c = 1
	case r.Min.Val < r.Max.Val:
		c = -1
	case r.Min.Val > r.Max.Val:
		c = 1
	}
	return c > 0 || (c == 0 && (r.Min.Ex || r.Max.Ex))
}

// inRange reports whether some node may be in r: the range is not empty,
// the highest score reaches its minimum and the lowest its maximum.
func (z *ZSet) inRange(r ScoreRange) bool {
	if r.Empty() || z.sl.n == 0 {
		return false
	}
	return r.GteMin(z.sl.tail.score) && r.LteMax(z.sl.first().score)
}

// FirstInRange is the lowest node with a score in r, or nil.
func (z *ZSet) FirstInRange(r ScoreRange) *Node {
	if !z.inRange(r) {
		return nil
	}
	n := z.sl.firstWhere(func(n *Node) bool { return r.GteMin(n.score) })
	if n == nil || !r.LteMax(n.score) {
		return nil
	}
	return n
}

// LastInRange is the highest node with a score in r, or nil.
func (z *ZSet) LastInRange(r ScoreRange) *Node {
	if !z.inRange(r) {
		return nil
	}
	n := z.sl.lastWhere(func(n *Node) bool { return r.LteMax(n.score) })
	if n == nil || !r.GteMin(n.score) {
		return nil
	}
	return n
}

// CountInRange is the number of nodes with a score in r, in O(log n).
func (z *ZSet) CountInRange(r ScoreRange) int {
	first := z.FirstInRange(r)
	if first == nil {
		return 0
	}
	last := z.LastInRange(r)
	return z.RankOf(last) - z.RankOf(first) + 1
}

func (z *ZSet) inLex(r LexRange) bool {
	if r.Empty() || z.sl.n == 0 {
		return false
	}
	return r.GteMin(z.sl.tail.member) && r.LteMax(z.sl.first().member)
}

// FirstInLex is the first node whose member is in r, or nil.
//
// Lex ranges assume all scores are equal, as Redis documents. With mixed
// scores the members are not in order and Redis's answer depends on the
// encoding: a listpack is scanned from the start (the first member not
// below the minimum), which Compact sets reproduce exactly; a skiplist is
// searched top-down, so the answer depends on the random node heights, and
// only the same kind of search is done here.
func (z *ZSet) FirstInLex(r LexRange) *Node {
	if !z.inLex(r) {
		return nil
	}
	var n *Node
	if z.Compact {
		for n = z.sl.first(); n != nil && !r.GteMin(n.member); n = n.Next() {
		}
	} else {
		n = z.sl.firstWhere(func(n *Node) bool { return r.GteMin(n.member) })
	}
	if n == nil || !r.LteMax(n.member) {
		return nil
	}
	return n
}

// LastInLex is the last node whose member is in r, or nil (scanning back
// from the end for a Compact set, see FirstInLex).
func (z *ZSet) LastInLex(r LexRange) *Node {
	if !z.inLex(r) {
		return nil
	}
	var n *Node
	if z.Compact {
		for n = z.sl.tail; n != nil && !r.LteMax(n.member); n = n.Prev() {
		}
	} else {
		n = z.sl.lastWhere(func(n *Node) bool { return r.LteMax(n.member) })
	}
	if n == nil || !r.GteMin(n.member) {
		return nil
	}
	return n
}

// CountInLex is the number of nodes whose member is in r: for a Compact
// set the run from FirstInLex while members stay below the maximum (as a
// listpack is counted), else by ranks in O(log n).
func (z *ZSet) CountInLex(r LexRange) int {
	first := z.FirstInLex(r)
	if first == nil {
		return 0
	}
	if z.Compact {
		n := 0
		for x := first; x != nil && r.LteMax(x.member); x = x.Next() {
			n++
		}
		return n
	}
	last := z.LastInLex(r)
	if last == nil {
		return 0
	}
	return z.RankOf(last) - z.RankOf(first) + 1
}
