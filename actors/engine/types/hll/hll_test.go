package hll

import (
	"encoding/binary"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewIsEmptySparse(t *testing.T) {
	b := New()
	require.True(t, Valid(b))
	assert.Equal(t, "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xff", string(b))
	assert.Equal(t, "Z:16384", Decode(b))
	card, ok := CachedCard(b)
	assert.True(t, ok)
	assert.Zero(t, card)
	n, err := Count(b)
	require.NoError(t, err)
	assert.Zero(t, n)
}

func TestValid(t *testing.T) {
	assert.False(t, Valid(nil))
	assert.False(t, Valid([]byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")))     // 15 bytes
	assert.False(t, Valid([]byte("HYLX\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"))) // magic
	assert.False(t, Valid([]byte("HYLL\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"))) // encoding
	assert.True(t, Valid([]byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")))  // empty sparse body
	d := make([]byte, DenseSize)
	copy(d, "HYLL")
	assert.True(t, Valid(d))
	assert.False(t, Valid(d[:DenseSize-1]))
	assert.False(t, Valid(append(d, 0)))
}

func TestCachedCard(t *testing.T) {
	b := New()
	SetCachedCard(b, 0x0102030405060708)
	v, ok := CachedCard(b)
	assert.True(t, ok)
	assert.Equal(t, uint64(0x0102030405060708), v)
	assert.Equal(t, []byte{8, 7, 6, 5, 4, 3, 2, 1}, b[8:16])
	InvalidateCache(b)
	_, ok = CachedCard(b)
	assert.False(t, ok)
}

func TestDenseRegistersIndependent(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	regs := make([]byte, DenseSize-HdrSize)
	var want [Registers]uint8
	for round := 0; round < 20; round++ {
		for i := range want {
			want[i] = uint8(r.IntN(64))
			denseSet(regs, i, want[i])
		}
		for i := range want {
			require.Equal(t, want[i], denseGet(regs, i), "register %d", i)
		}
	}
}

// TestMurmurHash64A checks the hash against values computed by the
// reference C implementation (seed 0xadc83b19, Redis's).
func TestMurmurHash64A(t *testing.T) {
	// Deterministic properties: every tail length path is taken, and the
	// hash depends on every byte.
	seen := map[uint64]bool{}
	data := []byte("abcdefghijklmnopqrstuvwxyz")
	for n := 0; n <= len(data); n++ {
		h := MurmurHash64A(data[:n], hashSeed)
		assert.False(t, seen[h], "collision at length %d", n)
		seen[h] = true
	}
	// Element → (register, run) as redis-server 7.0 reports them through
	// PFADD + PFDEBUG DECODE; the lengths cover the word loop and every
	// tail length.
	for ele, want := range map[string][2]int{
		"a": {12711, 2}, "b": {15780, 1}, "c": {8436, 1}, "hello": {9216, 1}, "": {5938, 2},
		"12345678": {10579, 3}, "123456789abcdefgh": {1958, 3},
	} {
		idx, count := PatLen([]byte(ele))
		assert.Equal(t, want, [2]int{idx, int(count)}, "element %q", ele)
	}
}

func TestSparseAndDenseAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 10, 100, 1000, 5000, 20000} {
		sparse := New()
		dense, err := ToDense(New())
		require.NoError(t, err)
		var ele [8]byte
		for i := 0; i < n; i++ {
			binary.LittleEndian.PutUint64(ele[:], r.Uint64())
			sparse, _ = Add(sparse, ele[:], 1<<30) // never promote for size
			dense, _ = Add(dense, ele[:], 1<<30)
		}
		sc, err := Count(sparse)
		require.NoError(t, err)
		dc, err := Count(dense)
		require.NoError(t, err)
		assert.Equal(t, dc, sc, "n=%d", n)
		if sparse[4] == Sparse {
			conv, err := ToDense(sparse)
			require.NoError(t, err)
			assert.Equal(t, dense[HdrSize:], conv[HdrSize:], "n=%d", n)
		}
		var regs [Registers]uint8
		require.NoError(t, Merge(&regs, sparse))
		assert.Equal(t, dc, CountRegisters(&regs))
		if n > 0 {
			assert.InEpsilon(t, float64(n), float64(dc), 0.05, "n=%d", n)
		}
	}
}

func TestPromotion(t *testing.T) {
	b := New()
	var changed int
	for i := 0; b[4] == Sparse; i++ {
		b, changed = Add(b, []byte(strconv.Itoa(i)), DefaultSparseMaxBytes)
		require.NotEqual(t, -1, changed)
		if b[4] == Sparse {
			require.LessOrEqual(t, len(b), DefaultSparseMaxBytes)
		}
		require.Less(t, i, 100000)
	}
	assert.Len(t, b, DenseSize)
	// A register value above 32 cannot be sparse.
	b = New()
	b, changed = Set(b, 5, 33, DefaultSparseMaxBytes)
	assert.Equal(t, 1, changed)
	assert.Equal(t, byte(Dense), b[4])
	assert.Equal(t, uint8(33), DenseRegisters(b)[5])
}

func TestSparseEdits(t *testing.T) {
	b := New()
	b, _ = Set(b, 0, 3, 3000)
	assert.Equal(t, "v:3,1 Z:16383", Decode(b))
	b, _ = Set(b, 1, 3, 3000)
	assert.Equal(t, "v:3,2 Z:16382", Decode(b))
	b, _ = Set(b, 16383, 1, 3000)
	assert.Equal(t, "v:3,2 Z:16381 v:1,1", Decode(b))
	b, _ = Set(b, 100, 2, 3000)
	assert.Equal(t, "v:3,2 Z:98 v:2,1 Z:16282 v:1,1", Decode(b))
	b, r := Set(b, 100, 1, 3000)
	assert.Equal(t, 0, r)
	b, _ = Set(b, 0, 5, 3000)
	assert.Equal(t, "v:5,1 v:3,1 Z:98 v:2,1 Z:16282 v:1,1", Decode(b))
	_, ok := CachedCard(b)
	assert.False(t, ok)
}

func TestCorruptSparse(t *testing.T) {
	short := []byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xfe") // 16383 registers
	_, err := Count(short)
	assert.ErrorIs(t, err, ErrCorrupt)
	var regs [Registers]uint8
	assert.ErrorIs(t, Merge(&regs, short), ErrCorrupt)
	_, err = ToDense(short)
	assert.ErrorIs(t, err, ErrCorrupt)
	_, r := Set(append([]byte{}, short...), 16383, 1, 3000)
	assert.Equal(t, -1, r)
	empty := []byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")
	_, r = Set(empty, 0, 1, 3000)
	assert.Equal(t, -1, r)
}

func TestSelfTest(t *testing.T) {
	if testing.Short() {
		t.Skip("ten million additions")
	}
	assert.Equal(t, "", SelfTest(rand.New(rand.NewPCG(5, 6)), DefaultSparseMaxBytes))
}
