package engine

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/actors/engine/types/set"
	"github.com/slotd/slotd/actors/engine/types/zset"
	"github.com/slotd/slotd/netio/resp"
	"github.com/stretchr/testify/require"
)

func TestEncodingAndMemoryHooks(t *testing.T) {
	s := NewShard(rand.New(rand.NewPCG(1, 2)), func() int64 { return time.Now().UnixMicro() }, nil)
	c := NewCall(s, &resp.Writer{Proto: 2}, 7, time.Now().UnixMilli())
	e := c.Create([]byte("s"), keyspace.KindSet)
	st := set.NewIntset()
	for _, m := range []string{"1", "2", "3"} {
		st.Add([]byte(m), 512)
	}
	e.Obj = st
	require.Equal(t, "intset", setEncoding(e))
	small := SetMemory(e)
	st.Add([]byte("member"), 512)
	require.Equal(t, "hashtable", setEncoding(e))
	require.Greater(t, SetMemory(e), small)
	require.Equal(t, "hashtable", EncodingOf(e)) // OBJECT ENCODING

	e = c.Create([]byte("z"), keyspace.KindZSet)
	z := zset.New(true)
	z.Add([]byte("a"), 1)
	e.Obj = z
	require.Equal(t, "listpack", zsetEncoding(e))
	lp := ZsetMemory(e)
	z.Compact = false
	require.Equal(t, "skiplist", zsetEncoding(e))
	require.Greater(t, ZsetMemory(e), lp)
	require.Equal(t, "skiplist", EncodingOf(e))
}
