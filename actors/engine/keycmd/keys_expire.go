package keycmd

// TTL commands: EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT (with NX|XX|GT|LT),
// TTL, PTTL, EXPIRETIME, PEXPIRETIME and PERSIST.

import (
	"math"
	"strconv"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/netio/command"
)

func registerKeysExpire() {
	set := func(name, since, summary string, h func(*engine.Call)) *command.Spec {
		return engine.KeySpec(engine.Handle(&command.Spec{Name: name, Arity: -3, Flags: []string{"write", "fast"}, First: 1, Last: 1, Step: 1,
			Categories: []string{"keyspace", "write", "fast"}, Since: since, Summary: summary}, h))
	}
	get := func(name, since, summary string, tips []string, h func(*engine.Call)) *command.Spec {
		return engine.KeySpec(engine.Handle(&command.Spec{Name: name, Arity: 2, Flags: []string{"readonly", "fast"}, First: 1, Last: 1, Step: 1,
			Categories: []string{"keyspace", "read", "fast"}, Tips: tips, Since: since, Summary: summary}, h))
	}
	nondet := []string{"nondeterministic_output"}
	command.Register(
		set("expire", "1.0.0", "Set a key's time to live in seconds", cmdExpire),
		set("pexpire", "2.6.0", "Set a key's time to live in milliseconds", cmdPExpire),
		set("expireat", "1.2.0", "Set the expiration for a key as a UNIX timestamp", cmdExpireAt),
		set("pexpireat", "2.6.0", "Set the expiration for a key as a UNIX timestamp specified in milliseconds", cmdPExpireAt),
		get("ttl", "1.0.0", "Get the time to live for a key in seconds", nondet, func(c *engine.Call) { keysTTL(c, false, false) }),
		get("pttl", "2.6.0", "Get the time to live for a key in milliseconds", nondet, func(c *engine.Call) { keysTTL(c, true, false) }),
		get("expiretime", "7.0.0", "Get the expiration Unix timestamp for a key", nil, func(c *engine.Call) { keysTTL(c, false, true) }),
		get("pexpiretime", "7.0.0", "Get the expiration Unix timestamp for a key in milliseconds", nil,
			func(c *engine.Call) { keysTTL(c, true, true) }),
		engine.KeySpec(engine.Handle(&command.Spec{Name: "persist", Arity: 2, Flags: []string{"write", "fast"}, First: 1, Last: 1, Step: 1,
			Categories: []string{"keyspace", "write", "fast"}, Since: "2.2.0",
			Summary: "Remove the expiration from a key"}, cmdPersist)),
	)
}

func cmdExpire(c *engine.Call)    { keysExpire(c, c.Now, true, "expire") }
func cmdPExpire(c *engine.Call)   { keysExpire(c, c.Now, false, "pexpire") }
func cmdExpireAt(c *engine.Call)  { keysExpire(c, 0, true, "expireat") }
func cmdPExpireAt(c *engine.Call) { keysExpire(c, 0, false, "pexpireat") }

const (
	expNX = 1 << iota
	expXX
	expGT
	expLT
)

// keysExpire is the common body of the EXPIRE family: base is added to the
// (unit-converted) argument. Checks happen in Redis's order: options, the
// number, overflow, the key, then the NX/XX/GT/LT condition. A time that is
// already past deletes the key and counts as success.
func keysExpire(c *engine.Call, base int64, seconds bool, name string) {
	flags := 0
	for _, a := range c.Args[3:] {
		switch {
		case engine.EqFold(a, "nx"):
			flags |= expNX
		case engine.EqFold(a, "xx"):
			flags |= expXX
		case engine.EqFold(a, "gt"):
			flags |= expGT
		case engine.EqFold(a, "lt"):
			flags |= expLT
		default:
			c.W.Error("ERR Unsupported option " + string(a))
			return
		}
	}
	if flags&expNX != 0 && flags&(expXX|expGT|expLT) != 0 {
		c.W.Error("ERR NX and XX, GT or LT options at the same time are not compatible")
		return
	}
	if flags&expGT != 0 && flags&expLT != 0 {
		c.W.Error("ERR GT and LT options at the same time are not compatible")
		return
	}
	when, ok := c.IntArg(c.Args[2])
	if !ok {
		return
	}
	badTime := "ERR invalid expire time in '" + name + "' command"
	if seconds {
		if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
			c.W.Error(badTime)
			return
		}
		when *= 1000
	}
	if when > math.MaxInt64-base {
		c.W.Error(badTime)
		return
	}
	when += base
	e := c.LookupWrite(c.Args[1])
	if e == nil {
		c.Unchanged()
		c.W.Int(0)
		return
	}
	cur := e.Expire // 0: no TTL, which GT/LT treat as infinite
	switch {
	case flags&expNX != 0 && cur != 0,
		flags&expXX != 0 && cur == 0,
		flags&expGT != 0 && (cur == 0 || when <= cur),
		flags&expLT != 0 && cur != 0 && when >= cur:
		c.Unchanged()
		c.W.Int(0)
		return
	}
	// Replicas get the outcome: the absolute time, or the deletion.
	if when <= c.Now {
		c.Delete(c.Args[1])
		if c.Replicating() {
			c.Propagate(engine.CmdDEL, c.Args[1])
		}
		c.Notify(engine.NotifyGeneric, "del", c.Args[1])
	} else {
		c.SetExpire(e, when)
		c.Notify(engine.NotifyGeneric, "expire", c.Args[1])
		if c.Replicating() {
			c.Propagate(engine.CmdPEXPIREAT, c.Args[1], strconv.AppendInt(nil, when, 10))
		}
	}
	c.W.Int(1)
}

// keysTTL implements TTL, PTTL (relative) and EXPIRETIME, PEXPIRETIME
// (absolute): -2 for a missing key, -1 for a key without TTL; seconds are
// rounded to the nearest one.
func keysTTL(c *engine.Call, ms, abs bool) {
	e := c.Lookup(c.Args[1])
	switch {
	case e == nil:
		c.W.Int(-2)
		return
	case e.Expire == 0:
		c.W.Int(-1)
		return
	}
	t := e.Expire
	if !abs {
		t -= c.Now
	}
	t = max(t, 0)
	if !ms {
		t = int64((uint64(t) + 500) / 1000) // unsigned: no overflow near MaxInt64
	}
	c.W.Int(t)
}

func cmdPersist(c *engine.Call) {
	e := c.LookupWrite(c.Args[1])
	if e == nil || e.Expire == 0 {
		c.Unchanged()
		c.W.Int(0)
		return
	}
	c.SetExpire(e, 0)
	c.Notify(engine.NotifyGeneric, "persist", c.Args[1])
	c.W.Int(1)
}
