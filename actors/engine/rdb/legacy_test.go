package rdb

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/slotd/slotd/actors/engine/rdb/rdbtest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	buildZiplist = rdbtest.Ziplist
	buildZipmap  = rdbtest.Zipmap
)

// legacyPayload wraps a blob in a payload of type t.
func legacyPayload(t byte, blob []byte) []byte {
	e := NewEncoder(Options{})
	e.Type(t)
	e.Bytes(blob)
	return e.Payload()
}

var legacyEntries = []string{"a", "0", "12", "13", "-1", "127", "-128", "300", "-40000", "8000000", "-2000000000",
	"5000000000", "-9223372036854775808", "hello", strings.Repeat("x", 63), strings.Repeat("y", 64),
	strings.Repeat("z", 300), strings.Repeat("w", 20000), "007", ""}

func TestZiplistDecode(t *testing.T) {
	zl := buildZiplist(legacyEntries)
	var got []string
	n, err := ziplistEach(zl, func(s []byte) error {
		got = append(got, string(s))
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, len(legacyEntries), n)
	assert.Equal(t, legacyEntries, got)

	o, err := Decode(legacyPayload(TypeListZiplist, zl))
	require.NoError(t, err)
	assert.Equal(t, KindList, o.Kind)
	assert.Equal(t, legacyEntries, o.Elems)

	// A quicklist of ziplists (type 14), with an empty node skipped.
	e := NewEncoder(Options{})
	e.Type(TypeListQuicklist)
	e.Len(3)
	e.Bytes(buildZiplist(legacyEntries[:5]))
	e.Bytes(buildZiplist(nil))
	e.Bytes(buildZiplist(legacyEntries[5:]))
	o, err = Decode(e.Payload())
	require.NoError(t, err)
	assert.Equal(t, legacyEntries, o.Elems)

	// Hash and sorted set ziplists hold pairs.
	o, err = Decode(legacyPayload(TypeHashZiplist, buildZiplist([]string{"f", "v", "n", "1"})))
	require.NoError(t, err)
	assert.Equal(t, KindHash, o.Kind)
	assert.Equal(t, []string{"f", "v", "n", "1"}, o.Elems)
	assert.True(t, o.Packed())
	o, err = Decode(legacyPayload(TypeZSetZiplist, buildZiplist([]string{"a", "1", "b", "2.5", "c", "-inf"})))
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "c"}, o.Elems)
	assert.Equal(t, []float64{1, 2.5, negInf}, o.Scores)
	_, err = Decode(legacyPayload(TypeHashZiplist, buildZiplist([]string{"f", "v", "n"})))
	assert.Error(t, err)
	_, err = Decode(legacyPayload(TypeZSetZiplist, buildZiplist([]string{"a", "x"})))
	assert.Error(t, err)
}

func TestZiplistCorruption(t *testing.T) {
	good := buildZiplist([]string{"a", "300", "hello"})
	for i, mut := range []func([]byte) []byte{
		func(b []byte) []byte { return b[:len(b)-1] },
		func(b []byte) []byte { b[0]++; return b },
		func(b []byte) []byte { b[4]++; return b },                   // tail
		func(b []byte) []byte { b[8]++; return b },                   // count
		func(b []byte) []byte { b[zlHeaderSize] = 5; return b },      // prevlen of the first entry
		func(b []byte) []byte { b[zlHeaderSize+1] = 0x3f; return b }, // string past the end
		func(b []byte) []byte { b[zlHeaderSize+3] = 9; return b },    // second entry's prevlen
		func(b []byte) []byte { b[zlHeaderSize+4] = 0xff; return b }, // bad encoding
	} {
		b := mut(append([]byte(nil), good...))
		_, err := ziplistEach(b, func([]byte) error { return nil })
		assert.Error(t, err, "case %d", i)
	}
}

func TestZipmapDecode(t *testing.T) {
	pairs := []string{"f", "v", "num", "123", "long", strings.Repeat("L", 300), strings.Repeat("K", 260), "", "x", "y"}
	o, err := Decode(legacyPayload(TypeHashZipmap, buildZipmap(pairs)))
	require.NoError(t, err)
	assert.Equal(t, KindHash, o.Kind)
	assert.Equal(t, pairs, o.Elems)
	zm := buildZipmap(pairs)
	zm[0] = 9 // wrong count
	_, err = Decode(legacyPayload(TypeHashZipmap, zm))
	assert.Error(t, err)
	_, err = Decode(legacyPayload(TypeHashZipmap, []byte{0, 0xff})) // empty
	assert.Error(t, err)
	zm = buildZipmap(pairs)
	_, err = Decode(legacyPayload(TypeHashZipmap, zm[:len(zm)-3]))
	assert.Error(t, err)
}

func TestOldListSetHashZSet(t *testing.T) {
	e := NewEncoder(DefaultOptions)
	e.Type(TypeList)
	e.Len(3)
	for _, s := range []string{"a", "1", strings.Repeat("c", 100)} {
		e.String(s)
	}
	o, err := Decode(e.Payload())
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "1", strings.Repeat("c", 100)}, o.Elems)

	// Scores as text: NaN refused, infinities by their marker bytes.
	e = NewEncoder(Options{})
	e.Type(TypeZSet)
	e.Len(3)
	e.String("a")
	e.B = append(e.B, 3, '1', '.', '5')
	e.String("b")
	e.B = append(e.B, 254)
	e.String("c")
	e.B = append(e.B, 255)
	o, err = Decode(e.Payload())
	require.NoError(t, err)
	assert.Equal(t, []float64{1.5, posInf, negInf}, o.Scores)
	e = NewEncoder(Options{})
	e.Type(TypeZSet)
	e.Len(1)
	e.String("a")
	e.B = append(e.B, 253)
	_, err = Decode(e.Payload())
	assert.Error(t, err)
}

func TestDecodeErrors(t *testing.T) {
	for name, p := range map[string][]byte{
		"empty":         {},
		"unknown type":  {8, 0},
		"stream":        {TypeStreamListpacks2, 0},
		"module":        {TypeModule2, 0},
		"short string":  {TypeString, 5, 'a'},
		"empty list":    {TypeList, 0},
		"empty set":     {TypeSet, 0},
		"empty hash":    {TypeHash, 0},
		"empty zset":    {TypeZSet2, 0},
		"huge count":    {TypeList, 0x81, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 'a'},
		"bad length":    {TypeString, 0x82},
		"bad strenc":    {TypeString, 0xc4},
		"lzf short":     {TypeString, 0xc3, 2, 5, 0},
		"lzf bad":       {TypeString, 0xc3, 2, 3, 0x20, 0},
		"ql container":  {TypeListQuicklist2, 1, 3, 1, 'a'},
		"ql empty node": {TypeListQuicklist2, 1, 2, 0},
		"zset2 short":   {TypeZSet2, 1, 1, 'a', 0, 0},
		"zset2 nan":     append([]byte{TypeZSet2, 1, 1, 'a'}, 0, 0, 0, 0, 0, 0, 0xf8, 0x7f),
	} {
		_, err := Decode(p)
		assert.Error(t, err, name)
	}
}

func TestVerify(t *testing.T) {
	e := NewEncoder(DefaultOptions)
	e.Type(TypeString)
	e.String("x")
	p := e.Payload()
	assert.True(t, Verify(p))
	for i := range p {
		q := append([]byte(nil), p...)
		q[i] ^= 0x40
		assert.False(t, Verify(q), "byte %d", i)
	}
	assert.False(t, Verify(p[:9]))
	// An older version is accepted, a newer one refused.
	old := append([]byte(nil), p[:len(p)-10]...)
	old = append(old, 9, 0)
	old = binary.LittleEndian.AppendUint64(old, CRC64(0, old))
	assert.True(t, Verify(old))
	newer := append([]byte(nil), p[:len(p)-10]...)
	newer = append(newer, 11, 0)
	newer = binary.LittleEndian.AppendUint64(newer, CRC64(0, newer))
	assert.False(t, Verify(newer))
}
