package zset

import "math/rand/v2"

// maxLevel bounds node heights; with a promotion chance of 1/4 it covers far
// more members than fit in memory.
const maxLevel = 32

// Node is one member of a sorted set. Nodes stay valid (as Go values) after
// deletion, but their links do not.
type Node struct {
	// score and lv come first: a search reads them on every hop.
	score  float64
	lv     []link // in the same allocation as the node (see newNode)
	prev   *Node  // level-0 predecessor; nil for the first node
	member string
}

// Nodes with their links in one allocation, by height class: a hop then
// touches one object instead of the node and a separate link array.
type (
	node1 struct {
		Node
		l [1]link
	}
	node2 struct {
		Node
		l [2]link
	}
	node4 struct {
		Node
		l [4]link
	}
	nodeMax struct {
		Node
		l [maxLevel]link
	}
)

// newNode allocates a node of height h.
func newNode(h int) *Node {
	switch {
	case h == 1:
		x := &node1{}
		x.lv = x.l[:]
		return &x.Node
	case h == 2:
		x := &node2{}
		x.lv = x.l[:]
		return &x.Node
	case h <= 4:
		x := &node4{}
		x.lv = x.l[:h]
		return &x.Node
	}
	x := &nodeMax{}
	x.lv = x.l[:h]
	return &x.Node
}

// link is a forward pointer with its span: how many level-0 steps it jumps
// (the rank difference between the two nodes). A nil link's span is not
// meaningful.
type link struct {
	next *Node
	span int
}

// Member returns the member.
func (n *Node) Member() string { return n.member }

// Score returns the score.
func (n *Node) Score() float64 { return n.score }

// Next is the following node in (score, member) order, or nil.
func (n *Node) Next() *Node { return n.lv[0].next }

// Prev is the preceding node, or nil.
func (n *Node) Prev() *Node { return n.prev }

// skiplist keeps the nodes in (score, member) order. Every link records its
// span, which turns position lookups into O(log n) walks: the rank of a node
// is the sum of the spans followed to reach it.
type skiplist struct {
	// head is the sentinel; its member and score are unused. Its links grow
	// with the tallest node, so a small set does not pay for maxLevel links.
	head  Node
	tail  *Node
	level int // number of levels in use (≥ 1, ≤ len(head.lv))
	n     int
}

func (sl *skiplist) init() {
	sl.head.lv = make([]link, 1)
	sl.level = 1
}

// precedes reports whether n sorts before (score, member).
func precedes(n *Node, score float64, member string) bool {
	return n.score < score || (n.score == score && n.member < member)
}

// randomLevel draws a height with P(h ≥ k) = 4^-(k-1).
func randomLevel() int {
	h := 1
	for r := rand.Uint64(); h < maxLevel && r&3 == 0; r >>= 2 {
		h++
	}
	return h
}

// insert adds a node for (score, member); the member must be absent.
func (sl *skiplist) insert(score float64, member string) *Node {
	n := newNode(randomLevel())
	n.score, n.member = score, member
	sl.link(n)
	return n
}

// link puts node n, whose height is len(n.lv), at its place in the order.
func (sl *skiplist) link(n *Node) {
	score, member := n.score, n.member
	var path [maxLevel]*Node // rightmost node before the new one, per level
	var pos [maxLevel]int    // rank of path[i]
	x := &sl.head
	r := 0
	for i := sl.level - 1; i >= 0; i-- {
		for {
			y := x.lv[i].next
			if y == nil || !precedes(y, score, member) {
				break
			}
			r += x.lv[i].span
			x = y
		}
		path[i], pos[i] = x, r
	}
	h := len(n.lv)
	n.prev = nil
	if h > len(sl.head.lv) {
		sl.head.lv = append(sl.head.lv, make([]link, h-len(sl.head.lv))...)
	}
	for i := sl.level; i < h; i++ {
		path[i], pos[i] = &sl.head, 0
		sl.head.lv[i] = link{span: sl.n}
	}
	if h > sl.level {
		sl.level = h
	}
	for i := 0; i < h; i++ {
		p := path[i]
		// p is at rank pos[i]; the new node lands at rank pos[0]+1.
		n.lv[i] = link{next: p.lv[i].next, span: p.lv[i].span - (pos[0] - pos[i])}
		p.lv[i] = link{next: n, span: pos[0] - pos[i] + 1}
	}
	for i := h; i < sl.level; i++ {
		path[i].lv[i].span++
	}
	if path[0] != &sl.head {
		n.prev = path[0]
	}
	if nx := n.lv[0].next; nx != nil {
		nx.prev = n
	} else {
		sl.tail = n
	}
	sl.n++
}

// findPath fills path with the rightmost node before (score, member) on each
// level and returns the node after path[0] (the candidate match).
func (sl *skiplist) findPath(score float64, member string, path *[maxLevel]*Node) *Node {
	x := &sl.head
	for i := sl.level - 1; i >= 0; i-- {
		for {
			y := x.lv[i].next
			if y == nil || !precedes(y, score, member) {
				break
			}
			x = y
		}
		path[i] = x
	}
	return x.lv[0].next
}

// unlink removes x given the path that leads to it.
func (sl *skiplist) unlink(x *Node, path *[maxLevel]*Node) {
	for i := 0; i < sl.level; i++ {
		p := path[i]
		if p.lv[i].next == x {
			p.lv[i].span += x.lv[i].span - 1
			p.lv[i].next = x.lv[i].next
		} else {
			p.lv[i].span--
		}
	}
	if nx := x.lv[0].next; nx != nil {
		nx.prev = x.prev
	} else {
		sl.tail = x.prev
	}
	for sl.level > 1 && sl.head.lv[sl.level-1].next == nil {
		sl.level--
	}
	sl.n--
}

// remove deletes the node (score, member) and reports whether it existed.
func (sl *skiplist) remove(score float64, member string) bool {
	var path [maxLevel]*Node
	x := sl.findPath(score, member, &path)
	if x == nil || x.score != score || x.member != member {
		return false
	}
	sl.unlink(x, &path)
	return true
}

// rank is the 1-based position of (score, member), or 0 when absent.
func (sl *skiplist) rank(score float64, member string) int {
	x := &sl.head
	r := 0
	for i := sl.level - 1; i >= 0; i-- {
		for {
			y := x.lv[i].next
			if y == nil || !(y.score < score || (y.score == score && y.member <= member)) {
				break
			}
			r += x.lv[i].span
			x = y
		}
		if x != &sl.head && x.member == member {
			return r
		}
	}
	return 0
}

// byRank returns the node at 1-based rank r, or nil.
func (sl *skiplist) byRank(r int) *Node {
	if r < 1 || r > sl.n {
		return nil
	}
	x := &sl.head
	seen := 0
	for i := sl.level - 1; i >= 0; i-- {
		for x.lv[i].next != nil && seen+x.lv[i].span <= r {
			seen += x.lv[i].span
			x = x.lv[i].next
		}
		if seen == r {
			return x
		}
	}
	return nil
}

// first is the lowest node, or nil.
func (sl *skiplist) first() *Node { return sl.head.lv[0].next }

// firstWhere returns the first node for which in holds, assuming in is
// false for a prefix of the order and true afterwards.
func (sl *skiplist) firstWhere(in func(*Node) bool) *Node {
	x := &sl.head
	for i := sl.level - 1; i >= 0; i-- {
		for y := x.lv[i].next; y != nil && !in(y); y = x.lv[i].next {
			x = y
		}
	}
	return x.lv[0].next
}

// lastWhere returns the last node for which in holds, assuming in is true
// for a prefix of the order and false afterwards (nil if none).
func (sl *skiplist) lastWhere(in func(*Node) bool) *Node {
	x := &sl.head
	for i := sl.level - 1; i >= 0; i-- {
		for y := x.lv[i].next; y != nil && in(y); y = x.lv[i].next {
			x = y
		}
	}
	if x == &sl.head {
		return nil
	}
	return x
}
