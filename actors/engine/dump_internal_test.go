package engine

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/actors/engine/rdb"
	"github.com/slotd/slotd/actors/engine/rdb/rdbtest"
	"github.com/slotd/slotd/actors/engine/rdbvalue"
	"github.com/slotd/slotd/actors/engine/types/hash"
)

// restoreSeeds are payloads of every encoding for FuzzRestoreValue.
func restoreSeeds() [][]byte {
	var out [][]byte
	add := func(f func(e *rdb.Encoder)) {
		e := rdb.NewEncoder(rdb.DefaultOptions)
		f(e)
		out = append(out, e.Payload())
	}
	strs := func(e *rdb.Encoder, xs ...string) {
		for _, x := range xs {
			e.String(x)
		}
	}
	lp := func(xs ...string) []byte {
		l := rdb.NewListpack()
		for _, x := range xs {
			l.Append(x)
		}
		return l.Finish()
	}
	add(func(e *rdb.Encoder) { e.Type(rdb.TypeString); e.String(strings.Repeat("ab", 40)) })
	add(func(e *rdb.Encoder) {
		e.List(func(yield func(string) bool) {
			for _, x := range []string{"a", "1", "-70000", strings.Repeat("z", 100)} {
				if !yield(x) {
					return
				}
			}
		})
	})
	add(func(e *rdb.Encoder) { e.Type(rdb.TypeSet); e.Len(3); strs(e, "1", "2", "x") })
	add(func(e *rdb.Encoder) { e.Type(rdb.TypeSet); e.Len(2); strs(e, "1", "-5") })
	add(func(e *rdb.Encoder) {
		e.Type(rdb.TypeSetIntset)
		e.Bytes(rdb.AppendIntset(nil, []int64{-3, 9, 1 << 40}))
	})
	add(func(e *rdb.Encoder) { e.Type(rdb.TypeHash); e.Len(2); strs(e, "f", "v", "g", strings.Repeat("w", 80)) })
	add(func(e *rdb.Encoder) { e.Type(rdb.TypeHashListpack); e.Bytes(lp("f", "v", "n", "12")) })
	add(func(e *rdb.Encoder) { e.Type(rdb.TypeHashZiplist); e.Bytes(rdbtest.Ziplist([]string{"f", "v"})) })
	add(func(e *rdb.Encoder) {
		e.Type(rdb.TypeHashZipmap)
		e.Bytes(rdbtest.Zipmap([]string{"f", "v", "g", "1"}))
	})
	add(func(e *rdb.Encoder) { e.Type(rdb.TypeZSetListpack); e.Bytes(lp("a", "1", "b", "2.5")) })
	add(func(e *rdb.Encoder) {
		e.Type(rdb.TypeZSetZiplist)
		e.Bytes(rdbtest.Ziplist([]string{"a", "1", "b", "3"}))
	})
	add(func(e *rdb.Encoder) {
		e.Type(rdb.TypeZSet2)
		e.Len(2)
		e.String("b")
		e.Double(math.Inf(1))
		e.String("a")
		e.Double(math.Copysign(0, -1))
	})
	return out
}

// canonical lists a decoded object's content in an order that does not
// depend on the encoding.
func canonical(o *rdb.Object) []string {
	switch o.Kind {
	case rdb.KindString:
		return []string{string(o.Str)}
	case rdb.KindList:
		return o.Elems
	case rdb.KindSet:
		out := slices.Clone(o.Elems)
		for _, v := range o.Ints {
			out = append(out, strconv.FormatInt(v, 10))
		}
		slices.Sort(out)
		return out
	case rdb.KindHash:
		var out []string
		for i := 0; i+1 < len(o.Elems); i += 2 {
			out = append(out, o.Elems[i]+"\x00"+o.Elems[i+1])
		}
		slices.Sort(out)
		return out
	case rdb.KindZSet:
		var out []string
		for i, m := range o.Elems {
			s := o.Scores[i]
			if s == 0 {
				s = 0 // -0 and 0 may legitimately differ between encodings
			}
			out = append(out, m+"\x00"+string(appendPrintf17g(nil, s)))
		}
		slices.Sort(out)
		return out
	}
	return nil
}

// FuzzRestoreValue builds slotd values from arbitrary payloads: no panics,
// and whatever builds DUMPs back to the same content, under the default
// encoding limits and under tiny ones.
func FuzzRestoreValue(f *testing.F) {
	for _, p := range restoreSeeds() {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		o, err := rdb.Decode(p)
		if err != nil {
			return
		}
		for _, lim := range []struct{ intset, zEntries, zValue int64 }{{512, 128, 64}, {1, 1, 1}} {
			var v Restored
			switch o.Kind {
			case rdb.KindString:
				v = Restored{Kind: keyspace.KindString, Str: o.Str}
			case rdb.KindList:
				lv := &ListValue{}
				for _, s := range o.Elems {
					lv.PushBack(s)
				}
				v = Restored{Kind: keyspace.KindList, Obj: lv}
			case rdb.KindSet:
				s, err := rdbvalue.BuildSet(o, int(lim.intset))
				if err != nil {
					return
				}
				v = Restored{Kind: keyspace.KindSet, Obj: s}
			case rdb.KindHash:
				h := &HashValue{}
				if err := rdbvalue.BuildHash(o, hash.Limits{MaxEntries: lim.zEntries, MaxValue: lim.zValue}, &h.Hash); err != nil {
					return
				}
				v = Restored{Kind: keyspace.KindHash, Obj: h}
			case rdb.KindZSet:
				z, err := rdbvalue.BuildZSet(o, lim.zEntries, lim.zValue)
				if err != nil {
					return
				}
				v = Restored{Kind: keyspace.KindZSet, Obj: z}
			}
			e := &keyspace.Entry{Kind: v.Kind, Str: v.Str, Obj: v.Obj}
			out, ok := dumpEntry(e, rdb.DefaultOptions)
			require.True(t, ok)
			require.True(t, rdb.Verify(out))
			o2, err := rdb.Decode(out)
			require.NoError(t, err)
			require.Equal(t, canonical(o), canonical(o2))
		}
	})
}
