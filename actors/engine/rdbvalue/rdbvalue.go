// Package rdbvalue owns the conversion between the data types
// (actors/engine/types/*) and Redis 7.0's RDB value serialization
// (actors/engine/rdb) that DUMP, RESTORE, MIGRATE and snapshots share: each
// value is written the way Redis writes the encoding it has here, and a
// decoded value gets the encoding Redis would give it (rdbLoadObject's
// rules), since the encoding shows through OBJECT ENCODING and reply
// order.
package rdbvalue

import (
	"errors"
	"math"
	"strconv"

	"github.com/slotd/slotd/actors/engine/rdb"
	"github.com/slotd/slotd/actors/engine/types/cnum"
	"github.com/slotd/slotd/actors/engine/types/hash"
	"github.com/slotd/slotd/actors/engine/types/set"
	"github.com/slotd/slotd/actors/engine/types/stream"
	"github.com/slotd/slotd/actors/engine/types/zset"
)

// DumpHash writes a compact hash as a listpack of field/value pairs in its
// order, a table as a count and the pairs.
func DumpHash(enc *rdb.Encoder, h *hash.Hash) {
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

// DumpSet writes an intset blob, or the members of a table.
func DumpSet(enc *rdb.Encoder, s *set.Set) {
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

// DumpZSet writes a compact sorted set as a listpack of member/score pairs
// in ascending order, scores as the text a listpack holds; a skiplist as a
// count and the members from the highest down with binary scores (Redis's
// order, which makes loading cheap).
func DumpZSet(enc *rdb.Encoder, z *zset.ZSet) {
	if z.Compact {
		enc.Type(rdb.TypeZSetListpack)
		lp := rdb.NewListpack()
		var buf []byte
		for n := z.First(); n != nil; n = n.Next() {
			lp.Append(n.Member())
			buf = cnum.AppendD2S(buf[:0], n.Score())
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

// ErrDuplicate: a set, hash or sorted set payload names a member twice
// (Redis refuses these too).
var ErrDuplicate = errors.New("restore: duplicate member")

// BuildSet: an intset stays one unless it holds more than
// set-max-intset-entries; a member list becomes an intset when it is short
// enough and all integers, else a table.
func BuildSet(o *rdb.Object, maxIntset int) (*set.Set, error) {
	if o.Ints != nil {
		s := set.NewIntset()
		var buf [20]byte
		for _, v := range o.Ints {
			s.Add(strconv.AppendInt(buf[:0], v, 10), maxIntset)
		}
		if s.IsIntset() {
			s.WidenInts(o.IntsetWidth)
		}
		return s, nil
	}
	var s *set.Set
	if len(o.Elems) > maxIntset {
		s = set.NewHashtable(len(o.Elems))
	} else {
		s = set.NewIntset()
	}
	for _, m := range o.Elems {
		if !s.AddString(m, maxIntset) {
			return nil, ErrDuplicate
		}
	}
	return s, nil
}

// BuildHash fills h (empty) from o: a listpack or ziplist stays compact unless it has more than
// hash-max-listpack-entries fields (long values do not matter there); a
// zipmap or a field list converts on either limit, as when the fields are
// added one by one.
func BuildHash(o *rdb.Object, lim hash.Limits, h *hash.Hash) error {
	if o.Packed() && o.Type != rdb.TypeHashZipmap {
		lim.MaxValue = math.MaxInt64
	}
	for i := 0; i+1 < len(o.Elems); i += 2 {
		if !h.SetString([]byte(o.Elems[i]), o.Elems[i+1], lim) {
			return ErrDuplicate
		}
	}
	return nil
}

// BuildZSet: a listpack or ziplist stays compact unless it has more than
// zset-max-listpack-entries members; a member list becomes compact when
// both limits allow it.
func BuildZSet(o *rdb.Object, maxEntries, maxValue int64) (*zset.ZSet, error) {
	n := len(o.Elems)
	z := zset.New(o.Packed() && int64(n) <= maxEntries)
	maxLen, total := 0, 0
	for i, m := range o.Elems {
		if z.Get([]byte(m)) != nil {
			return nil, ErrDuplicate
		}
		z.AddString(m, o.Scores[i])
		maxLen = max(maxLen, len(m))
		total += len(m)
	}
	if !o.Packed() && int64(n) <= maxEntries && int64(maxLen) <= maxValue && total <= 1<<30 {
		z.MakeCompact()
	}
	return z, nil
}

func rdbID(id stream.ID) rdb.StreamID   { return rdb.StreamID{Ms: id.Ms, Seq: id.Seq} }
func fromRDB(id rdb.StreamID) stream.ID { return stream.ID{Ms: id.Ms, Seq: id.Seq} }

// DumpStream writes s in Redis 7.0's stream format.
func DumpStream(enc *rdb.Encoder, s *stream.Stream) {
	m := s.Meta()
	v := &rdb.Stream{Length: m.Length, LastID: rdbID(m.LastID), FirstID: rdbID(m.FirstID),
		MaxDeletedID: rdbID(m.MaxDeletedID), EntriesAdded: m.EntriesAdded}
	s.EachNode(func(master stream.ID, lp []byte) {
		v.Nodes = append(v.Nodes, rdb.StreamNode{Key: master.Key(), LP: lp})
	})
	for _, g := range s.Groups() {
		rg := rdb.StreamGroup{Name: g.Name, LastID: rdbID(g.LastID), EntriesRead: g.EntriesRead}
		g.PendingRange(stream.MinID, func(id stream.ID, p *stream.Pending) bool {
			rg.Pending = append(rg.Pending, rdb.StreamPending{ID: id.Key(), DeliveryTime: p.DeliveryTime,
				DeliveryCount: p.DeliveryCount})
			return true
		})
		for _, c := range g.Consumers() {
			rc := rdb.StreamConsumer{Name: c.Name, SeenTime: c.SeenTime}
			c.PendingRange(stream.MinID, func(id stream.ID, _ *stream.Pending) bool {
				rc.Pending = append(rc.Pending, id.Key())
				return true
			})
			rg.Consumers = append(rg.Consumers, rc)
		}
		v.Groups = append(v.Groups, rg)
	}
	enc.Stream(v)
}

// BuildStream makes a stream from a decoded value, refusing what Redis
// refuses (corrupt nodes, duplicate groups, consumers or pending entries,
// pending entries without an owner).
func BuildStream(o *rdb.Object) (*stream.Stream, error) {
	v := o.Stream
	nodes := make([]stream.NodeBlob, len(v.Nodes))
	for i, n := range v.Nodes {
		nodes[i] = stream.NodeBlob{Master: stream.IDFromKey(n.Key[:]), LP: n.LP}
	}
	s, err := stream.Load(nodes, stream.Meta{Length: v.Length, LastID: fromRDB(v.LastID), FirstID: fromRDB(v.FirstID),
		MaxDeletedID: fromRDB(v.MaxDeletedID), EntriesAdded: v.EntriesAdded, V1: v.V1})
	if err != nil {
		return nil, err
	}
	for _, rg := range v.Groups {
		read := rg.EntriesRead
		if v.V1 {
			read = s.EstimateDistance(fromRDB(rg.LastID))
		}
		g := s.CreateGroup([]byte(rg.Name), fromRDB(rg.LastID), read)
		if g == nil {
			return nil, stream.ErrCorrupt
		}
		for _, p := range rg.Pending {
			if !g.LoadPending(stream.IDFromKey(p.ID[:]), p.DeliveryTime, p.DeliveryCount) {
				return nil, stream.ErrCorrupt
			}
		}
		for _, rc := range rg.Consumers {
			c := g.CreateConsumer([]byte(rc.Name), rc.SeenTime)
			if c == nil {
				return nil, stream.ErrCorrupt
			}
			for _, id := range rc.Pending {
				if !g.LoadConsumerPending(c, stream.IDFromKey(id[:])) {
					return nil, stream.ErrCorrupt
				}
			}
		}
		if g.Orphans() {
			return nil, stream.ErrCorrupt
		}
	}
	return s, nil
}
