package netio

import (
	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/resp"
	"github.com/slotd/slotd/slots"
)

// Outside cluster mode a standalone Redis accepts multi-key commands whose
// keys live in different slots. Slots live in different shard actors here,
// so the commands below are split into one sub-command per slot and the
// sub-replies are merged in the original key order. When the parts land in
// several shard actors the read's group runs as a joint step (group.joint),
// so no other client sees half of an MSET or DEL, as in Redis. Commands
// that read and write keys of several shards in one step (MSETNX, RENAME)
// run whole in one shard instead (spread.go).
type splitRule struct {
	stride int // arguments per key (MSET: key value)
	merge  uint8
}

const (
	mergeSum   uint8 = iota // integer replies added up (DEL, EXISTS, ...)
	mergeOK                 // +OK when every part said +OK (MSET)
	mergeArray              // arrays interleaved back into key order (MGET)
)

var splitRules = map[string]splitRule{
	"del":    {1, mergeSum},
	"unlink": {1, mergeSum},
	"exists": {1, mergeSum},
	"touch":  {1, mergeSum},
	"mget":   {1, mergeArray},
	"mset":   {2, mergeOK},
	"watch":  {1, mergeOK},
}

type split struct {
	rule  splitRule
	parts []splitPart
	nkeys int
}

type splitPart struct {
	shard int
	pos   []int // original key positions of this part's keys
}

// trySplit dispatches a cross-slot command as per-slot parts. It reports
// false when the command cannot be split.
func (s *Server) trySplit(cl *client, g *group, spec *command.Spec, args [][]byte) bool {
	rule, ok := splitRules[spec.Name]
	if !ok {
		return false
	}
	if (len(args)-1)%rule.stride != 0 {
		s.replyErr(g, spec, "ERR wrong number of arguments for '"+spec.Name+"' command")
		return true
	}
	nkeys := (len(args) - 1) / rule.stride
	bySlot := map[int]int{} // slot → part index
	var slotsOrder []int
	var keyIdx [][]int
	for k := 0; k < nkeys; k++ {
		a := 1 + k*rule.stride
		sl := slots.HashSlot(args[a])
		pi, ok := bySlot[sl]
		if !ok {
			pi = len(slotsOrder)
			bySlot[sl] = pi
			slotsOrder = append(slotsOrder, sl)
			keyIdx = append(keyIdx, nil)
		}
		keyIdx[pi] = append(keyIdx[pi], k)
	}
	sp := split{rule: rule, nkeys: nkeys}
	sub := make([][]byte, 0, len(args))
	for pi, sl := range slotsOrder {
		sub = append(sub[:0], args[0])
		for _, k := range keyIdx[pi] {
			a := 1 + k*rule.stride
			sub = append(sub, args[a:a+rule.stride]...)
		}
		i := s.shards.Of(sl)
		b := g.batch(i)
		b.Add(spec, sub, sl, cl.proto, false)
		b.Cmds[len(b.Cmds)-1].DB = cl.db.Load()
		cl.trackCmd(&b.Cmds[len(b.Cmds)-1])
		if spec.WatchCmd {
			b.Cmds[len(b.Cmds)-1].Watch = cl.watchState(i)
		}
		if len(sp.parts) > 0 && sp.parts[0].shard != i {
			g.joint = true
		}
		sp.parts = append(sp.parts, splitPart{shard: i, pos: keyIdx[pi]})
	}
	g.order = append(g.order, src{kind: srcSplit, idx: uint16(len(g.splits))})
	g.splits = append(g.splits, sp)
	return true
}

// mergeSplit writes the merged reply of a split command; chunks[i] is the
// raw reply of part i.
func mergeSplit(w *resp.Writer, sp *split, chunks [][]byte) {
	for _, c := range chunks {
		if len(c) > 0 && c[0] == '-' {
			w.Raw(c)
			return
		}
	}
	switch sp.rule.merge {
	case mergeSum:
		var sum int64
		for _, c := range chunks {
			if n, ok := parseIntReply(c); ok {
				sum += n
			}
		}
		w.Int(sum)
	case mergeOK:
		w.OK()
	case mergeArray:
		elems := make([][]byte, sp.nkeys)
		for pi, c := range chunks {
			// *n\r\n then n elements
			p := indexCRLF(c)
			if p < 0 {
				w.Error("ERR internal error merging reply")
				return
			}
			c = c[p+2:]
			for _, k := range sp.parts[pi].pos {
				n := elemLen(c)
				if n <= 0 {
					w.Error("ERR internal error merging reply")
					return
				}
				elems[k] = c[:n]
				c = c[n:]
			}
		}
		w.Array(len(elems))
		for _, e := range elems {
			w.Raw(e)
		}
	}
}

func parseIntReply(c []byte) (int64, bool) {
	if len(c) < 4 || c[0] != ':' {
		return 0, false
	}
	p := indexCRLF(c)
	if p < 0 {
		return 0, false
	}
	return resp.ParseInt(c[1:p])
}

func indexCRLF(b []byte) int {
	for i := 0; i+1 < len(b); i++ {
		if b[i] == '\r' && b[i+1] == '\n' {
			return i
		}
	}
	return -1
}

// elemLen is the encoded length of the scalar RESP element at the start of
// b (bulk, null, simple, integer, error, double); -1 if malformed.
func elemLen(b []byte) int {
	p := indexCRLF(b)
	if p < 0 {
		return -1
	}
	if b[0] != '$' {
		return p + 2
	}
	n, ok := resp.ParseInt(b[1:p])
	if !ok {
		return -1
	}
	if n < 0 {
		return p + 2
	}
	end := p + 2 + int(n) + 2
	if end > len(b) {
		return -1
	}
	return end
}
