package cmdtest_test

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// hllHdr builds a sketch header: encoding, then the 8 cached-card bytes.
func hllHdr(enc byte, card string) string {
	return "HYLL" + string([]byte{enc, 0, 0, 0}) + card
}

var (
	hllStale = "\x00\x00\x00\x00\x00\x00\x00\x80"
	hllFive  = "\x05\x00\x00\x00\x00\x00\x00\x00"
	// A sparse sketch covering 16383 registers instead of 16384.
	hllShort = hllHdr(1, hllStale) + "\x7f\xfe"
	// A sparse sketch with a valid cache whose body is corrupt.
	hllShortCached = hllHdr(1, hllFive) + "\x7f\xfe"
	// A sparse sketch covering too many registers (a VAL past the end).
	hllLong = hllHdr(1, hllStale) + "\x7f\xff\x80"
	// A hand-made sparse sketch: every opcode kind, registers up to 32.
	hllCrafted = hllHdr(1, hllStale) + "\x05\xfc\x40\x20\x83\x4f\x00" + "\x8c\x3f\x7f\xff"[:3] + "\x40\x00"
	// A dense sketch whose registers are all 63 (above what hashing yields).
	hllDense63 = hllHdr(0, hllStale) + strings.Repeat("\xff", 12288)
	// A dense sketch with registers 0, 1, 2, ... 63 repeating.
	hllDenseRamp = hllHdr(0, hllStale) + hllRamp()
)

// hllRamp packs registers i%64 as 6-bit fields, least significant first.
func hllRamp() string {
	b := make([]byte, 12288+1)
	for i := 0; i < 16384; i++ {
		v := uint(i % 64)
		pos := i * 6
		b[pos/8] |= byte(v << (pos % 8))
		b[pos/8+1] |= byte(v >> (8 - pos%8))
	}
	return string(b[:12288])
}

// hllScript exercises every HyperLogLog command, the stored bytes, the
// cached cardinality, hand-made and corrupted sketches, and the errors.
var hllScript = [][]string{
	{"PFADD", "{t}a"},
	{"GET", "{t}a"},
	{"PFADD", "{t}a"},
	{"PFCOUNT", "{t}a"},
	{"GET", "{t}a"},
	{"PFADD", "{t}a", "x", "y", "z"},
	{"PFADD", "{t}a", "x"},
	{"PFADD", "{t}a", "x", "w"},
	{"GET", "{t}a"},
	{"PFCOUNT", "{t}a"},
	{"GET", "{t}a"},
	{"PFCOUNT", "{t}a"},
	{"PFADD", "{t}b", "x", "1", "2", "3", "", "\x00", "a longer element than eight bytes"},
	{"PFCOUNT", "{t}a", "{t}b"},
	{"PFCOUNT", "{t}a", "{t}b", "{t}nokey"},
	{"PFCOUNT", "{t}nokey"},
	{"PFCOUNT", "{t}nokey", "{t}nokey2"},
	{"EXISTS", "{t}nokey"},
	{"GET", "{t}b"},
	{"PFMERGE", "{t}m", "{t}a", "{t}b"},
	{"GET", "{t}m"},
	{"PFCOUNT", "{t}m"},
	{"PFMERGE", "{t}m"},
	{"GET", "{t}m"},
	{"PFMERGE", "{t}new"},
	{"GET", "{t}new"},
	{"PFMERGE", "{t}new", "{t}nokey"},
	{"PFMERGE", "{t}a", "{t}a"},
	{"GET", "{t}a"},
	{"PFDEBUG", "ENCODING", "{t}a"},
	{"PFDEBUG", "decode", "{t}a"},
	{"PFDEBUG", "DECODE", "{t}new"},
	{"PFDEBUG", "TODENSE", "{t}a"},
	{"PFDEBUG", "TODENSE", "{t}a"},
	{"PFDEBUG", "encoding", "{t}a"},
	{"PFDEBUG", "DECODE", "{t}a"},
	{"GET", "{t}a"},
	{"PFCOUNT", "{t}a"},
	{"PFADD", "{t}a", "v"},
	{"PFCOUNT", "{t}a"},
	{"GET", "{t}a"},
	{"PFMERGE", "{t}m2", "{t}b", "{t}a"},
	{"PFDEBUG", "ENCODING", "{t}m2"},
	{"GET", "{t}m2"},
	{"PFDEBUG", "GETREG", "{t}b"},
	{"PFDEBUG", "ENCODING", "{t}b"},
	{"PFDEBUG", "GETREG", "{t}nokey"},
	{"PFDEBUG", "FOO", "{t}nokey"},
	{"PFDEBUG", "FOO", "{t}a"},
	{"PFDEBUG", "getreg\x00x", "{t}a"},
	{"PFDEBUG", "GETREG", "{t}a", "extra"},
	{"PFDEBUG", "GETREG"},
	{"PFSELFTEST"},
	{"PFSELFTEST", "x"},
	{"PFADD"},
	{"PFCOUNT"},
	{"PFMERGE"},

	// Hand-made and corrupted sketches.
	{"SET", "{t}c", hllCrafted},
	{"PFDEBUG", "DECODE", "{t}c"},
	{"PFCOUNT", "{t}c"},
	{"GET", "{t}c"},
	{"PFADD", "{t}c", "a", "b", "c", "d"},
	{"PFDEBUG", "DECODE", "{t}c"},
	{"PFMERGE", "{t}cm", "{t}c", "{t}b"},
	{"GET", "{t}cm"},
	{"PFDEBUG", "GETREG", "{t}c"},
	{"GET", "{t}c"},
	{"SET", "{t}bad", hllShort},
	{"PFDEBUG", "DECODE", "{t}bad"},
	{"PFCOUNT", "{t}bad"},
	{"PFCOUNT", "{t}bad", "{t}a"},
	{"PFMERGE", "{t}bm", "{t}bad"},
	{"EXISTS", "{t}bm"},
	{"PFDEBUG", "GETREG", "{t}bad"},
	{"PFDEBUG", "TODENSE", "{t}bad"},
	{"PFDEBUG", "ENCODING", "{t}bad"},
	{"PFADD", "{t}bad", "a"},
	{"PFADD", "{t}bad", "hello"},
	{"GET", "{t}bad"},
	{"SET", "{t}bad", hllShortCached},
	{"PFCOUNT", "{t}bad"},
	{"SET", "{t}bad", hllLong},
	{"PFCOUNT", "{t}bad"},
	{"PFCOUNT", "{t}bad", "{t}bad"},
	{"PFDEBUG", "TODENSE", "{t}bad"},
	{"PFADD", "{t}bad", "a"},
	{"GET", "{t}bad"},
	{"SET", "{t}bad", hllHdr(1, hllStale)},
	{"PFCOUNT", "{t}bad"},
	{"PFADD", "{t}bad", "a"},
	{"PFADD", "{t}bad"},
	{"PFDEBUG", "DECODE", "{t}bad"},
	{"SET", "{t}d63", hllDense63},
	{"PFCOUNT", "{t}d63"},
	{"PFCOUNT", "{t}d63", "{t}a"},
	{"PFADD", "{t}d63", "x"},
	{"SET", "{t}ramp", hllDenseRamp},
	{"PFCOUNT", "{t}ramp"},
	{"GET", "{t}ramp"},
	{"PFMERGE", "{t}rm", "{t}b", "{t}ramp"},
	{"PFCOUNT", "{t}rm"},

	// Not sketches.
	{"SET", "{t}s", "hello"},
	{"PFADD", "{t}s", "a"},
	{"PFCOUNT", "{t}s"},
	{"PFCOUNT", "{t}a", "{t}s"},
	{"PFMERGE", "{t}s", "{t}a"},
	{"PFMERGE", "{t}a", "{t}s"},
	{"PFDEBUG", "ENCODING", "{t}s"},
	{"PFDEBUG", "FOO", "{t}s"},
	{"SET", "{t}s", hllHdr(2, hllStale) + "\x7f\xff"},
	{"PFCOUNT", "{t}s"},
	{"SET", "{t}s", hllHdr(0, hllStale) + "\x7f\xff"},
	{"PFCOUNT", "{t}s"},
	{"SET", "{t}s", "HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"},
	{"PFADD", "{t}s"},
	{"SET", "{t}s", "HYLx\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xff"},
	{"PFADD", "{t}s"},
	{"SET", "{t}s", "1234567890123456789"},
	{"PFCOUNT", "{t}s"},
	{"LPUSH", "{t}list", "x"},
	{"PFADD", "{t}list", "a"},
	{"PFCOUNT", "{t}list"},
	{"PFCOUNT", "{t}list", "{t}a"},
	{"PFMERGE", "{t}list", "{t}a"},
	{"PFMERGE", "{t}a", "{t}list"},
	{"PFDEBUG", "ENCODING", "{t}list"},

	// What WATCH sees: PFADD that changes nothing and PFMERGE's sources
	// stay clean; PFCOUNT refreshing the cache dirties the key.
	{"PFADD", "{t}w", "a", "b"},
	{"PFCOUNT", "{t}w"},
	{"WATCH", "{t}w"},
	{"PFADD", "{t}w", "a"},
	{"PFCOUNT", "{t}w"},
	{"PFMERGE", "{t}wd", "{t}w"},
	{"PFDEBUG", "ENCODING", "{t}w"},
	{"MULTI"},
	{"PFCOUNT", "{t}w"},
	{"EXEC"},
	{"WATCH", "{t}w"},
	{"PFADD", "{t}w", "c"},
	{"MULTI"},
	{"PFCOUNT", "{t}w"},
	{"EXEC"},
	{"WATCH", "{t}w"},
	{"PFCOUNT", "{t}w"},
	{"MULTI"},
	{"PFCOUNT", "{t}w"},
	{"EXEC"},
	{"WATCH", "{t}wd"},
	{"PFMERGE", "{t}wd"},
	{"MULTI"},
	{"PFCOUNT", "{t}w"},
	{"EXEC"},
	{"WATCH", "{t}w"},
	{"PFDEBUG", "TODENSE", "{t}w"},
	{"MULTI"},
	{"PFCOUNT", "{t}w"},
	{"EXEC"},
}

// hllRandomScript adds random sets of sizes 0..200k (duplicates
// included, in batches of up to 1000 elements per PFADD), then compares
// the stored bytes (sparse and dense), single-key and union counts, and
// PFMERGE results, first with the default hll-sparse-max-bytes and then
// with a smaller one.
func hllRandomScript(seed uint64) [][]string {
	r := rand.New(rand.NewPCG(seed, 77))
	sizes := []int{0, 1, 3, 10, 40, 100, 250, 500, 800, 1200, 1700, 2500, 4000, 9000, 30000, 200000}
	var out [][]string
	addSets := func(prefix string) []string {
		var keys []string
		for _, size := range sizes {
			key := "{t}" + prefix + strconv.Itoa(size)
			keys = append(keys, key)
			out = append(out, []string{"PFADD", key})
			batch := []string{"PFADD", key}
			universe := uint64(size)*2 + 1
			for i := 0; i < size; i++ {
				var ele string
				switch r.IntN(3) {
				case 0:
					ele = strconv.FormatUint(r.Uint64N(universe), 10)
				case 1:
					ele = "e:" + strconv.FormatUint(r.Uint64N(universe), 36)
				default:
					b := make([]byte, r.IntN(20))
					for j := range b {
						b[j] = byte(r.IntN(256))
					}
					ele = string(b)
				}
				batch = append(batch, ele)
				if len(batch) == 1002 || i == size-1 {
					out = append(out, batch)
					batch = []string{"PFADD", key}
				}
			}
			out = append(out,
				[]string{"PFDEBUG", "ENCODING", key},
				[]string{"GET", key},
				[]string{"PFCOUNT", key},
				[]string{"GET", key},
			)
		}
		for i := 0; i < 12; i++ {
			n := 2 + r.IntN(4)
			cmd := []string{"PFCOUNT"}
			merge := []string{"PFMERGE", "{t}" + prefix + "m" + strconv.Itoa(i)}
			for j := 0; j < n; j++ {
				k := keys[r.IntN(len(keys))]
				cmd = append(cmd, k)
				merge = append(merge, k)
			}
			out = append(out, cmd, merge, []string{"GET", merge[1]}, []string{"PFCOUNT", merge[1]})
		}
		// Merging into an existing sparse destination keeps its layout.
		out = append(out,
			[]string{"PFMERGE", keys[4], keys[3], keys[5]},
			[]string{"GET", keys[4]},
			[]string{"PFDEBUG", "GETREG", keys[len(keys)-1]},
		)
		return keys
	}
	addSets("p")
	out = append(out, []string{"CONFIG", "SET", "hll-sparse-max-bytes", "300"})
	addSets("q")
	out = append(out, []string{"CONFIG", "SET", "hll-sparse-max-bytes", "3000"})
	return out
}

// TestHyperLogLogSameAsRedis compares every HyperLogLog command with
// redis-server, byte for byte (replies and stored sketches), in RESP2 and
// RESP3.
func TestHyperLogLogSameAsRedis(t *testing.T) {
	script := append(append([][]string{}, hllScript...), hllRandomScript(1)...)
	sameAsRedis(t, "{t}", script)
}

// hllCraftedScript stores random hand-made sparse sketches (any mix of
// ZERO, XZERO and VAL opcodes, unmerged neighbours, sometimes covering too
// few or too many registers, sometimes with a valid cache) and then adds
// to, counts, merges and converts them: the in-place edits of odd layouts
// must produce Redis's bytes and errors.
func hllCraftedScript(seed uint64, n int) [][]string {
	r := rand.New(rand.NewPCG(seed, 55))
	var out [][]string
	for i := 0; i < n; i++ {
		body := []byte{}
		left := 16384
		switch r.IntN(10) {
		case 0:
			left -= 1 + r.IntN(100) // too few registers
		case 1:
			left += 1 + r.IntN(100) // too many
		}
		for left > 0 {
			switch k := r.IntN(10); {
			case k < 3:
				run := min(left, 1+r.IntN(64))
				body = append(body, byte(run-1))
				left -= run
			case k < 5:
				run := min(left, 1+r.IntN(3000))
				body = append(body, byte((run-1)>>8)|0x40, byte(run-1))
				left -= run
			default:
				run := min(left, 1+r.IntN(4))
				body = append(body, 0x80|byte(r.IntN(32))<<2|byte(run-1))
				left -= run
			}
		}
		card := hllStale
		if r.IntN(4) == 0 {
			card = hllFive
		}
		key := "{t}k" + strconv.Itoa(i%5)
		out = append(out, []string{"SET", key, hllHdr(1, card) + string(body)})
		for j := r.IntN(4); j > 0; j-- {
			switch r.IntN(6) {
			case 0, 1:
				add := []string{"PFADD", key}
				for e := r.IntN(30); e > 0; e-- {
					add = append(add, strconv.Itoa(r.IntN(100000)))
				}
				out = append(out, add)
			case 2:
				out = append(out, []string{"PFCOUNT", key})
			case 3:
				out = append(out, []string{"PFCOUNT", key, "{t}k" + strconv.Itoa(r.IntN(5))})
			case 4:
				out = append(out, []string{"PFMERGE", key, "{t}k" + strconv.Itoa(r.IntN(5))})
			default:
				out = append(out, []string{"PFDEBUG", []string{"TODENSE", "DECODE", "ENCODING"}[r.IntN(3)], key})
			}
		}
		out = append(out, []string{"GET", key})
	}
	return out
}

// TestHyperLogLogCraftedSameAsRedis runs hllCraftedScript on both servers,
// once with a small hll-sparse-max-bytes so edits also promote.
func TestHyperLogLogCraftedSameAsRedis(t *testing.T) {
	script := hllCraftedScript(1, 300)
	script = append(script, []string{"CONFIG", "SET", "hll-sparse-max-bytes", "200"})
	script = append(script, hllCraftedScript(2, 300)...)
	sameAsRedis(t, "{t}", script)
}
