package rdb

import (
	"crypto/sha1"
	"encoding/hex"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// seedPayloads are valid payloads of every type and encoding, the starting
// points of FuzzDecode (also committed under testdata/fuzz/FuzzDecode).
func seedPayloads() [][]byte {
	var out [][]byte
	for _, p := range redisPayloads {
		out = append(out, []byte(p.payload))
	}
	add := func(build func(e *Encoder)) {
		e := NewEncoder(DefaultOptions)
		build(e)
		out = append(out, e.Payload())
	}
	add(func(e *Encoder) { e.Type(TypeString); e.String("12345") })
	add(func(e *Encoder) { e.Type(TypeString); e.String(strings.Repeat("abc", 30)) })
	add(func(e *Encoder) {
		elems := make([]string, 300)
		for i := range elems {
			elems[i] = strings.Repeat("v", i%70) + strconv.Itoa(i)
		}
		e.Opt.ListFill = 16
		e.List(seq(elems...))
	})
	add(func(e *Encoder) {
		e.Type(TypeSet)
		e.Len(3)
		e.String("a")
		e.String("1")
		e.String(strings.Repeat("m", 40))
	})
	add(func(e *Encoder) { e.Type(TypeSetIntset); e.Bytes(AppendIntset(nil, []int64{-70000, 1, 1 << 40})) })
	add(func(e *Encoder) {
		e.Type(TypeHash)
		e.Len(2)
		e.String("f")
		e.String("v")
		e.String(strings.Repeat("F", 100))
		e.String("2")
	})
	add(func(e *Encoder) {
		e.Type(TypeZSet2)
		e.Len(3)
		for i, m := range []string{"c", "b", "a"} {
			e.String(m)
			e.Double(float64(3-i) / 3)
		}
	})
	out = append(out,
		legacyPayload(TypeListZiplist, buildZiplist(legacyEntries[:14])),
		legacyPayload(TypeHashZiplist, buildZiplist([]string{"f", "v", "n", "-5"})),
		legacyPayload(TypeZSetZiplist, buildZiplist([]string{"a", "1", "b", "1.5"})),
		legacyPayload(TypeHashZipmap, buildZipmap([]string{"f", "v", "n", "123"})),
	)
	e := NewEncoder(Options{})
	e.Type(TypeListQuicklist)
	e.Len(2)
	e.Bytes(buildZiplist([]string{"a", "1"}))
	e.Bytes(buildZiplist([]string{"b", "-300"}))
	out = append(out, e.Payload())
	e = NewEncoder(Options{})
	e.Type(TypeZSet)
	e.Len(2)
	e.String("a")
	e.B = append(e.B, 3, '2', '.', '5')
	e.String("b")
	e.B = append(e.B, 254)
	out = append(out, e.Payload())
	return out
}

// reencode writes a decoded object back in the simplest encoding of its
// kind.
func reencode(o *Object) []byte {
	e := NewEncoder(DefaultOptions)
	switch o.Kind {
	case KindString:
		e.Type(TypeString)
		e.Bytes(o.Str)
	case KindList:
		e.List(seq(o.Elems...))
	case KindSet:
		if o.Ints != nil {
			e.Type(TypeSetIntset)
			e.Bytes(AppendIntset(nil, o.Ints))
			break
		}
		e.Type(TypeSet)
		e.Len(uint64(len(o.Elems)))
		for _, s := range o.Elems {
			e.String(s)
		}
	case KindHash:
		e.Type(TypeHash)
		e.Len(uint64(len(o.Elems) / 2))
		for _, s := range o.Elems {
			e.String(s)
		}
	case KindZSet:
		e.Type(TypeZSet2)
		e.Len(uint64(len(o.Elems)))
		for i, s := range o.Elems {
			e.String(s)
			e.Double(o.Scores[i])
		}
	}
	return e.Payload()
}

func FuzzDecode(f *testing.F) {
	for _, p := range seedPayloads() {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		Verify(p)
		o, err := Decode(p)
		if err != nil {
			return
		}
		// Whatever decodes re-encodes to the same content.
		o2, err := Decode(reencode(o))
		require.NoError(t, err)
		require.Equal(t, o.Kind, o2.Kind)
		require.Equal(t, string(o.Str), string(o2.Str))
		require.Equal(t, o.Elems, o2.Elems)
		require.Equal(t, o.Ints, o2.Ints)
		require.Equal(t, len(o.Scores), len(o2.Scores))
		for i := range o.Scores {
			require.Equal(t, math.Float64bits(o.Scores[i]), math.Float64bits(o2.Scores[i]))
		}
	})
}

func FuzzLZF(f *testing.F) {
	f.Add([]byte("abcabcabcabcabcabcabcabcabcabcabcabc"), uint16(36))
	f.Add([]byte{0, 'a', 0xe0, 10, 0}, uint16(300))
	f.Fuzz(func(t *testing.T, data []byte, n uint16) {
		_, _ = lzfDecompress(data, int(n))
		comp, ok := lzfCompress(nil, data, len(data))
		if !ok {
			return
		}
		out, err := lzfDecompress(comp, len(data))
		require.NoError(t, err)
		require.Equal(t, data, out)
	})
}

// TestWriteFuzzCorpus regenerates the committed seed corpus when
// RDB_WRITE_CORPUS is set.
func TestWriteFuzzCorpus(t *testing.T) {
	if os.Getenv("RDB_WRITE_CORPUS") == "" {
		t.Skip("set RDB_WRITE_CORPUS=1 to rewrite testdata/fuzz/FuzzDecode")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzDecode")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for _, p := range seedPayloads() {
		sum := sha1.Sum(p)
		body := "go test fuzz v1\n[]byte(" + strconv.Quote(string(p)) + ")\n"
		require.NoError(t, os.WriteFile(filepath.Join(dir, "seed-"+hex.EncodeToString(sum[:8])), []byte(body), 0o644))
	}
}
