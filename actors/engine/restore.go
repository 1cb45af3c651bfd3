package engine

// Building slotd values from decoded DUMP payloads (RESTORE, RDB load):
// actors/engine/rdbvalue gives each the encoding Redis 7.0 would give it,
// under this node's encoding limits.

import (
	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/actors/engine/rdb"
	"github.com/slotd/slotd/actors/engine/rdbvalue"
)

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
		s, err := rdbvalue.BuildSet(o, c.MaxIntset())
		return Restored{Kind: keyspace.KindSet, Obj: s}, err
	case rdb.KindHash:
		hv := &HashValue{}
		err := rdbvalue.BuildHash(o, c.HashLimits(), &hv.Hash)
		if err != nil {
			hv = nil
		}
		return Restored{Kind: keyspace.KindHash, Obj: hv}, err
	case rdb.KindZSet:
		z, err := rdbvalue.BuildZSet(o, c.ZsetMaxEntries(), c.ZsetMaxValue())
		return Restored{Kind: keyspace.KindZSet, Obj: z}, err
	case rdb.KindStream:
		st, err := rdbvalue.BuildStream(o)
		return Restored{Kind: keyspace.KindStream, Obj: st}, err
	}
	return Restored{}, rdb.ErrUnsupported
}
