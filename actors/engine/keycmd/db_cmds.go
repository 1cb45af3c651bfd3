package keycmd

import (
	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/resp"
)

// MOVE and SWAPDB: the commands that work across databases (SELECT is the
// connection's, COPY ... DB is in keys.go).

func registerDB() {
	command.Register(
		engine.KeySpec(engine.Handle(&command.Spec{Name: "move", Arity: 3, Flags: []string{"write", "fast"}, First: 1,
			Last: 1, Step: 1, Categories: []string{"keyspace", "write", "fast"}, Since: "1.0.0",
			Summary: "Move a key to another database"}, cmdMove)),
		engine.Handle(&command.Spec{Name: "swapdb", Arity: 3, Flags: []string{"write", "fast"},
			Categories: []string{"keyspace", "write", "fast", "dangerous"}, Group: "server", Since: "4.0.0",
			Summary: "Swaps two Redis databases", Exec: command.Fanout, Merge: engine.Merge(mergeSwapDB)},
			cmdSwapDBPart),
	)
}

const (
	errSameObject = "ERR source and destination objects are the same"
	errDBRange    = "ERR DB index is out of range"
	errIntRange   = "ERR value is out of range, value must between -2147483648 and 2147483647"
)

// dbIndex parses a database index as Redis's getIntFromObjectOrReply does:
// msg replaces both of its errors when it is not empty.
func dbIndex(a []byte, msg string) (int, string) {
	v, ok := engine.ParseInt(a)
	if !ok || v != int64(int32(v)) {
		switch {
		case msg != "":
			return 0, msg
		case !ok:
			return 0, engine.ErrNotInt
		}
		return 0, errIntRange
	}
	return int(v), ""
}

// cmdMove implements MOVE key db.
func cmdMove(c *engine.Call) {
	c.Unchanged() // a move that happens signals both databases itself
	if c.S.Group().ClusterMode() {
		c.W.Error("ERR MOVE is not allowed in cluster mode")
		return
	}
	db, msg := dbIndex(c.Args[2], "")
	if msg != "" {
		c.W.Error(msg)
		return
	}
	if db < 0 || db >= c.S.Group().Databases() {
		c.W.Error(errDBRange)
		return
	}
	if db == c.DB() {
		c.W.Error(errSameObject)
		return
	}
	key := c.Args[1]
	e := c.LookupWrite(key)
	if e == nil {
		c.W.Int(0)
		return
	}
	taken := false
	c.InDB(db, func() { taken = c.LookupWrite(key) != nil })
	if taken {
		c.W.Int(0)
		return
	}
	kind, str, obj, expire := e.Kind, e.Str, e.Obj, e.Expire
	c.Delete(key)
	c.Signal(key)
	c.InDB(db, func() {
		ne := c.Create(key, kind)
		ne.Str, ne.Obj = str, obj
		if expire != 0 {
			c.SetExpire(ne, expire)
		}
		c.Signal(key)
	})
	c.Notify(engine.NotifyGeneric, "move_from", key)
	c.InDB(db, func() { c.Notify(engine.NotifyGeneric, "move_to", key) })
	c.W.Int(1)
}

// swapArgs validates SWAPDB's indexes: the error, or the two databases.
func swapArgs(args [][]byte, databases int, cluster bool) (int, int, string) {
	if cluster {
		return 0, 0, "ERR SWAPDB is not allowed in cluster mode"
	}
	a, msg := dbIndex(args[1], "ERR invalid first DB index")
	if msg != "" {
		return 0, 0, msg
	}
	b, msg := dbIndex(args[2], "ERR invalid second DB index")
	if msg != "" {
		return 0, 0, msg
	}
	if a < 0 || a >= databases || b < 0 || b >= databases {
		return 0, 0, errDBRange
	}
	return a, b, ""
}

// cmdSwapDBPart swaps this shard's part of the two databases; the merge
// answers. Clients blocked on keys of either database that now exist are
// woken, and WATCHers of both are flagged, as in Redis.
func cmdSwapDBPart(c *engine.Call) {
	g := c.S.Group()
	a, b, msg := swapArgs(c.Args, g.Databases(), g.ClusterMode())
	if msg != "" {
		c.Result(msg)
		return
	}
	if a != b {
		c.S.SwapDBs(a, b)
	}
	if c.Replicating() {
		c.PropagateStrings("SWAPDB", string(c.Args[1]), string(c.Args[2]))
	} else {
		c.NoPropagate()
	}
}

func mergeSwapDB(w *resp.Writer, _ [][]byte, parts []any) {
	for _, p := range parts {
		if msg, ok := p.(string); ok {
			w.Error(msg)
			return
		}
	}
	w.OK()
}
