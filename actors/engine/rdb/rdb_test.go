package rdb

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCRC64CheckValue(t *testing.T) {
	assert.Equal(t, uint64(0xe9c6d914c4b8d9ca), CRC64(0, []byte("123456789")))
	// Slicing-by-8 and byte-at-a-time agree, and the CRC can be continued.
	r := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 1000)
	for i := range data {
		data[i] = byte(r.IntN(256))
	}
	for n := 0; n < 40; n++ {
		whole := CRC64(0, data[:n+900])
		split := CRC64(CRC64(0, data[:n]), data[n:n+900])
		assert.Equal(t, whole, split)
	}
}

// Payloads DUMPed by redis-server 7.0.15 (rdbcompression yes) for values
// built by the commands in the comments.
var redisPayloads = []struct {
	name    string
	payload string
	build   func(e *Encoder)
}{
	{"SET s hello", "\x00\x05hello\n\x00cr\xdfve4 \n", func(e *Encoder) {
		e.Type(TypeString)
		e.String("hello")
	}},
	{"SET s0 a*45", "\x00\xc3\t-\x01aa\xe0 \x00\x01aa\n\x00\xb8%\xa6\xf9\xa5\x12\x8e\xd9", func(e *Encoder) {
		e.Type(TypeString)
		e.String(strings.Repeat("a", 45))
	}},
	{"SET s2 hello world...", "\x00\xc3\"9\fhello world h\xe0\x0e\v\t1234567890\xe0\x00\n\x0190\n\x00\x05\xc5\b\x85\xf6c>\xd5",
		func(e *Encoder) {
			e.Type(TypeString)
			e.String("hello world hello world hello world 1234567890 1234567890")
		}},
	{"RPUSH l a b 1 2 300", "\x12\x01\x02\x14\x14\x00\x00\x00\x05\x00\x81a\x02\x81b\x02\x01\x01\x02\x01\xc1,\x02\xff\n\x00\x84!\xc7\x9f\xc0\xb8!\xfa",
		func(e *Encoder) { e.List(seq("a", "b", "1", "2", "300")) }},
	{"HSET h f1 v1 f2 2 f3 hello", "\x10  \x00\x00\x00\x06\x00\x82f1\x03\x82v1\x03\x82f2\x03\x02\x01\x82f3\x03\x85hello\x06\xff\n\x00\x13\xc5\x9ax\t\x86v\x1b",
		func(e *Encoder) {
			e.Type(TypeHashListpack)
			lp := NewListpack()
			for _, s := range []string{"f1", "v1", "f2", "2", "f3", "hello"} {
				lp.Append(s)
			}
			e.Bytes(lp.Finish())
		}},
	{"SADD si 1 2 3 -5 70000", "\x0b\x1c\x04\x00\x00\x00\x05\x00\x00\x00\xfb\xff\xff\xff\x01\x00\x00\x00\x02\x00\x00\x00\x03\x00\x00\x00p\x11\x01\x00\n\x00#\xe5\xf3vU\x98a}",
		func(e *Encoder) {
			e.Type(TypeSetIntset)
			e.Bytes(AppendIntset(nil, []int64{-5, 1, 2, 3, 70000}))
		}},
	{"ZADD z 1 a 2.5 b -3 c", "\x11\x1a\x1a\x00\x00\x00\x06\x00\x81c\x02\xdf\xfd\x02\x81a\x02\x01\x01\x81b\x02\x832.5\x04\xff\n\x00\xa6\x8a\x1a\xb1\xa9\xf2\xdc\xc2",
		func(e *Encoder) {
			e.Type(TypeZSetListpack)
			lp := NewListpack()
			for _, s := range []string{"c", "-3", "a", "1", "b", "2.5"} {
				lp.Append(s)
			}
			e.Bytes(lp.Finish())
		}},
	{"ZADD z -0 a 1.5 b 0.1 c 3 d", "\x11\xc3(1\x121\x00\x00\x00\b\x00\x81a\x02\x00\x01\x81c\x02\x930.10\xe0\x05\x00\x0f1\x14\x81b\x02\x831.5\x04\x81d\x02\x03\x01\xff\n\x00\xe3\xe4\xe9\xd24\xb8\xd2s",
		func(e *Encoder) {
			e.Type(TypeZSetListpack)
			lp := NewListpack()
			for _, s := range []string{"a", "0", "c", "0.10000000000000001", "b", "1.5", "d", "3"} {
				lp.Append(s)
			}
			e.Bytes(lp.Finish())
		}},
}

func seq(elems ...string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for _, s := range elems {
			if !yield(s) {
				return
			}
		}
	}
}

func TestEncoderMatchesRedis(t *testing.T) {
	for _, tc := range redisPayloads {
		e := NewEncoder(DefaultOptions)
		tc.build(e)
		assert.Equal(t, tc.payload, string(e.Payload()), tc.name)
		assert.True(t, Verify([]byte(tc.payload)), tc.name)
		_, err := Decode([]byte(tc.payload))
		assert.NoError(t, err, tc.name)
	}
}

func TestLengthEncoding(t *testing.T) {
	for _, n := range []uint64{0, 1, 63, 64, 16383, 16384, math.MaxUint32, math.MaxUint32 + 1, math.MaxUint64} {
		b := AppendLen(nil, n)
		r := &reader{b: b}
		got, special, err := r.length()
		require.NoError(t, err)
		assert.False(t, special)
		assert.Equal(t, n, got)
		assert.Equal(t, len(b), r.p)
	}
	assert.Len(t, AppendLen(nil, 63), 1)
	assert.Len(t, AppendLen(nil, 64), 2)
	assert.Len(t, AppendLen(nil, 16384), 5)
	assert.Len(t, AppendLen(nil, math.MaxUint32+1), 9)
}

func TestStringEncodings(t *testing.T) {
	cases := []struct {
		s    string
		want string // encoded form, or "" for length+raw bytes
	}{
		{"0", "\xc0\x00"},
		{"-1", "\xc0\xff"},
		{"127", "\xc0\x7f"},
		{"-128", "\xc0\x80"},
		{"128", "\xc1\x80\x00"},
		{"-32768", "\xc1\x00\x80"},
		{"32768", "\xc2\x00\x80\x00\x00"},
		{"2147483647", "\xc2\xff\xff\xff\x7f"},
		{"-2147483648", "\xc2\x00\x00\x00\x80"},
		{"2147483648", ""},  // does not fit 32 bits
		{"12345678901", ""}, // 11 bytes but too big
		{"007", ""},         // not canonical
		{"-0", ""},
		{"+1", ""},
		{" 1", ""},
		{"", ""},
	}
	for _, tc := range cases {
		e := NewEncoder(DefaultOptions)
		e.String(tc.s)
		want := tc.want
		if want == "" {
			want = string(AppendLen(nil, uint64(len(tc.s)))) + tc.s
		}
		assert.Equal(t, want, string(e.B), "%q", tc.s)
		r := &reader{b: e.B}
		got, err := r.str()
		require.NoError(t, err)
		assert.Equal(t, tc.s, string(got))
	}
}

func TestLZFRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	alphabets := []string{"a", "ab", "abcdefgh", "0123456789abcdefghijklmnopqrstuvwxyz"}
	for i := 0; i < 300; i++ {
		n := 21 + r.IntN(20000)
		if i%10 == 0 {
			n = 21 + r.IntN(100)
		}
		alpha := alphabets[r.IntN(len(alphabets))]
		var sb strings.Builder
		for sb.Len() < n {
			if r.IntN(4) == 0 && sb.Len() > 10 {
				s := sb.String()
				start := r.IntN(len(s))
				sb.WriteString(s[start:min(len(s), start+r.IntN(300))])
				continue
			}
			sb.WriteByte(alpha[r.IntN(len(alpha))])
		}
		in := []byte(sb.String())
		comp, ok := lzfCompress(nil, in, len(in)-4)
		if !ok {
			continue
		}
		out, err := lzfDecompress(comp, len(in))
		require.NoError(t, err)
		require.Equal(t, in, out)
		// A wrong length is an error, not a short or long result.
		_, err = lzfDecompress(comp, len(in)+1)
		assert.Error(t, err)
		_, err = lzfDecompress(comp, len(in)-1)
		assert.Error(t, err)
	}
	// Incompressible data is stored raw.
	noise := make([]byte, 100)
	for i := range noise {
		noise[i] = byte(r.IntN(256))
	}
	e := NewEncoder(DefaultOptions)
	e.Bytes(noise)
	assert.Equal(t, string(AppendLen(nil, 100))+string(noise), string(e.B))
	// Compression off.
	e = NewEncoder(Options{})
	e.String(strings.Repeat("x", 100))
	assert.Equal(t, "\x40\x64"+strings.Repeat("x", 100), string(e.B))
}

func TestLZFRefusesHugeClaims(t *testing.T) {
	_, err := lzfDecompress([]byte{0, 'a'}, 1<<40)
	assert.Error(t, err)
	_, err = lzfDecompress(nil, 5)
	assert.Error(t, err)
	_, err = lzfDecompress([]byte{0x20, 0}, 3) // back reference before the start
	assert.Error(t, err)
}

func lpEntries(t *testing.T, blob []byte) []string {
	var out []string
	_, err := listpackEach(blob, func(s []byte) error {
		out = append(out, string(s))
		return nil
	})
	require.NoError(t, err)
	return out
}

func TestListpackRoundTrip(t *testing.T) {
	elems := []string{"0", "127", "128", "-1", "-4096", "4095", "4096", "-4097", "32767", "-32768", "32768",
		"8388607", "-8388608", "8388608", "2147483647", "-2147483648", "2147483648", "9223372036854775807",
		"-9223372036854775808", "9223372036854775808", "007", "-0", "",
		strings.Repeat("a", 63), strings.Repeat("b", 64), strings.Repeat("c", 4095), strings.Repeat("d", 4096),
		strings.Repeat("e", 70000), "x"}
	lp := NewListpack()
	size := lpHeaderSize + 1
	for _, s := range elems {
		lp.Append(s)
		size += lpEntrySize(s)
		assert.Equal(t, size, lp.Size(), "%.10q", s)
	}
	blob := lp.Finish()
	assert.Equal(t, elems, lpEntries(t, blob))
	// More than 65535 entries: the header says "unknown".
	lp.Reset()
	for i := 0; i < 70000; i++ {
		lp.Append(strconv.Itoa(i % 300))
	}
	blob = lp.Finish()
	assert.Equal(t, uint16(65535), binary.LittleEndian.Uint16(blob[4:]))
	assert.Len(t, lpEntries(t, blob), 70000)
}

func TestListpackCorruption(t *testing.T) {
	lp := NewListpack()
	for _, s := range []string{"a", "1", "hello", "-300"} {
		lp.Append(s)
	}
	good := lp.Finish()
	bad := func(mut func(b []byte) []byte) {
		b := mut(append([]byte(nil), good...))
		_, err := listpackEach(b, func([]byte) error { return nil })
		assert.Error(t, err)
	}
	bad(func(b []byte) []byte { return b[:len(b)-1] })                  // no terminator / size
	bad(func(b []byte) []byte { b[0]++; return b })                     // total bytes
	bad(func(b []byte) []byte { b[4]++; return b })                     // count
	bad(func(b []byte) []byte { b[len(b)-2] ^= 0x01; return b })        // backlen
	bad(func(b []byte) []byte { b[6] = 0xf5; return b })                // encoding
	bad(func(b []byte) []byte { b[6] = 0x8f; return b })                // string past the end
	bad(func(b []byte) []byte { b[len(b)-1] = 0; return b })            // terminator
	bad(func(b []byte) []byte { return append(b[:len(b)-1], 0, 0xff) }) // size mismatch
}

func TestIntset(t *testing.T) {
	for _, ints := range [][]int64{{1}, {-32768, 32767}, {-32769, 5}, {math.MinInt32, math.MaxInt32},
		{math.MinInt64, 0, math.MaxInt64}} {
		b := AppendIntset(nil, ints)
		got, err := intsetValues(b)
		require.NoError(t, err)
		assert.Equal(t, ints, got)
	}
	assert.Equal(t, uint32(2), binary.LittleEndian.Uint32(AppendIntset(nil, []int64{-32768, 32767})))
	assert.Equal(t, uint32(4), binary.LittleEndian.Uint32(AppendIntset(nil, []int64{32768})))
	assert.Equal(t, uint32(8), binary.LittleEndian.Uint32(AppendIntset(nil, []int64{1 << 31})))
	for _, b := range [][]byte{
		AppendIntset(nil, nil),                     // empty
		AppendIntset(nil, []int64{1, 2})[:11],      // truncated
		{3, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0},          // width 3
		{2, 0, 0, 0, 2, 0, 0, 0, 5, 0, 1, 0},       // not ascending
		{2, 0, 0, 0, 2, 0, 0, 0, 5, 0, 5, 0},       // duplicate
		{2, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 1, 0}, // huge count
	} {
		_, err := intsetValues(b)
		assert.Error(t, err, "%x", b)
	}
}

func TestQuicklistNodeSplit(t *testing.T) {
	// 1000 elements of 100 bytes (103 in a listpack). Redis adds one to a
	// node while node bytes + 100 + 8 stay within the fill's size class,
	// or, for counts, while the node has room and stays within 8 KB.
	elems := make([]string, 1000)
	for i := range elems {
		elems[i] = strings.Repeat(string(rune('a'+i%26)), 100)
	}
	for _, fill := range []int{-1, -2, -5, 1, 10, 128, 0, -100} {
		e := NewEncoder(Options{ListFill: fill})
		e.List(seq(elems...))
		o, err := Decode(e.Payload())
		require.NoError(t, err)
		assert.Equal(t, elems, o.Elems, "fill %d", fill)
		r := &reader{b: e.B[1:]}
		nodes, err := r.count()
		require.NoError(t, err)
		var want int
		switch fill {
		case -1: // 4096 bytes: 39 elements (7+39*103 = 4024; +100+8 > 4096)
			want = (1000 + 38) / 39
		case -2:
			want = (1000 + 78) / 79
		case -5:
			want = 2 // 65536 bytes: 635 + 365
		case 1:
			want = 1000
		case 10:
			want = 100
		case 128: // count-based fills stop at 8 KB too
			want = (1000 + 78) / 79
		case 0: // a fill of 0 allows one element per node
			want = 1000
		case -100: // clamped to -5
			want = 2
		}
		assert.Equal(t, want, nodes, "fill %d", fill)
	}
}

var (
	posInf = math.Inf(1)
	negInf = math.Inf(-1)
)
