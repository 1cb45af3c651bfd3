package streamcmd

// XREAD and XREADGROUP, blocking included. A blocked read parks in the
// shard's blocking machinery (actors/engine/block.go) like BLPOP; when a write signals
// one of its streams the command runs again, and that re-run serves the
// signalled stream only, as Redis serves the key that became ready: new
// entries past the ID the client blocked with ("$" is resolved once, when
// it blocks), or past the group's last delivered ID for ">" reads.

import (
	"fmt"
	"math"
	"time"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/actors/engine/types/stream"
	"github.com/slotd/slotd/netio/command"
)

func registerStreamRead() {
	command.Register(
		streamSpec(engine.Handle(&command.Spec{Name: "xread", Arity: -4, Flags: []string{"readonly", "blocking", "movablekeys"},
			Categories: []string{"read", "stream", "slow", "blocking"}, Since: "5.0.0",
			Summary: "Return never seen elements in multiple streams, with IDs greater than the ones reported by the caller for each stream. Can block.",
			Keys:    xreadKeys}, func(c *engine.Call) { xread(c, false) })),
		streamSpec(engine.Handle(&command.Spec{Name: "xreadgroup", Arity: -7, Flags: []string{"write", "blocking", "movablekeys"},
			Categories: []string{"write", "stream", "slow", "blocking"}, Since: "5.0.0",
			Summary: "Return new entries from a stream using a consumer group, or access the history of the pending entries for a given consumer. Can block.",
			Keys:    xreadKeys}, func(c *engine.Call) { xread(c, true) })),
	)
}

// xreadKeys finds the keys after the STREAMS option, as Redis's
// xreadGetKeys: none when the option list is malformed.
func xreadKeys(args [][]byte) ([]int, error) {
	pos := -1
	for i := 1; i < len(args) && pos < 0; i++ {
		switch a := args[i]; {
		case engine.EqFold(a, "block"), engine.EqFold(a, "count"):
			i++
		case engine.EqFold(a, "group"):
			i += 2
		case engine.EqFold(a, "noack"):
		case engine.EqFold(a, "streams"):
			pos = i
		default:
			return nil, nil
		}
	}
	n := len(args) - pos - 1
	if pos < 0 || n == 0 || n%2 != 0 {
		return nil, nil
	}
	keys := make([]int, n/2)
	for i := range keys {
		keys[i] = pos + 1 + i
	}
	return keys, nil
}

// xreadDefaultCount is what a blocked read without COUNT gets at most.
const xreadDefaultCount = 1000

type xreadArgs struct {
	block       int64 // -1: no BLOCK
	count       int64
	streamsAt   int
	n           int
	group, cons []byte
	noack       bool
}

func parseXRead(c *engine.Call, group bool) (xreadArgs, bool) {
	a := xreadArgs{block: -1}
	args := c.Args
	for i := 1; i < len(args); i++ {
		more := len(args) - i - 1
		o := args[i]
		switch {
		case engine.EqFold(o, "block") && more > 0:
			if c.InScript() {
				c.W.Error(fmt.Sprintf("ERR %s command is not allowed with BLOCK option from scripts", lowerName(args[0])))
				return a, false
			}
			i++
			v, ok := engine.ParseInt(args[i])
			if !ok {
				c.W.Error("ERR timeout is not an integer or out of range")
				return a, false
			}
			if v < 0 {
				c.W.Error("ERR timeout is negative")
				return a, false
			}
			a.block = v
		case engine.EqFold(o, "count") && more > 0:
			i++
			v, ok := c.IntArg(args[i])
			if !ok {
				return a, false
			}
			a.count = max(v, 0)
		case engine.EqFold(o, "streams") && more > 0:
			a.streamsAt = i + 1
			if (len(args)-a.streamsAt)%2 != 0 {
				c.W.Error("ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.")
				return a, false
			}
			a.n = (len(args) - a.streamsAt) / 2
			i = len(args)
		case engine.EqFold(o, "group") && more >= 2:
			if !group {
				c.W.Error("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.")
				return a, false
			}
			a.group, a.cons = args[i+1], args[i+2]
			i += 2
		case engine.EqFold(o, "noack"):
			if !group {
				c.W.Error("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.")
				return a, false
			}
			a.noack = true
		default:
			c.W.Error(engine.ErrSyntax)
			return a, false
		}
	}
	if a.streamsAt == 0 {
		c.W.Error(engine.ErrSyntax)
		return a, false
	}
	if group && a.group == nil {
		c.W.Error("ERR Missing GROUP option for XREADGROUP")
		return a, false
	}
	return a, true
}

// lowerName is the command name as the client spelled it (Redis's
// c->argv[0]).
func lowerName(b []byte) string { return string(b) }

func xread(c *engine.Call, group bool) {
	a, ok := parseXRead(c, group)
	if !ok {
		return
	}
	if c.Rerunning() {
		xreadWoken(c, a, group)
		return
	}
	keys := c.Args[a.streamsAt : a.streamsAt+a.n]
	ids := make([]stream.ID, a.n)
	groups := make([]*stream.Group, a.n)
	for i := range a.n {
		key, arg := keys[i], c.Args[a.streamsAt+a.n+i]
		s, ok := streamOf(c, c.Lookup(key))
		if !ok {
			return
		}
		if group {
			var g *stream.Group
			if s != nil {
				g = s.Group(a.group)
			}
			if g == nil {
				c.W.Error(fmt.Sprintf("NOGROUP No such key '%s' or consumer group '%s' in XREADGROUP with GROUP option", key, a.group))
				return
			}
			groups[i] = g
		}
		switch string(arg) {
		case "$":
			if group {
				c.W.Error("ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.")
				return
			}
			if s != nil {
				ids[i] = s.LastID
			}
			continue
		case ">":
			if !group {
				c.W.Error("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.")
				return
			}
			ids[i] = stream.MaxID
			continue
		}
		if ids[i], _, ok = parseStreamID(c, arg, 0, stream.Strict); !ok {
			return
		}
	}
	// Serve at once what can be served.
	mark := len(c.W.B)
	var body []byte
	served := 0
	var recs [][][]byte
	for i := range a.n {
		e := c.Lookup(keys[i])
		if e == nil || e.Kind != keyspace.KindStream {
			continue
		}
		s := e.Obj.(*stream.Stream)
		gt := ids[i]
		history := false
		sync := false
		if group {
			if gt != stream.MaxID {
				sync, history = true, true
			} else if s.Len() > 0 && groups[i].LastID.Less(s.LastValid()) {
				sync, gt = true, groups[i].LastID
			}
		} else if s.Len() > 0 && gt.Less(s.LastValid()) {
			sync = true
		}
		if !sync {
			continue
		}
		served++
		saved := c.W.B
		c.W.B = body
		if c.W.Proto < 3 {
			c.W.Array(2)
		}
		c.W.Bulk(keys[i])
		start, _ := gt.Incr()
		if group {
			recs = serveGroup(c, s, groups[i], keys[i], a, start, a.count, history, recs)
		} else {
			writeRange(c, s, start, stream.MaxID, a.count, false)
		}
		body, c.W.B = c.W.B, saved
	}
	if group {
		c.Unchanged() // reads do not signal WATCHers or blocked clients
		streamRecords(c, recs, served > 0)
	}
	c.W.B = c.W.B[:mark]
	if served > 0 {
		if c.W.Proto < 3 {
			c.W.Array(served)
		} else {
			c.W.Map(served)
		}
		c.W.Raw(body)
		return
	}
	if a.block < 0 || !c.CanBlock() {
		c.W.NullArray()
		return
	}
	// Park: "$" becomes the ID it stood for, so the re-run waits for the
	// same entries.
	for i := range a.n {
		if string(c.Args[a.streamsAt+a.n+i]) == "$" {
			c.Args[a.streamsAt+a.n+i] = ids[i].Append(nil)
		}
	}
	d := time.Duration(0)
	if a.block > 0 {
		d = time.Duration(min(a.block, math.MaxInt64/int64(time.Millisecond))) * time.Millisecond
	}
	c.Block(keys, d, engine.TimedOut)
}

// xreadWoken is the re-run of a parked read after a write signalled
// c.S.WakeKey(): it serves that stream if it has entries past the ID the
// client waits for, and otherwise keeps waiting.
func xreadWoken(c *engine.Call, a xreadArgs, group bool) {
	keys := c.Args[a.streamsAt : a.streamsAt+a.n]
	i := -1
	for k, key := range keys {
		if string(key) == c.S.WakeKey() {
			i = k
			break
		}
	}
	if i < 0 {
		c.Block(keys, 0, engine.TimedOut)
		return
	}
	key := keys[i]
	e := c.LookupWrite(key)
	if e == nil || e.Kind != keyspace.KindStream {
		if group {
			c.W.Error("UNBLOCKED the stream key no longer exists")
			return
		}
		c.Block(keys, 0, engine.TimedOut)
		return
	}
	s := e.Obj.(*stream.Stream)
	var gt stream.ID
	var g *stream.Group
	if group {
		if g = s.Group(a.group); g == nil {
			c.W.Error("NOGROUP the consumer group this client was blocked on no longer exists")
			return
		}
		gt = g.LastID
	} else {
		gt, _, _ = stream.ParseID(c.Args[a.streamsAt+a.n+i], 0, stream.Strict)
	}
	if !gt.Less(s.LastID) {
		c.Block(keys, 0, engine.TimedOut)
		return
	}
	count := a.count
	if count == 0 {
		count = xreadDefaultCount
	}
	if c.W.Proto < 3 {
		c.W.Array(1)
		c.W.Array(2)
	} else {
		c.W.Map(1)
	}
	c.W.Bulk(key)
	start, _ := gt.Incr()
	if !group {
		writeRange(c, s, start, stream.MaxID, count, false)
		return
	}
	recs := serveGroup(c, s, g, key, a, start, count, false, nil)
	c.Unchanged()
	streamRecords(c, recs, true)
}

// serveGroup replies the entries of a group read: new entries from start
// (delivered: the group's last ID moves, pending entries are created or
// moved to the consumer unless NOACK), or with history the consumer's own
// pending entries from start. It returns the records to stream.
func serveGroup(c *engine.Call, s *stream.Stream, g *stream.Group, key []byte, a xreadArgs, start stream.ID,
	count int64, history bool, recs [][][]byte) [][][]byte {
	cons := g.Consumer(a.cons)
	if cons != nil {
		cons.SeenTime = c.Now
	} else {
		cons = g.CreateConsumer(a.cons, c.Now)
		c.Notify(engine.NotifyStream, "xgroup-createconsumer", key)
		if a.noack && c.Replicating() {
			recs = append(recs, [][]byte{[]byte("XGROUP"), []byte("CREATECONSUMER"), key, a.group, a.cons})
		}
	}
	if history {
		type hit struct {
			id stream.ID
			p  *stream.Pending
		}
		var hits []hit
		cons.PendingRange(start, func(id stream.ID, p *stream.Pending) bool {
			if count != 0 && int64(len(hits)) >= count {
				return false
			}
			hits = append(hits, hit{id, p})
			return true
		})
		c.W.Array(len(hits))
		for _, h := range hits {
			if writeOne(c, s, h.id) {
				h.p.DeliveryTime = c.Now
				h.p.DeliveryCount++
				continue
			}
			c.W.Array(2)
			writeID(c, h.id)
			c.W.NullArray()
		}
		return recs
	}
	mark := len(c.W.B)
	c.W.Array(0) // placeholder, rewritten below
	hdr := len(c.W.B)
	var n int64
	moved := false
	it := s.Iter(start, stream.MaxID, false)
	for id, k, ok := it.Next(); ok && (count == 0 || n < count); id, k, ok = it.Next() {
		if s.UpdateLastID(g, id) && a.noack {
			moved = true
		}
		writeEntry(c, it, id, k)
		n++
		if !a.noack {
			p := g.Deliver(id, cons, c.Now)
			if c.Replicating() {
				recs = append(recs, xclaimRecord(key, g, id.Append(nil), p))
			}
		}
	}
	body := append([]byte(nil), c.W.B[hdr:]...)
	c.W.B = c.W.B[:mark]
	c.W.Array(int(n))
	c.W.Raw(body)
	if moved && c.Replicating() {
		recs = append(recs, setIDRecord(key, a.group, g))
	}
	return recs
}
