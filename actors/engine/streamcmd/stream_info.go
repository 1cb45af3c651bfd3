package streamcmd

// XINFO STREAM [FULL [COUNT n]], XINFO GROUPS, XINFO CONSUMERS, XINFO HELP.

import (
	"fmt"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/types/stream"
	"github.com/slotd/slotd/netio/command"
)

func registerStreamInfo() {
	sub := func(arity int, summary string, h func(*engine.Call)) *command.Spec {
		return streamSpec(engine.Handle(&command.Spec{Arity: arity, Flags: []string{"readonly"}, First: 2, Last: 2, Step: 1,
			Categories: []string{"read", "stream", "slow"}, Since: "5.0.0", Summary: summary}, h))
	}
	consumers := sub(4, "List the consumers in a consumer group", cmdXInfoConsumers)
	consumers.Tips = []string{"nondeterministic_output"}
	command.Register(&command.Spec{Name: "xinfo", Arity: -2, Categories: []string{"slow"}, Group: "stream",
		Since: "5.0.0", Summary: "A container for stream introspection commands",
		Subcommands: map[string]*command.Spec{
			"stream":    sub(-3, "Get information about a stream", cmdXInfoStream),
			"groups":    sub(3, "List the consumer groups of a stream", cmdXInfoGroups),
			"consumers": consumers,
			"help": streamSpec(engine.Handle(&command.Spec{Arity: 2, Flags: []string{"loading", "stale"}, First: -1,
				Categories: []string{"stream", "slow"}, Since: "5.0.0",
				Summary: "Show helpful text about the different subcommands"}, cmdXInfoHelp)),
		}})
}

var xinfoHelp = []string{
	"XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CONSUMERS <key> <groupname>",
	"    Show consumers of <groupname>.",
	"GROUPS <key>",
	"    Show the stream consumer groups.",
	"STREAM <key> [FULL [COUNT <count>]",
	"    Show information about the stream.",
	"HELP",
	"    Prints this help.",
}

func cmdXInfoHelp(c *engine.Call) { writeHelpLines(c, xinfoHelp) }

// xinfoStream finds XINFO's stream or replies "no such key" / WRONGTYPE.
func xinfoStream(c *engine.Call) (*stream.Stream, bool) {
	e := c.Lookup(c.Args[2])
	if e == nil {
		c.W.Error(errNoKey)
		return nil, false
	}
	return streamOf(c, e)
}

func writeLag(c *engine.Call, s *stream.Stream, g *stream.Group) {
	if lag, ok := s.Lag(g); ok {
		c.W.Int(lag)
	} else {
		c.W.Null()
	}
}

func writeEntriesRead(c *engine.Call, g *stream.Group) {
	if g.EntriesRead != stream.Invalid {
		c.W.Int(g.EntriesRead)
	} else {
		c.W.Null()
	}
}

func cmdXInfoConsumers(c *engine.Call) {
	s, ok := xinfoStream(c)
	if !ok {
		return
	}
	g := s.Group(c.Args[3])
	if g == nil {
		c.W.Error(fmt.Sprintf("NOGROUP No such consumer group '%s' for key name '%s'", c.Args[3], c.Args[2]))
		return
	}
	c.W.Array(len(g.Consumers()))
	for _, cons := range g.Consumers() {
		c.W.Map(3)
		c.W.BulkString("name")
		c.W.BulkString(cons.Name)
		c.W.BulkString("pending")
		c.W.Int(int64(cons.PendingLen()))
		c.W.BulkString("idle")
		c.W.Int(max(c.Now-cons.SeenTime, 0))
	}
}

func cmdXInfoGroups(c *engine.Call) {
	s, ok := xinfoStream(c)
	if !ok {
		return
	}
	c.W.Array(len(s.Groups()))
	for _, g := range s.Groups() {
		c.W.Map(6)
		c.W.BulkString("name")
		c.W.BulkString(g.Name)
		c.W.BulkString("consumers")
		c.W.Int(int64(len(g.Consumers())))
		c.W.BulkString("pending")
		c.W.Int(int64(g.PendingLen()))
		c.W.BulkString("last-delivered-id")
		writeID(c, g.LastID)
		c.W.BulkString("entries-read")
		writeEntriesRead(c, g)
		c.W.BulkString("lag")
		writeLag(c, s, g)
	}
}

func cmdXInfoStream(c *engine.Call) {
	opts := c.Args[3:]
	full, count := false, int64(10)
	if len(opts) > 0 {
		if (len(opts) != 1 && len(opts) != 3) || !engine.EqFold(opts[0], "full") {
			subcommandError(c)
			return
		}
		full = true
		if len(opts) == 3 {
			if !engine.EqFold(opts[1], "count") {
				subcommandError(c)
				return
			}
			n, ok := c.IntArg(opts[2])
			if !ok {
				return
			}
			if count = n; count < 0 {
				count = 10
			}
		}
	}
	s, ok := xinfoStream(c)
	if !ok {
		return
	}
	if full {
		c.W.Map(9)
	} else {
		c.W.Map(10)
	}
	c.W.BulkString("length")
	c.W.Int(int64(s.Len()))
	c.W.BulkString("radix-tree-keys")
	c.W.Int(int64(s.Nodes()))
	c.W.BulkString("radix-tree-nodes")
	c.W.Int(int64(raxNodes(s)))
	c.W.BulkString("last-generated-id")
	writeID(c, s.LastID)
	c.W.BulkString("max-deleted-entry-id")
	writeID(c, s.MaxDeletedID)
	c.W.BulkString("entries-added")
	c.W.Int(int64(s.EntriesAdded))
	c.W.BulkString("recorded-first-entry-id")
	writeID(c, s.FirstID)
	if !full {
		c.W.BulkString("groups")
		c.W.Int(int64(len(s.Groups())))
		c.W.BulkString("first-entry")
		if id, ok := s.Edge(true, true); !ok || !writeOne(c, s, id) {
			c.W.Null()
		}
		c.W.BulkString("last-entry")
		if id, ok := s.Edge(false, true); !ok || !writeOne(c, s, id) {
			c.W.Null()
		}
		return
	}
	c.W.BulkString("entries")
	writeRange(c, s, stream.MinID, stream.MaxID, count, false)
	c.W.BulkString("groups")
	c.W.Array(len(s.Groups()))
	for _, g := range s.Groups() {
		c.W.Map(7)
		c.W.BulkString("name")
		c.W.BulkString(g.Name)
		c.W.BulkString("last-delivered-id")
		writeID(c, g.LastID)
		c.W.BulkString("entries-read")
		writeEntriesRead(c, g)
		c.W.BulkString("lag")
		writeLag(c, s, g)
		c.W.BulkString("pel-count")
		c.W.Int(int64(g.PendingLen()))
		c.W.BulkString("pending")
		n := min(int64(g.PendingLen()), count)
		if count == 0 {
			n = int64(g.PendingLen())
		}
		c.W.Array(int(n))
		k := int64(0)
		g.PendingRange(stream.MinID, func(id stream.ID, p *stream.Pending) bool {
			if k >= n {
				return false
			}
			c.W.Array(4)
			writeID(c, id)
			c.W.BulkString(p.Consumer.Name)
			c.W.Int(p.DeliveryTime)
			c.W.Int(int64(p.DeliveryCount))
			k++
			return true
		})
		c.W.BulkString("consumers")
		c.W.Array(len(g.Consumers()))
		for _, cons := range g.Consumers() {
			c.W.Map(4)
			c.W.BulkString("name")
			c.W.BulkString(cons.Name)
			c.W.BulkString("seen-time")
			c.W.Int(cons.SeenTime)
			c.W.BulkString("pel-count")
			c.W.Int(int64(cons.PendingLen()))
			c.W.BulkString("pending")
			m := min(int64(cons.PendingLen()), count)
			if count == 0 {
				m = int64(cons.PendingLen())
			}
			c.W.Array(int(m))
			k := int64(0)
			cons.PendingRange(stream.MinID, func(id stream.ID, p *stream.Pending) bool {
				if k >= m {
					return false
				}
				c.W.Array(3)
				writeID(c, id)
				c.W.Int(p.DeliveryTime)
				c.W.Int(int64(p.DeliveryCount))
				k++
				return true
			})
		}
	}
}

// raxNodes is the node count of the radix tree Redis would hold for the
// stream's node keys (16-byte master IDs): every distinct prefix is a
// trie node, and a node whose parent has one child, that is no key and
// that has one child itself lives inside a compressed node.
func raxNodes(s *stream.Stream) int {
	var keys [][16]byte
	s.EachNode(func(master stream.ID, _ []byte) { keys = append(keys, master.Key()) })
	if len(keys) == 0 {
		return 1
	}
	// children[d][i]: number of distinct next bytes below the prefix
	// keys[i][:d], for the first key i holding that prefix.
	nodes := 1 // the root
	var walk func(lo, hi, depth int, parentKids int)
	walk = func(lo, hi, depth, parentKids int) {
		// keys[lo:hi] share keys[lo][:depth]; count the children.
		if depth == 16 {
			return
		}
		kids := 0
		for i := lo; i < hi; {
			j := i
			for j < hi && keys[j][depth] == keys[i][depth] {
				j++
			}
			kids++
			i = j
		}
		for i := lo; i < hi; {
			j := i
			for j < hi && keys[j][depth] == keys[i][depth] {
				j++
			}
			// the child prefix keys[i][:depth+1]
			childKids := 0
			if depth+1 < 16 {
				for k := i; k < j; {
					m := k
					for m < j && keys[m][depth+1] == keys[k][depth+1] {
						m++
					}
					childKids++
					k = m
				}
			}
			isKey := depth+1 == 16
			if !(kids == 1 && !isKey && childKids == 1) {
				nodes++
			}
			walk(i, j, depth+1, kids)
			i = j
		}
	}
	walk(0, len(keys), 0, 1)
	return nodes
}
