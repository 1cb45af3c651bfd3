package setcmd

// Set commands, part 3: SPOP, SRANDMEMBER and SSCAN.

import (
	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/types/set"
	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/slots"
)

func registerSetRandom() {
	command.Register(
		engine.SzTips(setSpec("spop", -2, "Remove and return one or multiple random members from a set", "1.0.0",
			cmdSPop, "write", "fast"), "nondeterministic_output"),
		engine.SzTips(setSpec("srandmember", -2, "Get one or multiple random members from a set", "1.0.0",
			cmdSRandMember, "readonly"), "nondeterministic_output"),
		engine.SzTips(setSpec("sscan", -3, "Incrementally iterate Set elements", "2.8.0", cmdSScan, "readonly"),
			"nondeterministic_output"),
	)
}

// cmdSPop implements SPOP key [count].
func cmdSPop(c *engine.Call) {
	if len(c.Args) > 3 {
		c.W.Error(engine.ErrSyntax)
		return
	}
	key := c.Args[1]
	if len(c.Args) == 3 {
		n, ok := engine.ParseInt(c.Args[2])
		if !ok || n < 0 {
			c.W.Error(engine.ErrMustBePositive)
			return
		}
		spopCount(c, key, n)
		return
	}
	e, s, ok := setWrite(c, key)
	if !ok {
		return
	}
	if e == nil {
		c.Unchanged()
		c.W.Null()
		return
	}
	m := s.Random(c.S.Rand())
	s.Remove([]byte(m))
	c.W.BulkString(m)
	c.Notify(engine.NotifySet, "spop", key)
	if s.Len() == 0 {
		c.Delete(key)
		c.Notify(engine.NotifyGeneric, "del", key)
	}
	if c.Replicating() {
		c.Propagate(engine.CmdSREM, key, []byte(m)) // the pick is random: replicas get the outcome
	}
}

// spopCount pops up to n members. Like Redis it returns the whole set when
// n covers it, pops one by one when few members are taken, and otherwise
// keeps a random remainder in a new set and returns the rest.
func spopCount(c *engine.Call, key []byte, n int64) {
	e, s, ok := setWrite(c, key)
	if !ok {
		return
	}
	if e == nil || n == 0 {
		c.Unchanged()
		c.W.Set(0)
		return
	}
	size := int64(s.Len())
	max := c.MaxIntset()
	if n >= size {
		// Redis replies with SUNION of the key: a rebuilt set, so a small
		// integer set comes out sorted.
		all := set.NewIntset()
		s.ForEach(func(m string) bool {
			all.AddString(m, max)
			return true
		})
		c.W.Set(all.Len())
		all.ForEach(func(m string) bool {
			c.W.BulkString(m)
			return true
		})
		c.Delete(key)
		if c.Replicating() {
			c.Propagate(engine.CmdDEL, key)
		}
		c.Notify(engine.NotifySet, "spop", key)
		c.Notify(engine.NotifyGeneric, "del", key)
		return
	}
	c.W.Set(int(n))
	c.Notify(engine.NotifySet, "spop", key)
	remaining := size - n
	// Replicas get SREM of the popped members.
	var popped [][]byte
	if c.S.Streaming() {
		popped = append(make([][]byte, 0, n+2), engine.CmdSREM, key)
	}
	if remaining*5 > n {
		for i := int64(0); i < n; i++ {
			m := s.Random(c.S.Rand())
			s.Remove([]byte(m))
			c.W.BulkString(m)
			if popped != nil {
				popped = append(popped, []byte(m))
			}
		}
		propagatePopped(c, popped)
		return
	}
	var kept *set.Set
	for i := int64(0); i < remaining; i++ {
		m := s.Random(c.S.Rand())
		if kept == nil {
			kept = set.NewFor([]byte(m))
		}
		kept.AddString(m, max)
		s.Remove([]byte(m))
	}
	s.ForEach(func(m string) bool {
		c.W.BulkString(m)
		if popped != nil {
			popped = append(popped, []byte(m))
		}
		return true
	})
	e.Obj = kept
	propagatePopped(c, popped)
}

// propagatePopped streams the SREM built by spopCount (nil when the
// streams are off).
func propagatePopped(c *engine.Call, srem [][]byte) {
	if srem == nil {
		c.NoPropagate()
		return
	}
	c.Propagate(srem...)
}

// cmdSRandMember implements SRANDMEMBER key [count]. A negative count
// allows repeats; a positive one returns distinct members.
func cmdSRandMember(c *engine.Call) {
	if len(c.Args) > 3 {
		c.W.Error(engine.ErrSyntax)
		return
	}
	key := c.Args[1]
	if len(c.Args) == 2 {
		s, ok := setRead(c, key)
		if !ok {
			return
		}
		if s == nil {
			c.W.Null()
			return
		}
		c.W.BulkString(s.Random(c.S.Rand()))
		return
	}
	n, ok := engine.ParseRandCount(c, c.Args[2])
	if !ok {
		return
	}
	s, ok := setRead(c, key)
	if !ok {
		return
	}
	if s == nil || n == 0 {
		c.W.Array(0)
		return
	}
	if n < 0 || n == 1 {
		if n, ok = c.RandRepeats(n); !ok {
			return
		}
		c.W.Array(int(n))
		for i := int64(0); i < n; i++ {
			c.W.BulkString(s.Random(c.S.Rand()))
		}
		return
	}
	if n >= int64(s.Len()) {
		c.W.Array(s.Len())
		s.ForEach(func(m string) bool {
			c.W.BulkString(m)
			return true
		})
		return
	}
	out := engine.RandomDistinct(c, s.Len(), int(n), func() string { return s.Random(c.S.Rand()) }, s.Members)
	c.W.Array(len(out))
	for _, m := range out {
		c.W.BulkString(m)
	}
}

// cmdSScan implements SSCAN key cursor [MATCH pattern] [COUNT count].
func cmdSScan(c *engine.Call) {
	cur, s, o, ok := engine.StartCollScan(c, func(k []byte) (*set.Set, bool) { return setRead(c, k) })
	if !ok {
		return
	}
	var ms []string
	cur = engine.ScanSteps(cur, o.Count, 1, func() int { return len(ms) }, func(cur uint64) uint64 {
		return s.Scan(cur, func(m string) { ms = append(ms, m) })
	})
	if o.Pattern != nil {
		kept := ms[:0]
		for _, m := range ms {
			if slots.MatchKey(o.Pattern, m, false) {
				kept = append(kept, m)
			}
		}
		ms = kept
	}
	c.WriteScanReply(cur, ms)
}
