package cmdtest_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/actors/engine/types/hll"
	"github.com/slotd/slotd/cmd/node/nodetest"
)

// hllRedis is a go-redis client of a real redis-server started for the
// test (skipped when none is installed).
func hllRedis(t *testing.T) *redis.Client {
	t.Helper()
	rc := redis.NewClient(&redis.Options{Addr: nodetest.StartRedis(t), MaxRetries: -1})
	t.Cleanup(func() { _ = rc.Close() })
	return rc
}

// TestSameBytesAsRedis builds sketches of random sets here and in
// redis-server with the same additions in the same order, and requires the
// same value bytes (sparse and dense, cache flag included) and counts.
func TestSameBytesAsRedis(t *testing.T) {
	rc := hllRedis(t)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(9, 10))
	sizes := []int{0, 1, 2, 5, 10, 50, 100, 300, 700, 1000, 1500, 2000, 3000, 5000, 20000, 200000}
	for _, size := range sizes {
		key := fmt.Sprintf("h%d", size)
		b := hll.New()
		pipe := rc.Pipeline()
		pipe.PFAdd(ctx, key)
		batch := []any{}
		for i := 0; i < size; i++ {
			ele := strconv.FormatUint(r.Uint64N(uint64(size)*4+1), 36) // duplicates included
			b, _ = hll.Add(b, []byte(ele), hll.DefaultSparseMaxBytes)
			batch = append(batch, ele)
			if len(batch) == 1000 || i == size-1 {
				pipe.PFAdd(ctx, key, batch...)
				batch = batch[:0]
			}
		}
		hll.InvalidateCache(b) // PFADD creating the key marks the cache stale
		get := pipe.Get(ctx, key)
		_, err := pipe.Exec(ctx)
		require.NoError(t, err)
		require.Equal(t, get.Val(), string(b), "size %d (encoding %d)", size, b[4])

		n, err := hll.Count(b)
		require.NoError(t, err)
		want, err := rc.PFCount(ctx, key).Result()
		require.NoError(t, err)
		assert.Equal(t, uint64(want), n, "PFCOUNT size %d", size)
		hll.SetCachedCard(b, n)
		assert.Equal(t, rc.Get(ctx, key).Val(), string(b), "cached cardinality bytes, size %d", size)
	}

	// Unions of several sketches, and PFMERGE's register-by-register
	// build of a sparse destination.
	keys := []string{"h100", "h300", "h1000"}
	var regs [hll.Registers]uint8
	for _, k := range keys {
		v, err := rc.Get(ctx, k).Bytes()
		require.NoError(t, err)
		require.NoError(t, hll.Merge(&regs, v))
	}
	want, err := rc.PFCount(ctx, keys...).Result()
	require.NoError(t, err)
	assert.Equal(t, uint64(want), hll.CountRegisters(&regs))
	require.NoError(t, rc.PFMerge(ctx, "m", keys...).Err())
	m := hll.New()
	for i, v := range regs {
		if v != 0 {
			m, _ = hll.Set(m, i, v, hll.DefaultSparseMaxBytes)
		}
	}
	hll.InvalidateCache(m)
	assert.Equal(t, rc.Get(ctx, "m").Val(), string(m))
}

// TestEstimatorSameAsRedis stores dense sketches with random register
// histograms (every value 0..63, skewed in many ways) in redis-server and
// requires PFCOUNT to match the estimate here exactly: the floating-point
// steps must be the same.
func TestEstimatorSameAsRedis(t *testing.T) {
	rc := hllRedis(t)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(11, 12))
	const n = 300
	sketches := make([][]byte, n)
	pipe := rc.Pipeline()
	cmds := make([]*redis.IntCmd, n)
	for i := range sketches {
		d := make([]byte, hll.DenseSize)
		copy(d, "HYLL")
		hll.InvalidateCache(d)
		zeroFrac := r.Float64() * r.Float64()
		scale := 1 + r.IntN(40)
		for j := 0; j < hll.Registers; j++ {
			if r.Float64() < zeroFrac {
				continue
			}
			v := 1 + int(r.ExpFloat64()*float64(scale)/4)
			if r.IntN(1000) == 0 {
				v = r.IntN(64)
			}
			d, _ = hll.Set(d, j, uint8(min(v, 63)), hll.DefaultSparseMaxBytes) // registers of a fresh dense sketch only rise
		}
		sketches[i] = d
		key := "e" + strconv.Itoa(i)
		pipe.Set(ctx, key, d, 0)
		cmds[i] = pipe.PFCount(ctx, key)
	}
	_, err := pipe.Exec(ctx)
	require.NoError(t, err)
	for i, d := range sketches {
		got, err := hll.Count(d)
		require.NoError(t, err)
		assert.Equal(t, uint64(cmds[i].Val()), got, "sketch %d", i)
	}
}

// TestCorruptSparseSameAsRedis: PFADD on sparse sketches whose bytes were
// damaged (truncated, a final XZERO cut in half, bytes overwritten or
// appended) gives Redis's reply, an update or INVALIDOBJ, and leaves the
// same bytes; it never panics.
func TestCorruptSparseSameAsRedis(t *testing.T) {
	rc := hllRedis(t)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(21, 22))
	for trial := 0; trial < 600; trial++ {
		b := hll.New()
		for i := r.IntN(60); i > 0; i-- {
			b, _ = hll.Add(b, []byte(strconv.Itoa(r.IntN(1000))), hll.DefaultSparseMaxBytes)
		}
		body := len(b) - hll.HdrSize
		switch r.IntN(4) {
		case 0:
			b = b[:hll.HdrSize+r.IntN(body+1)]
		case 1:
			b[len(b)-1] = 0x40 | byte(r.IntN(64))
		case 2:
			b[hll.HdrSize+r.IntN(body)] = byte(r.IntN(256))
		default:
			for i := 1 + r.IntN(3); i > 0; i-- {
				b = append(b, byte(r.IntN(256)))
			}
		}
		key := "c" + strconv.Itoa(trial)
		require.NoError(t, rc.Set(ctx, key, b, 0).Err())
		for i := 1 + r.IntN(5); i > 0; i-- {
			ele := strconv.Itoa(r.IntN(100000))
			before := append([]byte(nil), b...)
			var res int
			b, res = hll.Add(b, []byte(ele), hll.DefaultSparseMaxBytes)
			got := strconv.Itoa(res)
			if res < 0 {
				got = "INVALIDOBJ Corrupted HLL object detected"
			}
			n, err := rc.PFAdd(ctx, key, ele).Result()
			want := strconv.FormatInt(n, 10)
			if err != nil {
				want = err.Error()
			}
			require.Equal(t, want, got, "trial %d: PFADD %s on %x", trial, ele, before)
			require.Equal(t, rc.Get(ctx, key).Val(), string(b), "trial %d: bytes after PFADD %s on %x", trial, ele, before)
			if endsInHalfXZero(b) {
				// Redis keeps the cut-off second byte past the string's
				// end, where the next PFADD reads it; a fresh SET makes it
				// the usual terminating zero again.
				require.NoError(t, rc.Set(ctx, key, b, 0).Err())
			}
		}
	}
}

// endsInHalfXZero reports whether a sparse body's last opcode is an XZERO
// missing its second byte.
func endsInHalfXZero(b []byte) bool {
	body := b[hll.HdrSize:]
	for i := 0; i < len(body); i++ {
		if body[i]&0xc0 == 0x40 { // XZERO opcode
			if i == len(body)-1 {
				return true
			}
			i++
		}
	}
	return false
}
