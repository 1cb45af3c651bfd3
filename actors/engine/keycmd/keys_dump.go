package keycmd

import (
	"strconv"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/rdb"
	"github.com/slotd/slotd/netio/command"
)

func registerKeysDump() {
	restore := func(name, group, since, summary string, flags ...string) *command.Spec {
		return engine.KeySpec(engine.Handle(&command.Spec{Name: name, Arity: -4, Flags: flags, First: 1, Last: 1, Step: 1,
			Categories: []string{"keyspace", "write", "slow", "dangerous"}, Group: group, Since: since,
			Summary: summary}, cmdRestore))
	}
	command.Register(
		engine.KeySpec(engine.Handle(&command.Spec{Name: "dump", Arity: 2, Flags: []string{"readonly"}, First: 1, Last: 1, Step: 1,
			Categories: []string{"keyspace", "read", "slow"}, Tips: []string{"nondeterministic_output"},
			Since: "2.6.0", Summary: "Return a serialized version of the value stored at the specified key."}, cmdDump)),
		restore("restore", "generic", "2.6.0",
			"Create a key using the provided serialized value, previously obtained using DUMP.",
			"write", "denyoom"),
		// RESTORE-ASKING is what MIGRATE sends: the asking flag lets it into
		// an importing slot without a separate ASKING.
		restore("restore-asking", "server", "3.0.0", "An internal command for migrating keys in a cluster",
			"write", "denyoom", "asking"),
	)
}

const (
	errBusyKey    = "BUSYKEY Target key name already exists."
	errBadPayload = "ERR DUMP payload version or checksum are wrong"
	errBadFormat  = "ERR Bad data format"
)

func cmdDump(c *engine.Call) {
	e := c.Lookup(c.Args[1])
	if e == nil {
		c.W.Null()
		return
	}
	p, ok := c.Dump(e)
	if !ok {
		c.W.Error("ERR DUMP of a " + e.Kind.String() + " value is not supported")
		return
	}
	c.W.Bulk(p)
}

func cmdRestore(c *engine.Call) {
	args := c.Args
	replace, absTTL := false, false
	idle, freq := int64(-1), int64(-1)
	for j := 4; j < len(args); j++ {
		a, more := engine.Cstr(args[j]), len(args)-j-1
		switch {
		case engine.EqFold(a, "replace"):
			replace = true
		case engine.EqFold(a, "absttl"):
			absTTL = true
		case engine.EqFold(a, "idletime") && more >= 1 && freq == -1:
			v, ok := c.IntArg(args[j+1])
			if !ok {
				return
			}
			if v < 0 {
				c.W.Error("ERR Invalid IDLETIME value, must be >= 0")
				return
			}
			idle = v
			j++
		case engine.EqFold(a, "freq") && more >= 1 && idle == -1:
			v, ok := c.IntArg(args[j+1])
			if !ok {
				return
			}
			if v < 0 || v > 255 {
				c.W.Error("ERR Invalid FREQ value, must be >= 0 and <= 255")
				return
			}
			freq = v
			j++
		default:
			c.W.Error(engine.ErrSyntax)
			return
		}
	}
	// IDLETIME and FREQ are validated but have no effect: access times and
	// frequencies are not tracked.
	key := args[1]
	if !replace && c.LookupWrite(key) != nil {
		c.W.Error(errBusyKey)
		return
	}
	ttl, ok := c.IntArg(args[2])
	if !ok {
		return
	}
	if ttl < 0 {
		c.W.Error("ERR Invalid TTL value, must be >= 0")
		return
	}
	payload := args[3]
	if !rdb.Verify(payload) {
		c.W.Error(errBadPayload)
		return
	}
	v, err := c.RestoreValue(payload)
	if err != nil {
		c.W.Error(errBadFormat)
		return
	}
	deleted := replace && c.Delete(key)
	if ttl != 0 && !absTTL {
		ttl += c.Now // wraps on overflow, which reads as expired, as in Redis
	}
	if ttl != 0 && ttl <= c.Now && !c.FromMaster() {
		// Already expired: nothing is created, the old value (if replaced)
		// is gone, and the reply is still OK. (A replica applies what its
		// primary sends whatever its own clock says, as Redis's do.)
		if !deleted {
			c.Unchanged()
		} else {
			if c.Replicating() {
				c.Propagate(engine.CmdDEL, key)
			}
			c.Notify(engine.NotifyGeneric, "del", key)
		}
		c.W.OK()
		return
	}
	e := c.Create(key, v.Kind)
	e.Str, e.Obj = v.Str, v.Obj
	if ttl != 0 {
		c.SetExpire(e, ttl)
	}
	c.Notify(engine.NotifyGeneric, "restore", key)
	propagateRestore(c, key, ttl, payload, replace)
	c.W.OK()
}

// propagateRestore streams RESTORE with an absolute TTL, so replicas do
// not depend on when they apply it.
func propagateRestore(c *engine.Call, key []byte, at int64, payload []byte, replace bool) {
	if !c.S.Streaming() {
		return
	}
	args := [][]byte{engine.CmdRESTORE, key, strconv.AppendInt(nil, at, 10), payload, engine.ArgABSTTL}
	if replace {
		args = append(args, engine.ArgREPLACE)
	}
	c.Propagate(args...)
}
