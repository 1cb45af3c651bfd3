package streamcmd

// Consumer groups: XGROUP (CREATE, SETID, DESTROY, CREATECONSUMER,
// DELCONSUMER, HELP), XACK, XPENDING, XCLAIM and XAUTOCLAIM. Like Redis,
// XCLAIM and XAUTOCLAIM stream one idempotent XCLAIM ... FORCE JUSTID
// LASTID record per entry they changed (stream_read.go builds it), never
// themselves.

import (
	"fmt"
	"math"
	"strconv"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/actors/engine/types/stream"
	"github.com/slotd/slotd/netio/command"
)

func registerStreamGroup() {
	w := []string{"write", "stream"}
	sub := func(_ string, arity int, flags []string, cats, summary string, h func(*engine.Call)) *command.Spec {
		return streamSpec(engine.Handle(&command.Spec{Arity: arity, Flags: flags, First: 2, Last: 2, Step: 1,
			Categories: append(append([]string(nil), w...), cats), Since: "5.0.0", Summary: summary}, h))
	}
	command.Register(
		&command.Spec{Name: "xgroup", Arity: -2, Categories: []string{"slow"}, Group: "stream", Since: "5.0.0",
			Summary: "A container for consumer groups commands",
			Subcommands: map[string]*command.Spec{
				"create": sub("create", -5, []string{"write", "denyoom"}, "slow",
					"Create a consumer group.", cmdXGroup),
				"setid": sub("setid", -5, []string{"write"}, "slow",
					"Set a consumer group to an arbitrary last delivered ID value.", cmdXGroup),
				"destroy": sub("destroy", 4, []string{"write"}, "slow", "Destroy a consumer group.", cmdXGroup),
				"createconsumer": sub("createconsumer", 5, []string{"write", "denyoom"}, "slow",
					"Create a consumer in a consumer group.", cmdXGroup),
				"delconsumer": sub("delconsumer", 5, []string{"write"}, "slow",
					"Delete a consumer from a consumer group.", cmdXGroup),
				"help": streamSpec(engine.Handle(&command.Spec{Arity: 2, Flags: []string{"loading", "stale"},
					Categories: []string{"stream", "slow"}, First: -1, Since: "5.0.0",
					Summary: "Show helpful text about the different subcommands"}, cmdXGroupHelp)),
			}},
		streamSpec(engine.Handle(&command.Spec{Name: "xack", Arity: -4, Flags: []string{"write", "fast"}, Categories: append(w, "fast"),
			Since: "5.0.0", Summary: "Marks a pending message as correctly processed, effectively removing it from the pending entries list of the consumer group. Return value of the command is the number of messages successfully acknowledged, that is, the IDs we were actually able to resolve in the PEL."}, cmdXAck)),
		streamSpec(engine.Handle(&command.Spec{Name: "xpending", Arity: -3, Flags: []string{"readonly"},
			Categories: []string{"read", "stream", "slow"}, Tips: []string{"nondeterministic_output"}, Since: "5.0.0",
			Summary: "Return information and entries from a stream consumer group pending entries list, that are messages fetched but never acknowledged."}, cmdXPending)),
		streamSpec(engine.Handle(&command.Spec{Name: "xclaim", Arity: -6, Flags: []string{"write", "fast"}, Categories: append(w, "fast"),
			Tips: []string{"nondeterministic_output"}, Since: "5.0.0",
			Summary: "Changes (or acquires) ownership of a message in a consumer group, as if the message was delivered to the specified consumer."}, cmdXClaim)),
		streamSpec(engine.Handle(&command.Spec{Name: "xautoclaim", Arity: -6, Flags: []string{"write", "fast"}, Categories: append(w, "fast"),
			Tips: []string{"nondeterministic_output"}, Since: "6.2.0",
			Summary: "Changes (or acquires) ownership of messages in a consumer group, as if the messages were delivered to the specified consumer."}, cmdXAutoClaim)),
	)
}

var xgroupHelp = []string{
	"XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CREATE <key> <groupname> <id|$> [option]",
	"    Create a new consumer group. Options are:",
	"    * MKSTREAM",
	"      Create the empty stream if it does not exist.",
	"    * ENTRIESREAD entries_read",
	"      Set the group's entries_read counter (internal use).",
	"CREATECONSUMER <key> <groupname> <consumer>",
	"    Create a new consumer in the specified group.",
	"DELCONSUMER <key> <groupname> <consumer>",
	"    Remove the specified consumer.",
	"DESTROY <key> <groupname>",
	"    Remove the specified group.",
	"SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
	"    Set the current group ID and entries_read counter.",
	"HELP",
	"    Prints this help.",
}

func writeHelpLines(c *engine.Call, lines []string) {
	c.W.Array(len(lines))
	for _, l := range lines {
		c.W.Simple(l)
	}
}

func cmdXGroupHelp(c *engine.Call) { writeHelpLines(c, xgroupHelp) }

// subcommandError is Redis's addReplySubcommandSyntaxError.
func subcommandError(c *engine.Call) {
	name := make([]byte, len(c.Args[0]))
	for i, b := range c.Args[0] {
		if b >= 'a' && b <= 'z' {
			b -= 32
		}
		name[i] = b
	}
	c.W.Error(fmt.Sprintf("ERR unknown subcommand or wrong number of arguments for '%.128s'. Try %s HELP.",
		c.Args[1], name))
}

func errNoGroupKey(key, group []byte) string {
	return fmt.Sprintf("NOGROUP No such key '%s' or consumer group '%s'", key, group)
}

func cmdXGroup(c *engine.Call) {
	op := c.Args[1]
	create, setid := engine.EqFold(op, "create"), engine.EqFold(op, "setid")
	mkstream := false
	entriesRead := int64(stream.Invalid)
	for i := 5; i < len(c.Args); {
		switch a := c.Args[i]; {
		case create && engine.EqFold(a, "mkstream"):
			mkstream = true
			i++
		case (create || setid) && engine.EqFold(a, "entriesread") && i+1 < len(c.Args):
			n, ok := c.IntArg(c.Args[i+1])
			if !ok {
				return
			}
			if n < 0 && n != stream.Invalid {
				c.W.Error("ERR value for ENTRIESREAD must be positive or -1")
				return
			}
			entriesRead = n
			i += 2
		default:
			subcommandError(c)
			return
		}
	}
	key, name := c.Args[2], c.Args[3]
	e := c.LookupWrite(key)
	s, ok := streamOf(c, e)
	if !ok {
		return
	}
	var g *stream.Group
	if !mkstream {
		if s == nil {
			c.W.Error("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.")
			return
		}
		if g = s.Group(name); g == nil && !create && !engine.EqFold(op, "destroy") {
			c.W.Error(fmt.Sprintf("NOGROUP No such consumer group '%s' for key name '%s'", name, key))
			return
		}
	}
	n := len(c.Args)
	switch {
	case create && n >= 5 && n <= 8:
		var id stream.ID
		if string(c.Args[4]) == "$" {
			if s != nil {
				id = s.LastID
			}
		} else if id, _, ok = parseStreamID(c, c.Args[4], 0, stream.Strict); !ok {
			return
		}
		created := false
		if s == nil {
			e = c.Create(key, keyspace.KindStream)
			s = stream.New()
			e.Obj = s
			created = true
		}
		if s.CreateGroup(name, id, entriesRead) == nil {
			c.W.Error("BUSYGROUP Consumer Group name already exists")
			return
		}
		if !created {
			quietWrite(c)
		}
		c.Notify(engine.NotifyStream, "xgroup-create", key)
		c.W.OK()
	case setid && (n == 5 || n == 7):
		var id stream.ID
		if string(c.Args[4]) == "$" {
			id = s.LastID
		} else if id, _, ok = parseStreamID(c, c.Args[4], 0, stream.Lenient); !ok {
			return
		}
		g.LastID, g.EntriesRead = id, entriesRead
		quietWrite(c)
		c.Notify(engine.NotifyStream, "xgroup-setid", key)
		c.W.OK()
	case engine.EqFold(op, "destroy") && n == 4:
		if g == nil || !s.DestroyGroup(name) {
			c.W.Int(0)
			c.Unchanged()
			return
		}
		quietWrite(c)
		c.Notify(engine.NotifyStream, "xgroup-destroy", key)
		c.S.SignalBlocked(key) // group readers blocked on it fail with NOGROUP
		c.W.Int(1)
	case engine.EqFold(op, "createconsumer") && n == 5:
		if g.CreateConsumer(c.Args[4], c.Now) == nil {
			c.W.Int(0)
			c.Unchanged()
			return
		}
		quietWrite(c)
		c.Notify(engine.NotifyStream, "xgroup-createconsumer", key)
		c.W.Int(1)
	case engine.EqFold(op, "delconsumer") && n == 5:
		cons := g.Consumer(c.Args[4])
		if cons == nil {
			c.W.Int(0)
			c.Unchanged()
			return
		}
		quietWrite(c)
		c.W.Int(int64(g.DeleteConsumer(cons)))
		c.Notify(engine.NotifyStream, "xgroup-delconsumer", key)
	default:
		subcommandError(c)
	}
}

func cmdXAck(c *engine.Call) {
	s, ok := streamOf(c, c.Lookup(c.Args[1]))
	if !ok {
		return
	}
	var g *stream.Group
	if s != nil {
		g = s.Group(c.Args[2])
	}
	if g == nil {
		c.W.Int(0)
		c.Unchanged()
		return
	}
	ids := make([]stream.ID, 0, len(c.Args)-3)
	for _, a := range c.Args[3:] {
		id, _, ok := parseStreamID(c, a, 0, stream.Strict)
		if !ok {
			return
		}
		ids = append(ids, id)
	}
	n := 0
	for _, id := range ids {
		if g.Ack(id) {
			n++
		}
	}
	if n == 0 {
		c.Unchanged()
	} else {
		quietWrite(c)
	}
	c.W.Int(int64(n))
}

// quietWrite marks a write that changed a stream's groups but, as in
// Redis, signals no WATCHer or blocked client: it is still replicated as
// sent.
func quietWrite(c *engine.Call) {
	c.Unchanged()
	if c.Replicating() {
		c.Propagate(c.Args...)
	}
}

func cmdXPending(c *engine.Call) {
	args := c.Args
	info := len(args) == 3
	if !info && (len(args) < 6 || len(args) > 9) {
		c.W.Error(engine.ErrSyntax)
		return
	}
	var start, end stream.ID
	var count, minIdle int64
	var consumerName []byte
	if !info {
		at := 3
		if engine.EqFold(args[3], "idle") {
			v, ok := c.IntArg(args[4])
			if !ok {
				return
			}
			if len(args) < 8 {
				c.W.Error(engine.ErrSyntax)
				return
			}
			minIdle, at = v, 5
		}
		n, ok := c.IntArg(args[at+2])
		if !ok {
			return
		}
		count = max(n, 0)
		if start, ok = parseIntervalID(c, args[at], 0, true); !ok {
			return
		}
		if end, ok = parseIntervalID(c, args[at+1], math.MaxUint64, false); !ok {
			return
		}
		if at+3 < len(args) {
			consumerName = args[at+3]
		}
	}
	s, ok := streamOf(c, c.Lookup(args[1]))
	if !ok {
		return
	}
	var g *stream.Group
	if s != nil {
		g = s.Group(args[2])
	}
	if g == nil {
		c.W.Error(errNoGroupKey(args[1], args[2]))
		return
	}
	if info {
		c.W.Array(4)
		c.W.Int(int64(g.PendingLen()))
		if g.PendingLen() == 0 {
			c.W.Null()
			c.W.Null()
			c.W.NullArray()
			return
		}
		lo, hi := g.PendingBounds()
		writeID(c, lo)
		writeID(c, hi)
		n := 0
		for _, cons := range g.Consumers() {
			if cons.PendingLen() > 0 {
				n++
			}
		}
		c.W.Array(n)
		for _, cons := range g.Consumers() {
			if cons.PendingLen() > 0 {
				c.W.Array(2)
				c.W.BulkString(cons.Name)
				c.W.BulkInt(int64(cons.PendingLen()))
			}
		}
		return
	}
	each := g.PendingRange
	if consumerName != nil {
		cons := g.Consumer(consumerName)
		if cons == nil {
			c.W.Array(0)
			return
		}
		each = cons.PendingRange
	}
	type row struct {
		id stream.ID
		p  *stream.Pending
	}
	var rows []row
	each(start, func(id stream.ID, p *stream.Pending) bool {
		if count == 0 || end.Less(id) {
			return false
		}
		if minIdle != 0 && c.Now-p.DeliveryTime < minIdle {
			return true
		}
		rows = append(rows, row{id, p})
		count--
		return true
	})
	c.W.Array(len(rows))
	for _, r := range rows {
		c.W.Array(4)
		writeID(c, r.id)
		c.W.BulkString(r.p.Consumer.Name)
		c.W.Int(max(c.Now-r.p.DeliveryTime, 0))
		c.W.Int(int64(r.p.DeliveryCount))
	}
}

// streamGroupOrError finds the stream and group of XCLAIM/XAUTOCLAIM,
// replying NOGROUP when either is missing.
func streamGroupOrError(c *engine.Call) (*stream.Stream, *stream.Group, bool) {
	s, ok := streamOf(c, c.Lookup(c.Args[1]))
	if !ok {
		return nil, nil, false
	}
	var g *stream.Group
	if s != nil {
		g = s.Group(c.Args[2])
	}
	if g == nil {
		c.W.Error(errNoGroupKey(c.Args[1], c.Args[2]))
		return nil, nil, false
	}
	return s, g, true
}

// consumerFor finds or creates the named consumer of the command's stream
// (argument 1), refreshing its seen time.
func consumerFor(c *engine.Call, g *stream.Group, name []byte) *stream.Consumer {
	if cons := g.Consumer(name); cons != nil {
		cons.SeenTime = c.Now
		return cons
	}
	cons := g.CreateConsumer(name, c.Now)
	c.Notify(engine.NotifyStream, "xgroup-createconsumer", c.Args[1])
	return cons
}

func cmdXClaim(c *engine.Call) {
	s, g, ok := streamGroupOrError(c)
	if !ok {
		return
	}
	minIdle, ok := engine.ParseInt(c.Args[4])
	if !ok {
		c.W.Error("ERR Invalid min-idle-time argument for XCLAIM")
		return
	}
	minIdle = max(minIdle, 0)
	j := 5
	var ids []stream.ID
	for ; j < len(c.Args); j++ {
		id, _, ok := stream.ParseID(c.Args[j], 0, stream.Strict)
		if !ok {
			break
		}
		ids = append(ids, id)
	}
	retry := int64(-1)
	delivery := int64(-1)
	force, justID := false, false
	var lastID stream.ID
	for ; j < len(c.Args); j++ {
		more := len(c.Args) - 1 - j
		a := c.Args[j]
		switch {
		case engine.EqFold(a, "force"):
			force = true
		case engine.EqFold(a, "justid"):
			justID = true
		case engine.EqFold(a, "idle") && more > 0:
			j++
			v, ok := engine.ParseInt(c.Args[j])
			if !ok {
				c.W.Error("ERR Invalid IDLE option argument for XCLAIM")
				return
			}
			delivery = c.Now - v
		case engine.EqFold(a, "time") && more > 0:
			j++
			v, ok := engine.ParseInt(c.Args[j])
			if !ok {
				c.W.Error("ERR Invalid TIME option argument for XCLAIM")
				return
			}
			delivery = v
		case engine.EqFold(a, "retrycount") && more > 0:
			j++
			v, ok := engine.ParseInt(c.Args[j])
			if !ok {
				c.W.Error("ERR Invalid RETRYCOUNT option argument for XCLAIM")
				return
			}
			retry = v
		case engine.EqFold(a, "lastid") && more > 0:
			j++
			if lastID, _, ok = parseStreamID(c, c.Args[j], 0, stream.Strict); !ok {
				return
			}
		default:
			c.W.Error(fmt.Sprintf("ERR Unrecognized XCLAIM option '%s'", a))
			return
		}
	}
	propagateLast := false
	if g.LastID.Less(lastID) {
		g.LastID = lastID
		propagateLast = true
	}
	if delivery == -1 || delivery < 0 || delivery > c.Now {
		delivery = c.Now
	}
	var recs [][][]byte
	var cons *stream.Consumer
	mark := len(c.W.B)
	var out []byte
	n := 0
	changed := propagateLast
	for k, id := range ids {
		p := g.Pending(id)
		if !s.Exists(id) {
			if p != nil {
				recs = append(recs, xclaimRecord(c.Args[1], g, c.Args[5+k], p))
				propagateLast = false
				g.RemovePending(id)
				changed = true
			}
			continue
		}
		fresh := false
		if force && p == nil {
			fresh = true
		} else if p == nil {
			continue
		}
		if !fresh && minIdle != 0 && c.Now-p.DeliveryTime < minIdle {
			continue
		}
		if cons == nil {
			cons = consumerFor(c, g, c.Args[3])
		}
		count := uint64(1) // a PEL entry FORCE creates starts at one delivery, as in Redis
		if p != nil {
			count = p.DeliveryCount
		}
		switch {
		case retry >= 0:
			count = uint64(retry)
		case !justID:
			count++
		}
		p = g.SetPending(id, cons, delivery, count)
		saved := c.W.B
		c.W.B = out
		if justID {
			writeID(c, id)
		} else {
			writeOne(c, s, id)
		}
		out, c.W.B = c.W.B, saved
		n++
		recs = append(recs, xclaimRecord(c.Args[1], g, c.Args[5+k], p))
		propagateLast = false
		changed = true
	}
	c.W.B = c.W.B[:mark]
	c.W.Array(n)
	c.W.Raw(out)
	if propagateLast {
		recs = append(recs, setIDRecord(c.Args[1], c.Args[2], g))
	}
	if cons != nil && !changed {
		changed = true // a consumer was created or seen
	}
	streamRecords(c, recs, changed)
}

func cmdXAutoClaim(c *engine.Call) {
	minIdle, ok := engine.ParseInt(c.Args[4])
	if !ok {
		c.W.Error("ERR Invalid min-idle-time argument for XAUTOCLAIM")
		return
	}
	minIdle = max(minIdle, 0)
	start, ok := parseIntervalID(c, c.Args[5], 0, true)
	if !ok {
		return
	}
	count := int64(100)
	justID := false
	for j := 6; j < len(c.Args); j++ {
		more := len(c.Args) - 1 - j
		switch a := c.Args[j]; {
		case engine.EqFold(a, "count") && more > 0:
			v, ok := engine.ParseInt(c.Args[j+1])
			if !ok || v < 1 || v > math.MaxInt64/16 {
				c.W.Error("ERR COUNT must be > 0")
				return
			}
			count = v
			j++
		case engine.EqFold(a, "justid"):
			justID = true
		default:
			c.W.Error(engine.ErrSyntax)
			return
		}
	}
	s, g, ok := streamGroupOrError(c)
	if !ok {
		return
	}
	attempts := count * 10
	var cons *stream.Consumer
	var recs [][][]byte
	var deleted []stream.ID
	var out []byte
	n := 0
	cur := start
	next, p, more := g.PendingSeek(cur)
	for attempts > 0 && count > 0 && more {
		attempts--
		id := next
		if !s.Exists(id) {
			recs = append(recs, xclaimRecord(c.Args[1], g, id.Append(nil), p))
			g.RemovePending(id)
			deleted = append(deleted, id)
			count--
		} else if minIdle == 0 || c.Now-p.DeliveryTime >= minIdle {
			if cons == nil {
				cons = consumerFor(c, g, c.Args[3])
			}
			dc := p.DeliveryCount
			if !justID {
				dc++
			}
			p = g.SetPending(id, cons, c.Now, dc)
			saved := c.W.B
			c.W.B = out
			if justID {
				writeID(c, id)
			} else {
				writeOne(c, s, id)
			}
			out, c.W.B = c.W.B, saved
			n++
			count--
			recs = append(recs, xclaimRecord(c.Args[1], g, id.Append(nil), p))
		}
		var inRange bool
		if cur, inRange = id.Incr(); !inRange {
			more = false
			break
		}
		next, p, more = g.PendingSeek(cur)
	}
	var cursor stream.ID
	if more {
		cursor = next
	}
	c.W.Array(3)
	writeID(c, cursor)
	c.W.Array(n)
	c.W.Raw(out)
	c.W.Array(len(deleted))
	for _, id := range deleted {
		writeID(c, id)
	}
	streamRecords(c, recs, len(recs) > 0 || cons != nil)
}

// xclaimRecord is the idempotent XCLAIM Redis streams for a pending entry
// a command created, moved or dropped.
func xclaimRecord(key []byte, g *stream.Group, id []byte, p *stream.Pending) [][]byte {
	return [][]byte{cmdXCLAIM, key, []byte(g.Name), []byte(p.Consumer.Name), []byte("0"), id,
		[]byte("TIME"), strconv.AppendInt(nil, p.DeliveryTime, 10),
		[]byte("RETRYCOUNT"), strconv.AppendUint(nil, p.DeliveryCount, 10),
		[]byte("FORCE"), []byte("JUSTID"), []byte("LASTID"), g.LastID.Append(nil)}
}

// setIDRecord is XGROUP SETID key group <last id> ENTRIESREAD <n>.
func setIDRecord(key, group []byte, g *stream.Group) [][]byte {
	return [][]byte{[]byte("XGROUP"), []byte("SETID"), key, group, g.LastID.Append(nil),
		[]byte("ENTRIESREAD"), strconv.AppendInt(nil, g.EntriesRead, 10)}
}

var cmdXCLAIM = []byte("XCLAIM")

// streamRecords replaces the command's replicated form with recs (none:
// nothing is streamed); changed says whether the dataset changed.
func streamRecords(c *engine.Call, recs [][][]byte, changed bool) {
	c.Unchanged() // Redis signals no WATCHer for these
	_ = changed
	if len(recs) == 0 {
		c.NoPropagate()
		return
	}
	for _, r := range recs {
		c.Propagate(r...)
	}
}
