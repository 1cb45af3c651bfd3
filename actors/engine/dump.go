package engine

// DUMP payloads (DUMP, MIGRATE, snapshots). Payloads are Redis 7.0's RDB
// value serialization (actors/engine/rdb), so values move between slotd and
// Redis in both directions. DUMP writes each value the way Redis would for
// the encoding it has here (listpack, intset, quicklist, ...: the per-type
// writers are in actors/engine/rdbvalue); RESTORE reads every encoding
// Redis 7.0 reads and gives the value the encoding Redis would give it
// (restore.go).

import (
	"math"

	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/actors/engine/rdb"
	"github.com/slotd/slotd/actors/engine/rdbvalue"
	"github.com/slotd/slotd/actors/engine/types/set"
	"github.com/slotd/slotd/actors/engine/types/stream"
	"github.com/slotd/slotd/actors/engine/types/zset"
)

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
		l := ListOf(e)
		enc.List(func(yield func(string) bool) {
			l.Each(false, func(_ int, v string) bool { return yield(v) })
		})
	case keyspace.KindHash:
		rdbvalue.DumpHash(enc, HashOf(e))
	case keyspace.KindSet:
		s, ok := e.Obj.(*set.Set)
		if !ok {
			return nil, false
		}
		rdbvalue.DumpSet(enc, s)
	case keyspace.KindZSet:
		z, ok := e.Obj.(*zset.ZSet)
		if !ok {
			return nil, false
		}
		rdbvalue.DumpZSet(enc, z)
	case keyspace.KindStream:
		st, ok := e.Obj.(*stream.Stream)
		if !ok {
			return nil, false
		}
		rdbvalue.DumpStream(enc, st)
	default:
		return nil, false
	}
	return enc.Payload(), true
}
