package hll

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startRedis runs a redis-server on a free loopback port for the test, or
// skips the test when none is installed.
func startRedis(t *testing.T) *redis.Client {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not installed")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	dir := t.TempDir()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", dir, "--logfile", filepath.Join(dir, "redis.log"))
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	rc := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), MaxRetries: -1})
	t.Cleanup(func() { _ = rc.Close() })
	deadline := time.Now().Add(10 * time.Second)
	for rc.Ping(context.Background()).Err() != nil {
		require.True(t, time.Now().Before(deadline), "redis-server did not start")
		time.Sleep(5 * time.Millisecond)
	}
	return rc
}

// TestSameBytesAsRedis builds sketches of random sets here and in
// redis-server with the same additions in the same order, and requires the
// same value bytes (sparse and dense, cache flag included) and counts.
func TestSameBytesAsRedis(t *testing.T) {
	rc := startRedis(t)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(9, 10))
	sizes := []int{0, 1, 2, 5, 10, 50, 100, 300, 700, 1000, 1500, 2000, 3000, 5000, 20000, 200000}
	for _, size := range sizes {
		key := fmt.Sprintf("h%d", size)
		b := New()
		pipe := rc.Pipeline()
		pipe.PFAdd(ctx, key)
		batch := []any{}
		for i := 0; i < size; i++ {
			ele := strconv.FormatUint(r.Uint64N(uint64(size)*4+1), 36) // duplicates included
			b, _ = Add(b, []byte(ele), DefaultSparseMaxBytes)
			batch = append(batch, ele)
			if len(batch) == 1000 || i == size-1 {
				pipe.PFAdd(ctx, key, batch...)
				batch = batch[:0]
			}
		}
		InvalidateCache(b) // PFADD creating the key marks the cache stale
		get := pipe.Get(ctx, key)
		_, err := pipe.Exec(ctx)
		require.NoError(t, err)
		require.Equal(t, get.Val(), string(b), "size %d (encoding %d)", size, b[4])

		n, err := Count(b)
		require.NoError(t, err)
		want, err := rc.PFCount(ctx, key).Result()
		require.NoError(t, err)
		assert.Equal(t, uint64(want), n, "PFCOUNT size %d", size)
		SetCachedCard(b, n)
		assert.Equal(t, rc.Get(ctx, key).Val(), string(b), "cached cardinality bytes, size %d", size)
	}

	// Unions of several sketches, and PFMERGE's register-by-register
	// build of a sparse destination.
	keys := []string{"h100", "h300", "h1000"}
	var regs [Registers]uint8
	for _, k := range keys {
		v, err := rc.Get(ctx, k).Bytes()
		require.NoError(t, err)
		require.NoError(t, Merge(&regs, v))
	}
	want, err := rc.PFCount(ctx, keys...).Result()
	require.NoError(t, err)
	assert.Equal(t, uint64(want), CountRegisters(&regs))
	require.NoError(t, rc.PFMerge(ctx, "m", keys...).Err())
	m := New()
	for i, v := range regs {
		if v != 0 {
			m, _ = Set(m, i, v, DefaultSparseMaxBytes)
		}
	}
	InvalidateCache(m)
	assert.Equal(t, rc.Get(ctx, "m").Val(), string(m))
}

// TestEstimatorSameAsRedis stores dense sketches with random register
// histograms (every value 0..63, skewed in many ways) in redis-server and
// requires PFCOUNT to match the estimate here exactly: the floating-point
// steps must be the same.
func TestEstimatorSameAsRedis(t *testing.T) {
	rc := startRedis(t)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(11, 12))
	const n = 300
	sketches := make([][]byte, n)
	pipe := rc.Pipeline()
	cmds := make([]*redis.IntCmd, n)
	for i := range sketches {
		d := make([]byte, DenseSize)
		copy(d, "HYLL")
		InvalidateCache(d)
		zeroFrac := r.Float64() * r.Float64()
		scale := 1 + r.IntN(40)
		for j := 0; j < Registers; j++ {
			if r.Float64() < zeroFrac {
				continue
			}
			v := 1 + int(r.ExpFloat64()*float64(scale)/4)
			if r.IntN(1000) == 0 {
				v = r.IntN(64)
			}
			denseSet(d[HdrSize:], j, uint8(min(v, 63)))
		}
		sketches[i] = d
		key := "e" + strconv.Itoa(i)
		pipe.Set(ctx, key, d, 0)
		cmds[i] = pipe.PFCount(ctx, key)
	}
	_, err := pipe.Exec(ctx)
	require.NoError(t, err)
	for i, d := range sketches {
		got, err := Count(d)
		require.NoError(t, err)
		assert.Equal(t, uint64(cmds[i].Val()), got, "sketch %d", i)
	}
}

// TestCorruptSparseSameAsRedis: PFADD on sparse sketches whose bytes were
// damaged (truncated, a final XZERO cut in half, bytes overwritten or
// appended) gives Redis's reply, an update or INVALIDOBJ, and leaves the
// same bytes; it never panics.
func TestCorruptSparseSameAsRedis(t *testing.T) {
	rc := startRedis(t)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(21, 22))
	for trial := 0; trial < 600; trial++ {
		b := New()
		for i := r.IntN(60); i > 0; i-- {
			b, _ = Add(b, []byte(strconv.Itoa(r.IntN(1000))), DefaultSparseMaxBytes)
		}
		body := len(b) - HdrSize
		switch r.IntN(4) {
		case 0:
			b = b[:HdrSize+r.IntN(body+1)]
		case 1:
			b[len(b)-1] = 0x40 | byte(r.IntN(64))
		case 2:
			b[HdrSize+r.IntN(body)] = byte(r.IntN(256))
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
			b, res = Add(b, []byte(ele), DefaultSparseMaxBytes)
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
	body := b[HdrSize:]
	for i := 0; i < len(body); i++ {
		if isXZero(body[i]) {
			if i == len(body)-1 {
				return true
			}
			i++
		}
	}
	return false
}
