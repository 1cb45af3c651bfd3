package streamcmd

// Stream commands on one stream: XADD, XTRIM, XDEL, XLEN, XRANGE,
// XREVRANGE and XSETID (consumer groups: stream_group.go; XREAD and
// XREADGROUP: stream_read.go; XINFO: stream_info.go). Replies, error
// texts and the replicated forms follow Redis 7.0: XADD and XTRIM with
// "~" stream the exact trim they did ("MAXLEN = <len>" / "MINID =
// <first id>"), and XADD streams the ID it generated.

import (
	"strconv"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/actors/engine/types/stream"
	"github.com/slotd/slotd/netio/command"
)

func streamSpec(s *command.Spec) *command.Spec {
	s.Group = "stream"
	s.Exec = command.Shard
	if s.First == 0 && s.Keys == nil {
		s.First, s.Last, s.Step = 1, 1, 1
	}
	return s
}

func registerStreamCmds() {
	w, r := []string{"write", "stream"}, []string{"read", "stream"}
	command.Register(
		streamSpec(engine.Handle(&command.Spec{Name: "xadd", Arity: -5, Flags: []string{"write", "denyoom", "fast"},
			Categories: append(w, "fast"), Tips: []string{"nondeterministic_output"}, Since: "5.0.0",
			Summary: "Appends a new entry to a stream"}, cmdXAdd)),
		streamSpec(engine.Handle(&command.Spec{Name: "xtrim", Arity: -4, Flags: []string{"write"}, Categories: append(w, "slow"),
			Tips: []string{"nondeterministic_output"}, Since: "5.0.0",
			Summary: "Trims the stream to (approximately if '~' is passed) a certain size"}, cmdXTrim)),
		streamSpec(engine.Handle(&command.Spec{Name: "xdel", Arity: -3, Flags: []string{"write", "fast"}, Categories: append(w, "fast"),
			Since: "5.0.0", Summary: "Removes the specified entries from the stream. Returns the number of items actually deleted, that may be different from the number of IDs passed in case certain IDs do not exist."}, cmdXDel)),
		streamSpec(engine.Handle(&command.Spec{Name: "xlen", Arity: 2, Flags: []string{"readonly", "fast"}, Categories: append(r, "fast"),
			Since: "5.0.0", Summary: "Return the number of entries in a stream"}, cmdXLen)),
		streamSpec(engine.Handle(&command.Spec{Name: "xrange", Arity: -4, Flags: []string{"readonly"}, Categories: append(r, "slow"),
			Since: "5.0.0", Summary: "Return a range of elements in a stream, with IDs matching the specified IDs interval"}, func(c *engine.Call) { xrange(c, false) })),
		streamSpec(engine.Handle(&command.Spec{Name: "xrevrange", Arity: -4, Flags: []string{"readonly"}, Categories: append(r, "slow"),
			Since: "5.0.0", Summary: "Return a range of elements in a stream, with IDs matching the specified IDs interval, in reverse order (from greater to smaller IDs) compared to XRANGE"}, func(c *engine.Call) { xrange(c, true) })),
		streamSpec(engine.Handle(&command.Spec{Name: "xsetid", Arity: -3, Flags: []string{"write", "denyoom", "fast"},
			Categories: append(w, "fast"), Since: "5.0.0",
			Summary: "An internal command for replicating stream values"}, cmdXSetID)),
	)
}

const (
	errInvalidStreamID = "ERR Invalid stream ID specified as stream command argument"
	errNoKey           = "ERR no such key"
)

// streamConfig is the node shape for new entries.
func streamConfig(c *engine.Call) stream.Config {
	g := c.S.Group()
	return stream.Config{NodeMaxBytes: g.StreamNodeMaxBytes.Load(), NodeMaxEntries: g.StreamNodeMaxEntries.Load()}
}

// streamOf returns e's stream (e may be nil), replying WRONGTYPE for other
// kinds.
func streamOf(c *engine.Call, e *keyspace.Entry) (*stream.Stream, bool) {
	if e == nil {
		return nil, true
	}
	if e.Kind != keyspace.KindStream {
		c.W.Error(engine.ErrWrongType)
		return nil, false
	}
	return e.Obj.(*stream.Stream), true
}

// parseStreamID reads an ID argument, replying Redis's error to a bad one.
func parseStreamID(c *engine.Call, arg []byte, missingSeq uint64, mode stream.ParseMode) (stream.ID, bool, bool) {
	id, seqGiven, ok := stream.ParseID(arg, missingSeq, mode)
	if !ok {
		c.W.Error(errInvalidStreamID)
	}
	return id, seqGiven, ok
}

// parseIntervalID reads a range bound: "(" makes it exclusive (strict
// parsing, then moved one step inward).
func parseIntervalID(c *engine.Call, arg []byte, missingSeq uint64, start bool) (stream.ID, bool) {
	if len(arg) > 1 && arg[0] == '(' {
		id, _, ok := parseStreamID(c, arg[1:], missingSeq, stream.Strict)
		if !ok {
			return id, false
		}
		var inRange bool
		if start {
			if id, inRange = id.Incr(); !inRange {
				c.W.Error("ERR invalid start ID for the interval")
			}
		} else if id, inRange = id.Decr(); !inRange {
			c.W.Error("ERR invalid end ID for the interval")
		}
		return id, inRange
	}
	id, _, ok := parseStreamID(c, arg, missingSeq, stream.Lenient)
	return id, ok
}

func appendID(b []byte, id stream.ID) []byte { return id.Append(b) }

// writeID replies an ID as a bulk string.
func writeID(c *engine.Call, id stream.ID) {
	var buf [48]byte
	c.W.Bulk(id.Append(buf[:0]))
}

// writeEntry replies the entry the iterator is on: [id, [f, v, ...]].
func writeEntry(c *engine.Call, it *stream.Iter, id stream.ID, n int) {
	c.W.Array(2)
	writeID(c, id)
	c.W.Array(2 * n)
	for range n {
		f, v := it.Field()
		c.W.Bulk(f)
		c.W.Bulk(v)
	}
}

// writeRange replies the entries of [start, end] (count 0: all) as an
// array and returns how many it wrote.
func writeRange(c *engine.Call, s *stream.Stream, start, end stream.ID, count int64, rev bool) int64 {
	mark := len(c.W.B)
	var n int64
	it := s.Iter(start, end, rev)
	// Count first so the array header is exact: ranges are walked twice,
	// which costs less than buffering the entries.
	for _, _, ok := it.Next(); ok && (count == 0 || n < count); _, _, ok = it.Next() {
		n++
	}
	c.W.B = c.W.B[:mark]
	c.W.Array(int(n))
	it = s.Iter(start, end, rev)
	for i := int64(0); i < n; i++ {
		id, k, _ := it.Next()
		writeEntry(c, it, id, k)
	}
	return n
}

// writeOne replies the entry id (nested, without an array around it) and
// reports whether it exists.
func writeOne(c *engine.Call, s *stream.Stream, id stream.ID) bool {
	it := s.Iter(id, id, false)
	got, n, ok := it.Next()
	if ok {
		writeEntry(c, it, got, n)
	}
	return ok
}

// trimOpts are XADD/XTRIM's parsed options.
type trimOpts struct {
	stream.TrimArgs
	argIdx     int // index of the MAXLEN/MINID value
	id         stream.ID
	idGiven    bool
	seqGiven   bool
	noMkStream bool
	idPos      int
}

// parseTrimOpts reads the options of XADD (xadd set: up to the ID) or
// XTRIM, as Redis's streamParseAddOrTrimArgsOrReply.
func parseTrimOpts(c *engine.Call, xadd bool) (trimOpts, bool) {
	var o trimOpts
	args := c.Args
	limitGiven := false
	i := 2
	for ; i < len(args); i++ {
		more := len(args) - 1 - i
		a := args[i]
		switch {
		case xadd && len(a) == 1 && a[0] == '*':
			o.idPos = i
			goto done
		case engine.EqFold(a, "maxlen") && more > 0, engine.EqFold(a, "minid") && more > 0:
			if o.Strategy != stream.TrimNone {
				c.W.Error("ERR syntax error, MAXLEN and MINID options at the same time are not compatible")
				return o, false
			}
			maxlen := engine.EqFold(a, "maxlen")
			o.Approx = false
			if next := args[i+1]; more >= 2 && len(next) == 1 && (next[0] == '~' || next[0] == '=') {
				o.Approx = next[0] == '~'
				i++
			}
			if maxlen {
				n, ok := c.IntArg(args[i+1])
				if !ok {
					return o, false
				}
				if n < 0 {
					c.W.Error("ERR The MAXLEN argument must be >= 0.")
					return o, false
				}
				o.MaxLen, o.Strategy = n, stream.TrimMaxLen
			} else {
				id, _, ok := parseStreamID(c, args[i+1], 0, stream.Strict)
				if !ok {
					return o, false
				}
				o.MinID, o.Strategy = id, stream.TrimMinID
			}
			i++
			o.argIdx = i
		case engine.EqFold(a, "limit") && more > 0:
			n, ok := c.IntArg(args[i+1])
			if !ok {
				return o, false
			}
			if n < 0 {
				c.W.Error("ERR The LIMIT argument must be >= 0.")
				return o, false
			}
			o.Limit, limitGiven = n, true
			i++
		case xadd && engine.EqFold(a, "nomkstream"):
			o.noMkStream = true
		case xadd:
			id, seqGiven, ok := parseStreamID(c, a, 0, stream.StrictSeqStar)
			if !ok {
				return o, false
			}
			o.id, o.idGiven, o.seqGiven, o.idPos = id, true, seqGiven, i
			goto done
		default:
			c.W.Error(engine.ErrSyntax)
			return o, false
		}
	}
	o.idPos = i
done:
	if o.Limit != 0 && o.Strategy == stream.TrimNone {
		c.W.Error("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy")
		return o, false
	}
	if !xadd && o.Strategy == stream.TrimNone {
		c.W.Error("ERR syntax error, XTRIM must be called with a trimming strategy")
		return o, false
	}
	if c.FromMaster() {
		o.Limit = 0 // the primary streams exact trims
	} else if limitGiven {
		if !o.Approx {
			c.W.Error("ERR syntax error, LIMIT cannot be used without the special ~ option")
			return o, false
		}
	} else if o.Approx {
		o.Limit = min(max(100*c.S.Group().StreamNodeMaxEntries.Load(), 0), 1000000)
		if o.Limit <= 0 {
			o.Limit = 10000
		}
	} else {
		o.Limit = 0
	}
	return o, true
}

// trimmedArgs is the command with "~ <n>" replaced by "= <what the trim
// left>", for replicas and the AOF.
func trimmedArgs(args [][]byte, o *trimOpts, s *stream.Stream) [][]byte {
	out := append([][]byte(nil), args...)
	out[o.argIdx-1] = []byte("=")
	if o.Strategy == stream.TrimMaxLen {
		out[o.argIdx] = strconv.AppendUint(nil, s.Len(), 10)
	} else {
		first, _ := s.Edge(true, false)
		out[o.argIdx] = first.Append(nil)
	}
	return out
}

func cmdXAdd(c *engine.Call) {
	o, ok := parseTrimOpts(c, true)
	if !ok {
		return
	}
	fieldPos := o.idPos + 1
	if n := len(c.Args) - fieldPos; n < 2 || n%2 == 1 {
		c.W.Error("ERR wrong number of arguments for 'xadd' command")
		return
	}
	if o.idGiven && o.seqGiven && o.id.IsZero() {
		c.W.Error("ERR The ID specified in XADD must be greater than 0-0")
		return
	}
	key := c.Args[1]
	e, ok := c.OfKind(c.LookupWrite(key), keyspace.KindStream)
	if !ok {
		return
	}
	if e == nil {
		if o.noMkStream {
			c.W.Null()
			c.Unchanged()
			return
		}
		e = c.Create(key, keyspace.KindStream)
		e.Obj = stream.New()
	}
	s := e.Obj.(*stream.Stream)
	if s.LastID == stream.MaxID {
		c.W.Error("ERR The stream has exhausted the last possible ID, unable to add more items")
		return
	}
	id, seqGiven := o.id, o.seqGiven
	if !o.idGiven {
		var ok bool
		if id, ok = s.NextID(uint64(c.Now)); !ok {
			id = stream.ID{} // wraps: refused as too small below
		}
		seqGiven = true
	}
	added, err := s.Add(streamConfig(c), id, seqGiven, c.Args[fieldPos:])
	if err != nil {
		if err == stream.ErrIDTooSmall {
			c.W.Error("ERR The ID specified in XADD is equal or smaller than the target stream top item")
		} else {
			c.W.Error("ERR Elements are too large to be stored") // a stream just created stays, empty, as in Redis
		}
		return
	}
	var buf [48]byte
	idText := added.Append(buf[:0])
	c.W.Bulk(idText)
	c.Notify(engine.NotifyStream, "xadd", key)
	if o.Strategy != stream.TrimNone && s.Trim(o.TrimArgs) > 0 {
		c.Notify(engine.NotifyStream, "xtrim", key)
	}
	if c.Replicating() {
		out := c.Args
		if o.Approx {
			out = trimmedArgs(c.Args, &o, s)
		}
		if !o.idGiven || !o.seqGiven {
			if &out[0] == &c.Args[0] {
				out = append([][]byte(nil), c.Args...)
			}
			out[o.idPos] = append([]byte(nil), idText...)
		}
		c.Propagate(out...)
	}
}

func cmdXTrim(c *engine.Call) {
	o, ok := parseTrimOpts(c, false)
	if !ok {
		return
	}
	s, ok := streamOf(c, c.LookupWrite(c.Args[1]))
	if !ok {
		return
	}
	if s == nil {
		c.W.Int(0)
		c.Unchanged()
		return
	}
	n := s.Trim(o.TrimArgs)
	if n == 0 {
		c.Unchanged()
	} else {
		c.Notify(engine.NotifyStream, "xtrim", c.Args[1])
		if c.Replicating() && o.Approx {
			c.Propagate(trimmedArgs(c.Args, &o, s)...)
		}
	}
	c.W.Int(n)
}

func cmdXDel(c *engine.Call) {
	s, ok := streamOf(c, c.LookupWrite(c.Args[1]))
	if !ok {
		return
	}
	if s == nil {
		c.W.Int(0)
		c.Unchanged()
		return
	}
	ids := make([]stream.ID, 0, len(c.Args)-2)
	for _, a := range c.Args[2:] {
		id, _, ok := parseStreamID(c, a, 0, stream.Strict)
		if !ok {
			return
		}
		ids = append(ids, id)
	}
	n := s.DeleteIDs(ids)
	if n == 0 {
		c.Unchanged()
	} else {
		c.Notify(engine.NotifyStream, "xdel", c.Args[1])
	}
	c.W.Int(int64(n))
}

func cmdXLen(c *engine.Call) {
	s, ok := streamOf(c, c.Lookup(c.Args[1]))
	if !ok {
		return
	}
	if s == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(s.Len()))
}

func xrange(c *engine.Call, rev bool) {
	startArg, endArg := c.Args[2], c.Args[3]
	if rev {
		startArg, endArg = endArg, startArg
	}
	start, ok := parseIntervalID(c, startArg, 0, true)
	if !ok {
		return
	}
	end, ok := parseIntervalID(c, endArg, 1<<64-1, false)
	if !ok {
		return
	}
	count := int64(-1)
	for j := 4; j < len(c.Args); j++ {
		if engine.EqFold(c.Args[j], "count") && j+1 < len(c.Args) {
			n, ok := c.IntArg(c.Args[j+1])
			if !ok {
				return
			}
			count = max(n, 0)
			j++
		} else {
			c.W.Error(engine.ErrSyntax)
			return
		}
	}
	s, ok := streamOf(c, c.Lookup(c.Args[1]))
	if !ok {
		return
	}
	if s == nil {
		c.W.Array(0)
		return
	}
	if count == 0 {
		c.W.NullArray()
		return
	}
	writeRange(c, s, start, end, max(count, 0), rev)
}

func cmdXSetID(c *engine.Call) {
	id, _, ok := parseStreamID(c, c.Args[2], 0, stream.Strict)
	if !ok {
		return
	}
	added := int64(-1)
	var maxDel stream.ID
	for i := 3; i < len(c.Args); i++ {
		more := len(c.Args) - 1 - i
		switch a := c.Args[i]; {
		case engine.EqFold(a, "entriesadded") && more > 0:
			n, ok := c.IntArg(c.Args[i+1])
			if !ok {
				return
			}
			if n < 0 {
				c.W.Error("ERR entries_added must be positive")
				return
			}
			added = n
			i++
		case engine.EqFold(a, "maxdeletedid") && more > 0:
			v, _, ok := parseStreamID(c, c.Args[i+1], 0, stream.Strict)
			if !ok {
				return
			}
			if id.Less(v) {
				c.W.Error("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id")
				return
			}
			maxDel = v
			i++
		default:
			c.W.Error(engine.ErrSyntax)
			return
		}
	}
	e := c.LookupWrite(c.Args[1])
	if e == nil {
		c.W.Error(errNoKey)
		return
	}
	s, ok := streamOf(c, e)
	if !ok {
		return
	}
	if s.Len() > 0 {
		if id.Less(s.LastValid()) {
			c.W.Error("ERR The ID specified in XSETID is smaller than the target stream top item")
			return
		}
		if added != -1 && s.Len() > uint64(added) {
			c.W.Error("ERR The entries_added specified in XSETID is smaller than the target stream length")
			return
		}
	}
	s.LastID = id
	if added != -1 {
		s.EntriesAdded = uint64(added)
	}
	if !maxDel.IsZero() {
		s.MaxDeletedID = maxDel
	}
	quietWrite(c)
	c.Notify(engine.NotifyStream, "xsetid", c.Args[1])
	c.W.OK()
}
