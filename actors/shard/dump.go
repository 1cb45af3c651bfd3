package shard

// DUMP, RESTORE and RESTORE-ASKING. Payloads are Redis 7.0's RDB value
// serialization (actors/engine/rdb), so values move between slotd and Redis in
// both directions, and MIGRATE can use the same code. DUMP writes each
// value the way Redis would for the encoding it has here (listpack,
// intset, quicklist, ...); RESTORE reads every encoding Redis 7.0 reads and
// gives the value the encoding Redis would give it.

import (
	"math"
	"strconv"

	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/actors/engine/rdb"
	"github.com/slotd/slotd/actors/engine/types/hash"
	"github.com/slotd/slotd/actors/engine/types/set"
	"github.com/slotd/slotd/actors/engine/types/stream"
	"github.com/slotd/slotd/actors/engine/types/zset"
	"github.com/slotd/slotd/netio/command"
)

func init() {
	restore := func(name, group, since, summary string, flags ...string) *command.Spec {
		return keySpec(command.Spec{Name: name, Arity: -4, Flags: flags, First: 1, Last: 1, Step: 1,
			Categories: []string{"keyspace", "write", "slow", "dangerous"}, Group: group, Since: since,
			Summary: summary, Handler: Handler(cmdRestore)})
	}
	command.Register(
		keySpec(command.Spec{Name: "dump", Arity: 2, Flags: []string{"readonly"}, First: 1, Last: 1, Step: 1,
			Categories: []string{"keyspace", "read", "slow"}, Tips: []string{"nondeterministic_output"},
			Since: "2.6.0", Summary: "Return a serialized version of the value stored at the specified key.",
			Handler: Handler(cmdDump)}),
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

func cmdDump(c *Call) {
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

// Dump serializes e's value as a DUMP payload (for DUMP and MIGRATE). It
// reports false for kinds slotd cannot serialize.
func (c *Call) Dump(e *keyspace.Entry) ([]byte, bool) {
	g := c.S.group
	return dumpEntry(e, rdb.Options{Compress: g.RDBCompression.Load() != 0,
		ListFill: int(max(min(g.ListMaxListpackSize.Load(), math.MaxInt32), math.MinInt32))})
}

func dumpEntry(e *keyspace.Entry, opt rdb.Options) ([]byte, bool) {
	enc := rdb.NewEncoder(opt)
	switch e.Kind {
	case keyspace.KindString:
		enc.Type(rdb.TypeString)
		enc.Bytes(e.Str)
	case keyspace.KindList:
		l := listOf(e)
		enc.List(func(yield func(string) bool) {
			l.Each(false, func(_ int, v string) bool { return yield(v) })
		})
	case keyspace.KindHash:
		dumpHash(enc, hashOf(e))
	case keyspace.KindSet:
		s, ok := e.Obj.(*set.Set)
		if !ok {
			return nil, false
		}
		dumpSet(enc, s)
	case keyspace.KindZSet:
		z, ok := e.Obj.(*zset.ZSet)
		if !ok {
			return nil, false
		}
		dumpZSet(enc, z)
	case keyspace.KindStream:
		st, ok := e.Obj.(*stream.Stream)
		if !ok {
			return nil, false
		}
		dumpStream(enc, st)
	default:
		return nil, false
	}
	return enc.Payload(), true
}

// dumpHash writes a compact hash as a listpack of field/value pairs in its
// order, a table as a count and the pairs.
func dumpHash(enc *rdb.Encoder, h *hash.Hash) {
	if h.Compact() {
		enc.Type(rdb.TypeHashListpack)
		lp := rdb.NewListpack()
		h.Each(func(f, v string) bool {
			lp.Append(f)
			lp.Append(v)
			return true
		})
		enc.Bytes(lp.Finish())
		return
	}
	enc.Type(rdb.TypeHash)
	enc.Len(uint64(h.Len()))
	h.Each(func(f, v string) bool {
		enc.String(f)
		enc.String(v)
		return true
	})
}

// dumpSet writes an intset blob, or the members of a table.
func dumpSet(enc *rdb.Encoder, s *set.Set) {
	if s.IsIntset() {
		ints := make([]int64, 0, s.Len())
		s.ForEach(func(m string) bool {
			v, _ := strconv.ParseInt(m, 10, 64)
			ints = append(ints, v)
			return true
		})
		enc.Type(rdb.TypeSetIntset)
		enc.Bytes(rdb.AppendIntsetWidth(nil, ints, s.IntWidth()))
		return
	}
	enc.Type(rdb.TypeSet)
	enc.Len(uint64(s.Len()))
	s.ForEach(func(m string) bool {
		enc.String(m)
		return true
	})
}

// dumpZSet writes a compact sorted set as a listpack of member/score pairs
// in ascending order, scores as the text a listpack holds; a skiplist as a
// count and the members from the highest down with binary scores (Redis's
// order, which makes loading cheap).
func dumpZSet(enc *rdb.Encoder, z *zset.ZSet) {
	if z.Compact {
		enc.Type(rdb.TypeZSetListpack)
		lp := rdb.NewListpack()
		var buf []byte
		for n := z.First(); n != nil; n = n.Next() {
			lp.Append(n.Member())
			buf = appendD2S(buf[:0], n.Score())
			lp.Append(string(buf))
		}
		enc.Bytes(lp.Finish())
		return
	}
	enc.Type(rdb.TypeZSet2)
	enc.Len(uint64(z.Len()))
	for n := z.Last(); n != nil; n = n.Prev() {
		enc.String(n.Member())
		enc.Double(n.Score())
	}
}

func cmdRestore(c *Call) {
	args := c.Args
	replace, absTTL := false, false
	idle, freq := int64(-1), int64(-1)
	for j := 4; j < len(args); j++ {
		a, more := cstr(args[j]), len(args)-j-1
		switch {
		case eqFold(a, "replace"):
			replace = true
		case eqFold(a, "absttl"):
			absTTL = true
		case eqFold(a, "idletime") && more >= 1 && freq == -1:
			v, ok := c.intArg(args[j+1])
			if !ok {
				return
			}
			if v < 0 {
				c.W.Error("ERR Invalid IDLETIME value, must be >= 0")
				return
			}
			idle = v
			j++
		case eqFold(a, "freq") && more >= 1 && idle == -1:
			v, ok := c.intArg(args[j+1])
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
			c.W.Error(ErrSyntax)
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
	ttl, ok := c.intArg(args[2])
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
	v, err := c.restoreValue(payload)
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
				c.Propagate(cmdDEL, key)
			}
		}
		c.W.OK()
		return
	}
	e := c.Create(key, v.kind)
	e.Str, e.Obj = v.str, v.obj
	if ttl != 0 {
		c.SetExpire(e, ttl)
	}
	c.propagateRestore(key, ttl, payload, replace)
	c.W.OK()
}

// propagateRestore streams RESTORE with an absolute TTL, so replicas do
// not depend on when they apply it.
func (c *Call) propagateRestore(key []byte, at int64, payload []byte, replace bool) {
	if !c.S.streaming() {
		return
	}
	args := [][]byte{cmdRESTORE, key, strconv.AppendInt(nil, at, 10), payload, argABSTTL}
	if replace {
		args = append(args, argREPLACE)
	}
	c.Propagate(args...)
}
