package hllcmd

import (
	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/actors/engine/types/hll"
	"github.com/slotd/slotd/netio/command"
)

// HyperLogLog commands: PFADD, PFCOUNT, PFMERGE, PFDEBUG, PFSELFTEST. A
// sketch is a string value in Redis's exact layout (package hll), so GET,
// SET and DUMP/RESTORE move sketches between slotd and Redis unchanged.

func registerHll() {
	pfcount := hllSpec("pfcount", -2,
		"Return the approximated cardinality of the set(s) observed by the HyperLogLog at key(s).",
		cmdPFCount, "readonly")
	pfcount.Last = -1
	pfmerge := hllSpec("pfmerge", -2, "Merge N different HyperLogLogs into a single one.", cmdPFMerge,
		"write", "denyoom")
	pfmerge.Last = -1
	pfdebug := hllSpec("pfdebug", 3, "Internal commands for debugging HyperLogLog values", cmdPFDebug,
		"write", "denyoom", "admin")
	pfdebug.First, pfdebug.Last = 2, 2
	// PFSELFTEST has no key: it runs in shard 0 (Slot -1), like Redis
	// running it on its main thread.
	pfselftest := hllSpec("pfselftest", 1, "An internal command for testing HyperLogLog values",
		cmdPFSelfTest, "admin")
	pfselftest.First, pfselftest.Last, pfselftest.Step = 0, 0, 0
	command.Register(
		hllSpec("pfadd", -2, "Adds the specified elements to the specified HyperLogLog.", cmdPFAdd,
			"write", "denyoom", "fast"),
		pfcount, pfmerge, pfdebug, pfselftest,
	)
}

func hllSpec(name string, arity int, summary string, h engine.Handler, flags ...string) *command.Spec {
	return engine.Handle(&command.Spec{Name: name, Arity: arity, Flags: flags, First: 1, Last: 1, Step: 1,
		Group: "hyperloglog", Since: "2.8.9", Summary: summary, Exec: command.Shard, Categories: engine.TypeCategories(flags, "hyperloglog")}, h)
}

const (
	errNotHLL     = "WRONGTYPE Key is not a valid HyperLogLog string value."
	errInvalidHLL = "INVALIDOBJ Corrupted HLL object detected"
)

// hllSparseMax is hll-sparse-max-bytes.
func hllSparseMax(c *engine.Call) int64 { return c.S.Group().HLLSparseMaxBytes.Load() }

// isHLL checks that e holds a sketch, replying with the right WRONGTYPE
// error if not.
func isHLL(c *engine.Call, e *keyspace.Entry) bool {
	if e.Kind != keyspace.KindString {
		c.W.Error(engine.ErrWrongType)
		return false
	}
	if !hll.Valid(e.Str) {
		c.W.Error(errNotHLL)
		return false
	}
	return true
}

// cmdPFAdd implements PFADD key [element ...]: 1 if the key was created or
// a register changed, else 0.
func cmdPFAdd(c *engine.Call) {
	key := c.Args[1]
	e := c.LookupWrite(key)
	updated := false
	if e == nil {
		e = c.Create(key, keyspace.KindString)
		e.Str = hll.New()
		updated = true
	} else if !isHLL(c, e) {
		return
	}
	limit := hllSparseMax(c)
	for _, ele := range c.Args[2:] {
		var r int
		e.Str, r = hll.Add(e.Str, ele, limit)
		switch r {
		case 1:
			updated = true
		case -1:
			c.W.Error(errInvalidHLL)
			return
		}
	}
	if !updated {
		c.Unchanged()
		c.W.Int(0)
		return
	}
	hll.InvalidateCache(e.Str)
	c.Notify(engine.NotifyString, "pfadd", key)
	c.W.Int(1)
}

// cmdPFCount implements PFCOUNT key [key ...]. One key answers from (and
// refreshes) the cached cardinality stored in the value, which counts as a
// modification as in Redis; several keys count their union without
// touching them.
func cmdPFCount(c *engine.Call) {
	if len(c.Args) > 2 {
		var regs [hll.Registers]uint8
		if _, ok := mergeHLLs(c, &regs, c.Args[1:]); !ok {
			return
		}
		c.W.Int(int64(hll.CountRegisters(&regs)))
		return
	}
	key := c.Args[1]
	e := c.Lookup(key)
	if e == nil {
		c.W.Int(0)
		return
	}
	if !isHLL(c, e) {
		return
	}
	card, ok := hll.CachedCard(e.Str)
	if !ok {
		var err error
		if card, err = hll.Count(e.Str); err != nil {
			c.W.Error(errInvalidHLL)
			return
		}
		hll.SetCachedCard(e.Str, card)
		c.Signal(key)
	}
	c.W.Int(int64(card))
}

// mergeHLLs folds the HyperLogLogs of keys (missing ones are empty) into
// regs, register-wise maximum, and reports whether any was dense; false
// after replying WRONGTYPE or the invalid-HLL error.
func mergeHLLs(c *engine.Call, regs *[hll.Registers]uint8, keys [][]byte) (dense, ok bool) {
	for _, k := range keys {
		e := c.Lookup(k)
		if e == nil {
			continue
		}
		if !isHLL(c, e) {
			return false, false
		}
		if hll.Encoding(e.Str) == hll.Dense {
			dense = true
		}
		if hll.Merge(regs, e.Str) != nil {
			c.W.Error(errInvalidHLL)
			return false, false
		}
	}
	return dense, true
}

// cmdPFMerge implements PFMERGE destkey [sourcekey ...]: destkey (itself
// part of the union) receives the register-wise maximum. It becomes dense
// if any input is dense; otherwise registers are set one by one so the
// sparse bytes come out as Redis builds them.
func cmdPFMerge(c *engine.Call) {
	var regs [hll.Registers]uint8
	dense, ok := mergeHLLs(c, &regs, c.Args[1:])
	if !ok {
		return
	}
	c.Unchanged() // sources are keys too: signal only destkey
	dest := c.Args[1]
	e := c.LookupWrite(dest)
	if e == nil {
		e = c.Create(dest, keyspace.KindString)
		e.Str = hll.New()
	}
	if dense {
		d, err := hll.ToDense(e.Str)
		if err != nil {
			c.W.Error(errInvalidHLL)
			return
		}
		e.Str = d
	}
	limit := hllSparseMax(c)
	for i, v := range regs {
		if v != 0 {
			e.Str, _ = hll.Set(e.Str, i, v, limit)
		}
	}
	hll.InvalidateCache(e.Str)
	c.Signal(dest)
	c.Notify(engine.NotifyString, "pfadd", dest)
	c.W.OK()
}

// cmdPFDebug implements PFDEBUG GETREG|DECODE|ENCODING|TODENSE key. Like
// Redis it looks the key up before the subcommand, and its conversions do
// not count as modifications.
func cmdPFDebug(c *engine.Call) {
	c.Unchanged()
	sub := engine.Cstr(c.Args[1])
	e := c.LookupWrite(c.Args[2])
	if e == nil {
		c.W.Error("ERR The specified key does not exist")
		return
	}
	if !isHLL(c, e) {
		return
	}
	switch {
	case engine.EqFold(sub, "getreg"):
		if hll.Encoding(e.Str) == hll.Sparse {
			d, err := hll.ToDense(e.Str)
			if err != nil {
				c.W.Error(errInvalidHLL)
				return
			}
			e.Str = d
		}
		regs := hll.DenseRegisters(e.Str)
		c.W.Array(len(regs))
		for _, r := range regs {
			c.W.Int(int64(r))
		}
	case engine.EqFold(sub, "decode"):
		if hll.Encoding(e.Str) != hll.Sparse {
			c.W.Error("ERR HLL encoding is not sparse")
			return
		}
		c.W.BulkString(hll.Decode(e.Str))
	case engine.EqFold(sub, "encoding"):
		if hll.Encoding(e.Str) == hll.Sparse {
			c.W.Simple("sparse")
		} else {
			c.W.Simple("dense")
		}
	case engine.EqFold(sub, "todense"):
		if hll.Encoding(e.Str) != hll.Sparse {
			c.W.Int(0)
			return
		}
		d, err := hll.ToDense(e.Str)
		if err != nil {
			c.W.Error(errInvalidHLL)
			return
		}
		e.Str = d
		c.W.Int(1)
	default:
		c.W.Error("ERR Unknown PFDEBUG subcommand '" + string(sub) + "'")
	}
}

// cmdPFSelfTest implements PFSELFTEST. It is CPU-bound for about half a
// second (ten million additions), blocking shard 0 as it blocks Redis.
func cmdPFSelfTest(c *engine.Call) {
	if msg := hll.SelfTest(c.S.Rand(), hllSparseMax(c)); msg != "" {
		c.W.Error(msg)
		return
	}
	c.W.OK()
}
