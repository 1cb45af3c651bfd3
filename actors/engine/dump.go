package engine

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
		dumpHash(enc, HashOf(e))
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
			buf = AppendD2S(buf[:0], n.Score())
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
