package keycmd

// OBJECT ENCODING | FREQ | IDLETIME | REFCOUNT | HELP.

import (
	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/netio/command"
)

func registerKeysObject() {
	sub := func(since, summary string, h func(*engine.Call)) *command.Spec {
		return engine.KeySpec(engine.Handle(&command.Spec{Arity: 3, Flags: []string{"readonly"}, First: 2, Last: 2, Step: 1,
			Categories: []string{"keyspace", "read", "slow"}, Tips: []string{"nondeterministic_output"},
			Since: since, Summary: summary}, h))
	}
	command.Register(&command.Spec{Name: "object", Arity: -2, Categories: []string{"slow"}, Group: "generic",
		Since: "2.2.3", Summary: "A container for object introspection commands",
		Subcommands: map[string]*command.Spec{
			"encoding": sub("2.2.3", "Inspect the internal encoding of a Redis object", cmdObjectEncoding),
			"freq":     sub("4.0.0", "Get the logarithmic access frequency counter of a Redis object", cmdObjectFreq),
			"idletime": sub("2.2.3", "Get the time since a Redis object was last accessed", cmdObjectIdletime),
			"refcount": sub("2.2.3", "Get the number of references to the value of the key", cmdObjectRefcount),
			// Keyless: runs in shard 0 with no slot.
			"help": engine.KeySpec(engine.Handle(&command.Spec{Arity: 2, Flags: []string{"loading", "stale"}, Categories: []string{"keyspace", "slow"},
				Since: "6.2.0", Summary: "Show helpful text about the different subcommands"}, cmdObjectHelp)),
		}})
}

// objectLookup finds OBJECT's key or replies null. It leaves the key's
// access time and LFU counter alone, as Redis's LOOKUP_NOTOUCH.
func objectLookup(c *engine.Call) *keyspace.Entry {
	e := c.LookupNoTouch(c.Args[2])
	if e == nil {
		c.W.Null()
	}
	return e
}

func cmdObjectEncoding(c *engine.Call) {
	if e := objectLookup(c); e != nil {
		c.W.BulkString(engine.EncodingOf(e))
	}
}

func cmdObjectRefcount(c *engine.Call) {
	e := objectLookup(c)
	if e == nil {
		return
	}
	// Redis shares the integer objects 0..9999 (their refcount reads
	// INT_MAX), except under maxmemory with an LRU or LFU policy, where
	// each key needs its own access metadata.
	g := c.S.Group()
	if p := g.Policy(); g.MaxMemory.Load() > 0 && (p.LRU() || p.LFU()) {
		c.W.Int(1)
		return
	}
	if e.Kind == keyspace.KindString && engine.IsIntEncoded(e.Str) {
		if n, _ := engine.ParseInt(e.Str); n >= 0 && n < 10000 {
			c.W.Int(2147483647)
			return
		}
	}
	c.W.Int(1)
}

func cmdObjectFreq(c *engine.Call) {
	e := objectLookup(c)
	if e == nil {
		return
	}
	if !c.S.Group().Policy().LFU() {
		c.W.Error("ERR An LFU maxmemory policy is not selected, access frequency not tracked. " +
			"Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
		return
	}
	c.W.Int(int64(c.S.Group().LFUCounter(e, c.Now)))
}

func cmdObjectIdletime(c *engine.Call) {
	e := objectLookup(c)
	if e == nil {
		return
	}
	if c.S.Group().Policy().LFU() {
		c.W.Error("ERR An LFU maxmemory policy is selected, idle time not tracked. " +
			"Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
		return
	}
	c.W.Int(engine.IdleMS(e, c.Now) / 1000)
}

var objectHelp = []string{
	"OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"ENCODING <key>",
	"    Return the kind of internal representation used in order to store the value",
	"    associated with a <key>.",
	"FREQ <key>",
	"    Return the access frequency index of the <key>. The returned integer is",
	"    proportional to the logarithm of the recent access frequency of the key.",
	"IDLETIME <key>",
	"    Return the idle time of the <key>, that is the approximated number of",
	"    seconds elapsed since the last access to the key.",
	"REFCOUNT <key>",
	"    Return the number of references of the value associated with the specified",
	"    <key>.",
	"HELP",
	"    Prints this help.",
}

func cmdObjectHelp(c *engine.Call) {
	c.W.Array(len(objectHelp))
	for _, l := range objectHelp {
		c.W.Simple(l)
	}
}
