package strcmd

import (
	"math/bits"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/netio/command"
)

// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN n] [WITHMATCHLEN]: the longest
// common subsequence of two strings by the classic O(n·m) table, walked back
// from the end the same way Redis does so that ties resolve identically (the
// reply's string and match ranges depend on it).

func registerStringsLcs() {
	s := strSpec("lcs", -3, "Find longest common substring", "7.0.0", cmdLCS, "readonly")
	s.Last = 2
	command.Register(s)
}

// lcsRange is one run of matching bytes: a[a0..a1] == b[b0..b1].
type lcsRange struct{ a0, a1, b0, b1 uint32 }

func cmdLCS(c *engine.Call) {
	ea, eb := c.Lookup(c.Args[1]), c.Lookup(c.Args[2])
	if (ea != nil && ea.Kind != keyspace.KindString) || (eb != nil && eb.Kind != keyspace.KindString) {
		c.W.Error("ERR The specified keys must contain string values")
		return
	}
	var a, b []byte
	if ea != nil {
		a = ea.Str
	}
	if eb != nil {
		b = eb.Str
	}
	var getLen, getIdx, withLen bool
	var minLen int64
	for j := 3; j < len(c.Args); j++ {
		opt := engine.Cstr(c.Args[j])
		switch {
		case engine.EqFold(opt, "idx"):
			getIdx = true
		case engine.EqFold(opt, "len"):
			getLen = true
		case engine.EqFold(opt, "withmatchlen"):
			withLen = true
		case engine.EqFold(opt, "minmatchlen") && j+1 < len(c.Args):
			n, ok := c.IntArg(c.Args[j+1])
			if !ok {
				return
			}
			minLen = max(n, 0)
			j++
		default:
			c.W.Error(engine.ErrSyntax)
			return
		}
	}
	if getLen && getIdx {
		c.W.Error("ERR If you want both the length and indexes, please just use IDX.")
		return
	}
	if uint64(len(a)) >= 1<<32-2 || uint64(len(b)) >= 1<<32-2 {
		c.W.Error("ERR String too long for LCS")
		return
	}
	// The scratch table is limited like Redis's, even when LEN alone lets us
	// use two rows, so the same inputs succeed or fail on both.
	hi, cells := bits.Mul64(uint64(len(a))+1, uint64(len(b))+1)
	if hi != 0 || cells > (1<<62) || int64(cells*4) > maxStringLen(c) {
		c.W.Error("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")
		return
	}
	if getLen {
		c.W.Int(int64(lcsLength(a, b)))
		return
	}

	alen, blen := uint32(len(a)), uint32(len(b))
	w := blen + 1
	t := make([]uint32, cells)
	for i := uint32(1); i <= alen; i++ {
		row, prev := t[i*w:(i+1)*w], t[(i-1)*w:i*w]
		for j := uint32(1); j <= blen; j++ {
			if a[i-1] == b[j-1] {
				row[j] = prev[j-1] + 1
			} else {
				row[j] = max(prev[j], row[j-1])
			}
		}
	}
	total := t[alen*w+blen]

	// Walk back from the end, collecting the sequence and the runs.
	out := make([]byte, total)
	var ranges []lcsRange
	var cur lcsRange
	inRun := false
	k := total
	i, j := alen, blen
	for i > 0 && j > 0 {
		emit := false
		if a[i-1] == b[j-1] {
			out[k-1] = a[i-1]
			switch {
			case !inRun:
				cur = lcsRange{a0: i - 1, a1: i - 1, b0: j - 1, b1: j - 1}
				inRun = true
			case cur.a0 == i && cur.b0 == j:
				cur.a0--
				cur.b0--
			default:
				emit = true
			}
			if cur.a0 == 0 || cur.b0 == 0 {
				emit = true
			}
			k--
			i--
			j--
		} else {
			if t[(i-1)*w+j] > t[i*w+j-1] {
				i--
			} else {
				j--
			}
			if inRun {
				emit = true
			}
		}
		if emit {
			if getIdx && (minLen == 0 || int64(cur.a1-cur.a0+1) >= minLen) {
				ranges = append(ranges, cur)
			}
			inRun = false
		}
	}

	if !getIdx {
		c.W.Bulk(out)
		return
	}
	c.W.Map(2)
	c.W.BulkString("matches")
	c.W.Array(len(ranges))
	for _, r := range ranges {
		if withLen {
			c.W.Array(3)
		} else {
			c.W.Array(2)
		}
		c.W.Array(2)
		c.W.Int(int64(r.a0))
		c.W.Int(int64(r.a1))
		c.W.Array(2)
		c.W.Int(int64(r.b0))
		c.W.Int(int64(r.b1))
		if withLen {
			c.W.Int(int64(r.a1 - r.a0 + 1))
		}
	}
	c.W.BulkString("len")
	c.W.Int(int64(total))
}

// lcsLength is the LCS length with two rows of the table.
func lcsLength(a, b []byte) uint32 {
	prev := make([]uint32, len(b)+1)
	row := make([]uint32, len(b)+1)
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			if a[i-1] == b[j-1] {
				row[j] = prev[j-1] + 1
			} else {
				row[j] = max(prev[j], row[j-1])
			}
		}
		prev, row = row, prev
	}
	return prev[len(b)]
}
