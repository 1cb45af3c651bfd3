package zsetcmd

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/actors/engine/types/cnum"
	"github.com/slotd/slotd/actors/engine/types/zset"
	"github.com/slotd/slotd/netio/resp"
)

// TestCStrtod checks the strtod emulation against glibc 2.36's strtod: the
// value bits, the bytes consumed and errno == ERANGE, recorded from a C
// program on the table's inputs.
func TestCStrtod(t *testing.T) {
	for _, tc := range []struct {
		in     string
		bits   uint64
		n      int
		erange bool // glibc's ERANGE (also set for subnormal results)
	}{
		{"1", 0x3ff0000000000000, 1, false},
		{"-1", 0xbff0000000000000, 2, false},
		{"+1", 0x3ff0000000000000, 2, false},
		{" 1", 0x3ff0000000000000, 2, false},
		{"\t-2.5", 0xc004000000000000, 5, false},
		{"1.5abc", 0x3ff8000000000000, 3, false},
		{"1e", 0x3ff0000000000000, 1, false},
		{"1e+", 0x3ff0000000000000, 1, false},
		{"1e+5", 0x40f86a0000000000, 4, false},
		{"1e-5x", 0x3ee4f8b588e368f1, 4, false},
		{".5", 0x3fe0000000000000, 2, false},
		{"5.", 0x4014000000000000, 2, false},
		{".", 0x0000000000000000, 0, false},
		{" ", 0x0000000000000000, 0, false},
		{"", 0x0000000000000000, 0, false},
		{"-", 0x0000000000000000, 0, false},
		{"+.e5", 0x0000000000000000, 0, false},
		{"inf", 0x7ff0000000000000, 3, false},
		{"-inf", 0xfff0000000000000, 4, false},
		{"INF", 0x7ff0000000000000, 3, false},
		{"infinity", 0x7ff0000000000000, 8, false},
		{"-Infinity", 0xfff0000000000000, 9, false},
		{"infin", 0x7ff0000000000000, 3, false},
		{"nan", 0x7ff8000000000000, 3, false},
		{"-nan", 0xfff8000000000000, 4, false},
		{"nan(123)", 0x7ff800000000007b, 8, false},
		{"nan(12", 0x7ff8000000000000, 3, false},
		{"nanx", 0x7ff8000000000000, 3, false},
		{"0x", 0x0000000000000000, 1, false},
		{"0x1", 0x3ff0000000000000, 3, false},
		{"0x1p3", 0x4020000000000000, 5, false},
		{"0x1.8", 0x3ff8000000000000, 5, false},
		{"0X.8p1", 0x3ff0000000000000, 6, false},
		{"0x1p", 0x3ff0000000000000, 3, false},
		{"0xg", 0x0000000000000000, 1, false},
		{"-0x", 0x8000000000000000, 2, false},
		{"-0", 0x8000000000000000, 2, false},
		{"0", 0x0000000000000000, 1, false},
		{"1e400", 0x7ff0000000000000, 5, true},
		{"-1e400", 0xfff0000000000000, 6, true},
		{"1e-400", 0x0000000000000000, 6, true},
		{"1e-310", 0x000012688b70e62b, 6, true},
		{"2.2250738585072014e-308", 0x0010000000000000, 23, false},
		{"4.9e-324", 0x0000000000000001, 8, true},
		{"2e-324", 0x0000000000000000, 6, true},
		{"0x1p-1080", 0x0000000000000000, 9, true},
		{"0x1p2000", 0x7ff0000000000000, 8, true},
		{"00012", 0x4028000000000000, 5, false},
		{"1_000", 0x3ff0000000000000, 1, false},
		{"1,5", 0x3ff0000000000000, 1, false},
		{"1e0001", 0x4024000000000000, 6, false},
		{"123456789012345678901234567890", 0x45f8ee90ff6c373e, 30, false},
		{"0.000000000000000000000000000001e-300", 0x0000000000000000, 37, true},
		{"1e-5000", 0x0000000000000000, 7, true},
		{"0e-5000", 0x0000000000000000, 7, false},
		{"0x0p-5000", 0x0000000000000000, 9, false},
		{"  +0x1P-2", 0x3fd0000000000000, 9, false},
		{"1.7976931348623157e308", 0x7fefffffffffffff, 22, false},
		{"1.7976931348623159e308", 0x7ff0000000000000, 22, true},
		{"+-1", 0x0000000000000000, 0, false},
		{"e5", 0x0000000000000000, 0, false},
		{"0.30000000000000004", 0x3fd3333333333334, 19, false},
		{"9007199254740993", 0x4340000000000000, 16, false},
	} {
		v, n, erange := cStrtod([]byte(tc.in))
		want := math.Float64frombits(tc.bits)
		if math.IsNaN(want) {
			require.True(t, math.IsNaN(v), tc.in)
		} else {
			require.Equal(t, tc.bits, math.Float64bits(v), "%q: %v", tc.in, v)
		}
		require.Equal(t, tc.n, n, tc.in)
		// Only the ERANGE cases Redis refuses are reported.
		require.Equal(t, tc.erange && (want == 0 || math.IsInf(want, 0)), erange, tc.in)
	}
}

func TestParseScoreArg(t *testing.T) {
	for in, want := range map[string]float64{"1": 1, "-0.5": -0.5, "inf": math.Inf(1), "-INF": math.Inf(-1),
		"+infinity": math.Inf(1), "0x10": 16, "1e-310": 1e-310, "1E5": 1e5} {
		v, ok := parseScoreArg([]byte(in))
		require.True(t, ok, in)
		require.Equal(t, want, v, in)
	}
	for _, in := range []string{"", " 1", "1 ", "nan", "1e400", "1e-400", "abc", "1\x00", "(1", "--1"} {
		_, ok := parseScoreArg([]byte(in))
		require.False(t, ok, "%q", in)
	}
	v, ok := parseScoreArg([]byte("-0"))
	require.True(t, ok)
	require.True(t, math.Signbit(v))
}

func TestAppendD2S(t *testing.T) {
	for f, want := range map[float64]string{
		0: "0", math.Copysign(0, -1): "-0", 1: "1", -17: "-17", 1.5: "1.5", 0.1: "0.10000000000000001",
		1e17: "100000000000000000", 1 << 62: "4611686018427387904", 1<<62 + 1024: "4.6116860184273889e+18",
		1e22: "1e+22", math.Inf(1): "inf", math.Inf(-1): "-inf", math.NaN(): "nan",
	} {
		require.Equal(t, want, string(cnum.AppendD2S(nil, f)), "%v", f)
	}
}

// testShard is a shard's state without the actor, for calling command
// helpers directly.
func testShard() *engine.Shard {
	return engine.NewShard(rand.New(rand.NewPCG(1, 2)), func() int64 { return time.Now().UnixMicro() }, nil)
}

func testCall(s *engine.Shard, proto int, args ...string) *engine.Call {
	return engine.NewCall(s, &resp.Writer{Proto: proto}, 7, time.Now().UnixMilli(), args...)
}

// TestZPopTry covers the entry point the blocking pops will use: nothing
// is written when no key exists, so the caller can park the client.
func TestZPopTry(t *testing.T) {
	s := testShard()
	c := testCall(s, 2, "bzpopmin", "k1", "k2", "0")
	require.False(t, zpopTry(c, c.Args[1:3], false, 1, ZPopKeyFlat))
	require.Empty(t, c.W.B)

	z := zset.New(true)
	z.Add([]byte("a"), 1)
	z.Add([]byte("b"), 2)
	c.Create([]byte("k2"), keyspace.KindZSet).Obj = z
	require.True(t, zpopTry(c, c.Args[1:3], true, 1, ZPopKeyFlat))
	require.Equal(t, "*3\r\n$2\r\nk2\r\n$1\r\nb\r\n$1\r\n2\r\n", string(c.W.B))

	c = testCall(s, 3, "bzmpop", "k2")
	require.True(t, zpopTry(c, c.Args[1:2], false, 5, ZPopKeyPairs))
	require.Equal(t, "*2\r\n$2\r\nk2\r\n*1\r\n*2\r\n$1\r\na\r\n,1\r\n", string(c.W.B))
	require.Nil(t, c.Lookup([]byte("k2")), "emptied key deleted")

	c = testCall(s, 2, "x", "str")
	c.Create([]byte("str"), keyspace.KindString)
	require.True(t, zpopTry(c, c.Args[1:2], false, 1, ZPopKeyFlat))
	require.Equal(t, "-"+engine.ErrWrongType+"\r\n", string(c.W.B))

	c = testCall(s, 2, "bzmpop", "0", "1", "k", "MAX", "COUNT", "3")
	a, ok := ParseZMPop(c, 2)
	require.True(t, ok)
	require.Equal(t, ZMPopArgs{Keys: [][]byte{[]byte("k")}, Max: true, Count: 3}, a)
}
