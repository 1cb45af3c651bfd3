package engine

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/actors/engine/types/hash"
)

func TestListHashHooks(t *testing.T) {
	ks := keyspace.New()
	le := ks.Add([]byte("l"))
	le.Kind = keyspace.KindList
	lv := &ListValue{}
	le.Obj = lv
	small := ListMemory(le)
	for i := 0; i < 10000; i++ {
		lv.PushBack("element-" + strconv.Itoa(i))
	}
	assert.Equal(t, "quicklist", listEncoding(le))
	assert.Equal(t, "quicklist", EncodingOf(le), "OBJECT ENCODING sees the Encoder")
	big := ListMemory(le)
	assert.Greater(t, big, small+lv.Bytes(), "grows with the data")
	assert.Less(t, big, 3*(lv.Bytes()+1000), "same order as the data")

	he := ks.Add([]byte("h"))
	he.Kind = keyspace.KindHash
	hv := &HashValue{}
	he.Obj = hv
	lim := hash.Limits{MaxEntries: 128, MaxValue: 64}
	hv.Set([]byte("f"), []byte("v"), lim)
	assert.Equal(t, "listpack", hashEncoding(he))
	assert.Equal(t, "listpack", EncodingOf(he))
	compact := HashMemory(he)
	assert.Less(t, compact, 64)
	hv.Set([]byte("g"), []byte(strings.Repeat("x", 65)), lim)
	assert.Equal(t, "hashtable", hashEncoding(he))
	assert.Greater(t, HashMemory(he), compact+65)

	// COPY's Cloner gives independent values.
	lc := lv.Clone().(*ListValue)
	lc.PushBack("more")
	assert.Equal(t, lv.Len()+1, lc.Len())
	hc := hv.Clone().(*HashValue)
	hc.Set([]byte("new"), []byte("x"), lim)
	assert.Equal(t, hv.Len()+1, hc.Len())
}
