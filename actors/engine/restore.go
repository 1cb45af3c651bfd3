package engine

// Building slotd values from decoded DUMP payloads, with the encoding Redis
// 7.0 would give each restored value (rdbLoadObject's rules), since the
// encoding shows through OBJECT ENCODING and reply order.

import (
	"errors"
	"math"
	"strconv"

	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/actors/engine/rdb"
	"github.com/slotd/slotd/actors/engine/types/hash"
	"github.com/slotd/slotd/actors/engine/types/set"
	"github.com/slotd/slotd/actors/engine/types/zset"
)

// errDuplicate: a set, hash or sorted set payload names a member twice
// (Redis refuses these too).
var errDuplicate = errors.New("restore: duplicate member")

// restored is a value ready to be stored in an entry.
type Restored struct {
	Kind keyspace.Kind
	Str  []byte
	Obj  any
}

// restoreValue decodes a payload (whose footer was checked) into a value.
func (c *Call) RestoreValue(payload []byte) (Restored, error) {
	o, err := rdb.Decode(payload)
	if err != nil {
		return Restored{}, err
	}
	return c.restoreObject(o)
}

// restoreObject builds a value from a decoded object (RESTORE, RDB load).
func (c *Call) restoreObject(o *rdb.Object) (Restored, error) {
	switch o.Kind {
	case rdb.KindString:
		return Restored{Kind: keyspace.KindString, Str: o.Str}, nil
	case rdb.KindList:
		lv := &ListValue{}
		for _, s := range o.Elems {
			lv.PushBack(s)
		}
		return Restored{Kind: keyspace.KindList, Obj: lv}, nil
	case rdb.KindSet:
		s, err := buildSet(o, c.MaxIntset())
		return Restored{Kind: keyspace.KindSet, Obj: s}, err
	case rdb.KindHash:
		h, err := buildHash(o, c.HashLimits())
		return Restored{Kind: keyspace.KindHash, Obj: h}, err
	case rdb.KindZSet:
		z, err := buildZSet(o, c.ZsetMaxEntries(), c.ZsetMaxValue())
		return Restored{Kind: keyspace.KindZSet, Obj: z}, err
	case rdb.KindStream:
		st, err := buildStream(o)
		return Restored{Kind: keyspace.KindStream, Obj: st}, err
	}
	return Restored{}, rdb.ErrUnsupported
}

// buildSet: an intset stays one unless it holds more than
// set-max-intset-entries; a member list becomes an intset when it is short
// enough and all integers, else a table.
func buildSet(o *rdb.Object, maxIntset int) (*set.Set, error) {
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
			return nil, errDuplicate
		}
	}
	return s, nil
}

// buildHash: a listpack or ziplist stays compact unless it has more than
// hash-max-listpack-entries fields (long values do not matter there); a
// zipmap or a field list converts on either limit, as when the fields are
// added one by one.
func buildHash(o *rdb.Object, lim hash.Limits) (*HashValue, error) {
	if o.Packed() && o.Type != rdb.TypeHashZipmap {
		lim.MaxValue = math.MaxInt64
	}
	hv := &HashValue{}
	for i := 0; i+1 < len(o.Elems); i += 2 {
		if !hv.SetString([]byte(o.Elems[i]), o.Elems[i+1], lim) {
			return nil, errDuplicate
		}
	}
	return hv, nil
}

// buildZSet: a listpack or ziplist stays compact unless it has more than
// zset-max-listpack-entries members; a member list becomes compact when
// both limits allow it.
func buildZSet(o *rdb.Object, maxEntries, maxValue int64) (*zset.ZSet, error) {
	n := len(o.Elems)
	z := zset.New(o.Packed() && int64(n) <= maxEntries)
	maxLen, total := 0, 0
	for i, m := range o.Elems {
		if z.Get([]byte(m)) != nil {
			return nil, errDuplicate
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
