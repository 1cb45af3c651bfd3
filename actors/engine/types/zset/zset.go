// Package zset implements the sorted set value: unique members with float64
// scores, ordered by score and then by member bytes.
//
// Two indexes are kept in step: a skiplist whose links record their spans,
// so rank lookups, rank ranges and score/lex range starts are O(log n), and
// a member→node hash (actors/engine/types/dict) for O(1) score lookups and the
// resumable ZSCAN cursor.
//
// Redis 7.0 stores small sorted sets as listpacks and converts them to a
// skiplist once they grow; that choice is visible to clients (OBJECT
// ENCODING, ZSCAN returning everything at once, -0 scores read back as 0).
// The structure here is the same for both, and Compact only records which
// encoding Redis would be using so that the command layer can reproduce
// those effects.
package zset

import (
	"math/rand/v2"

	"github.com/slotd/slotd/actors/engine/types/dict"
)

// ZSet is a sorted set. The zero value is not usable; call New. A ZSet
// must not be copied by value (its skiplist head links into itself); use
// Copy.
type ZSet struct {
	sl   skiplist
	dict dict.Dict[*Node]
	// Compact is set while Redis would keep this set as a listpack. While
	// it is set, scores are stored as a listpack stores them: -0 becomes 0.
	Compact bool
	// bytes is the total length of the members (for memory estimates).
	bytes int
}

// New returns an empty sorted set.
func New(compact bool) *ZSet {
	z := &ZSet{Compact: compact}
	z.sl.init()
	return z
}

// Len is the number of members.
func (z *ZSet) Len() int { return z.sl.n }

// Encoding is what OBJECT ENCODING reports.
func (z *ZSet) Encoding() string {
	if z.Compact {
		return "listpack"
	}
	return "skiplist"
}

// MemberBytes is the total length of all members.
func (z *ZSet) MemberBytes() int { return z.bytes }

// Buckets is the size of the member hash's bucket array.
func (z *ZSet) Buckets() int { return z.dict.Buckets() }

// Get returns member's node, or nil.
func (z *ZSet) Get(member []byte) *Node {
	n, _ := z.dict.Get(member)
	return n
}

// Score returns member's score.
func (z *ZSet) Score(member []byte) (float64, bool) {
	if n, ok := z.dict.Get(member); ok {
		return n.score, true
	}
	return 0, false
}

func (z *ZSet) norm(score float64) float64 {
	if z.Compact && score == 0 {
		return 0 // a listpack keeps -0 as the integer 0
	}
	return score
}

// Add inserts member, which must be absent, and returns its node.
func (z *ZSet) Add(member []byte, score float64) *Node {
	return z.AddString(string(member), score)
}

// AddString is Add for a string member (kept as is, not copied).
func (z *ZSet) AddString(member string, score float64) *Node {
	n := z.sl.insert(z.norm(score), member)
	z.dict.SetString(n.member, n)
	z.bytes += len(member)
	return n
}

// SetScore moves n to a new score and returns the node now holding the
// member (n itself: a node that moves is unlinked and linked again).
func (z *ZSet) SetScore(n *Node, score float64) *Node {
	score = z.norm(score)
	if (n.prev == nil || precedes(n.prev, score, n.member)) &&
		(n.lv[0].next == nil || !precedes(n.lv[0].next, score, n.member)) {
		n.score = score // still between its neighbours
		return n
	}
	var path [maxLevel]*Node
	z.sl.findPath(n.score, n.member, &path)
	z.sl.unlink(n, &path)
	n.score = score
	z.sl.link(n)
	return n
}

// Delete removes member and reports whether it was present.
func (z *ZSet) Delete(member []byte) bool {
	n, ok := z.dict.Delete(member)
	if !ok {
		return false
	}
	z.sl.remove(n.score, n.member)
	z.bytes -= len(n.member)
	return true
}

// DeleteNode removes n, which must belong to z.
func (z *ZSet) DeleteNode(n *Node) {
	z.dict.DeleteString(n.member)
	z.sl.remove(n.score, n.member)
	z.bytes -= len(n.member)
}

// Rank is member's 0-based position in ascending order.
func (z *ZSet) Rank(member []byte) (int, bool) {
	n, ok := z.dict.Get(member)
	if !ok {
		return 0, false
	}
	return z.sl.rank(n.score, n.member) - 1, true
}

// RankOf is n's 0-based position.
func (z *ZSet) RankOf(n *Node) int { return z.sl.rank(n.score, n.member) - 1 }

// ByRank returns the node at 0-based position i, or nil.
func (z *ZSet) ByRank(i int) *Node { return z.sl.byRank(i + 1) }

// First is the lowest node, or nil.
func (z *ZSet) First() *Node { return z.sl.first() }

// Last is the highest node, or nil.
func (z *ZSet) Last() *Node { return z.sl.tail }

// Scan visits the members of one hash bucket (see dict.Dict.Scan for the
// cursor rules) and returns the next cursor, 0 when done.
func (z *ZSet) Scan(cursor uint64, fn func(member string, score float64)) uint64 {
	return z.dict.Scan(cursor, func(_ string, n *Node) { fn(n.member, n.score) })
}

// Random returns a (nearly) uniformly chosen node; z must not be empty.
func (z *ZSet) Random(r *rand.Rand) *Node {
	_, n := z.dict.Random(r)
	return n
}

// Clone is Copy for callers that hold values as any (COPY).
func (z *ZSet) Clone() any { return z.Copy() }

// Copy returns an independent copy in the same encoding.
func (z *ZSet) Copy() *ZSet {
	c := New(z.Compact)
	// Insert from the highest down: each insertion then stops at the head.
	for n := z.sl.tail; n != nil; n = n.prev {
		c.AddString(n.member, n.score)
	}
	return c
}

// DeleteRangeByRank removes the nodes at 0-based positions start..end
// (inclusive, within bounds) and returns how many were removed.
func (z *ZSet) DeleteRangeByRank(start, end int) int {
	n := z.ByRank(start)
	removed := 0
	for i := start; i <= end && n != nil; i++ {
		next := n.Next()
		z.DeleteNode(n)
		removed++
		n = next
	}
	return removed
}

// DeleteRangeByScore removes the nodes whose score is in r.
func (z *ZSet) DeleteRangeByScore(r ScoreRange) int {
	removed := 0
	for n := z.FirstInRange(r); n != nil && r.LteMax(n.score); {
		next := n.Next()
		z.DeleteNode(n)
		removed++
		n = next
	}
	return removed
}

// DeleteRangeByLex removes the nodes whose member is in r.
func (z *ZSet) DeleteRangeByLex(r LexRange) int {
	removed := 0
	for n := z.FirstInLex(r); n != nil && r.LteMax(n.member); {
		next := n.Next()
		z.DeleteNode(n)
		removed++
		n = next
	}
	return removed
}

// MakeCompact marks the set as listpack-encoded, turning -0 scores into 0
// as Redis's conversion to a listpack does.
func (z *ZSet) MakeCompact() {
	z.Compact = true
	for n := z.sl.first(); n != nil; n = n.lv[0].next {
		if n.score == 0 {
			n.score = 0
		}
	}
}
