// Package hll implements HyperLogLog sketches in Redis's exact byte
// representation, so a value built here is interchangeable with one built by
// redis-server (GET, DUMP/RESTORE, replication) and counts the same.
//
// A sketch is a string: a 16-byte header ("HYLL", the encoding byte, three
// unused bytes, and an 8-byte little-endian cached cardinality whose top bit
// marks it stale), followed by 16384 registers. The dense encoding packs the
// registers as 6-bit fields, least significant bits first (12288 bytes). The
// sparse encoding run-length codes them with three opcodes:
//
//	ZERO  00xxxxxx          1..64 zero registers
//	XZERO 01xxxxxx xxxxxxxx 1..16384 zero registers
//	VAL   1vvvvvxx          1..4 registers holding 1..32
//
// A sparse sketch becomes dense when a register needs a value above 32 or
// when an update would grow it past the sparse size limit
// (hll-sparse-max-bytes). The functions work on the raw bytes; those that
// may grow or replace them return the new slice.
package hll

import (
	"errors"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// Geometry of Redis's sketches.
const (
	P         = 14     // index bits
	Q         = 64 - P // bits left for the run of zeros
	Registers = 1 << P // 16384
	RegBits   = 6      // bits per dense register
	RegMax    = 1<<RegBits - 1
	HdrSize   = 16                            // magic, encoding, 3 unused, cached card
	DenseSize = HdrSize + Registers*RegBits/8 // 12304

	// Encodings (the header's fifth byte).
	Dense  = 0
	Sparse = 1

	// DefaultSparseMaxBytes is hll-sparse-max-bytes's default.
	DefaultSparseMaxBytes = 3000

	sparseValMaxValue = 32
	sparseValMaxLen   = 4
	sparseZeroMaxLen  = 64
	sparseXZeroMaxLen = 16384
)

// ErrCorrupt reports a sparse sketch whose opcodes do not cover exactly
// 16384 registers.
var ErrCorrupt = errors.New("hll: corrupted sparse representation")

// hashSeed is the MurmurHash64A seed Redis uses for elements.
const hashSeed = 0xadc83b19

// MurmurHash64A is Austin Appleby's 64-bit MurmurHash2 as Redis uses it
// (input read as little-endian words whatever the host byte order).
func MurmurHash64A(key []byte, seed uint64) uint64 {
	const m = 0xc6a4a7935bd1e995
	const r = 47
	h := seed ^ (uint64(len(key)) * m)
	for len(key) >= 8 {
		k := uint64(key[0]) | uint64(key[1])<<8 | uint64(key[2])<<16 | uint64(key[3])<<24 |
			uint64(key[4])<<32 | uint64(key[5])<<40 | uint64(key[6])<<48 | uint64(key[7])<<56
		k *= m
		k ^= k >> r
		k *= m
		h ^= k
		h *= m
		key = key[8:]
	}
	if len(key) > 0 {
		for i := len(key) - 1; i >= 0; i-- {
			h ^= uint64(key[i]) << (8 * uint(i))
		}
		h *= m
	}
	h ^= h >> r
	h *= m
	h ^= h >> r
	return h
}

// PatLen hashes ele and returns its register index and the length of the
// 0…01 run in the remaining hash bits (1..Q+1).
func PatLen(ele []byte) (index int, count uint8) {
	h := MurmurHash64A(ele, hashSeed)
	index = int(h & (Registers - 1))
	h >>= P
	h |= 1 << Q // bounds the run at Q+1
	return index, uint8(bits.TrailingZeros64(h) + 1)
}

// New returns an empty sketch: sparse, one XZERO covering every register,
// cached cardinality 0 (valid).
func New() []byte {
	b := make([]byte, HdrSize+2, HdrSize+16)
	copy(b, "HYLL")
	b[4] = Sparse
	putXZero(b[HdrSize:], sparseXZeroMaxLen) // one XZERO spans all 16384
	return b
}

// Valid reports whether b has the shape of a sketch (what Redis checks
// before touching a string as one): magic, a known encoding, and the exact
// dense length. Sparse opcodes are only checked when they are walked.
func Valid(b []byte) bool {
	if len(b) < HdrSize || string(b[:4]) != "HYLL" || b[4] > Sparse {
		return false
	}
	return b[4] != Dense || len(b) == DenseSize
}

// Encoding is Dense or Sparse (b must be Valid).
func Encoding(b []byte) byte { return b[4] }

// CachedCard returns the cached cardinality and whether it is current.
func CachedCard(b []byte) (uint64, bool) {
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[8+i])
	}
	return v, b[15]&0x80 == 0
}

// SetCachedCard stores card as the current cached cardinality.
func SetCachedCard(b []byte, card uint64) {
	for i := 0; i < 8; i++ {
		b[8+i] = byte(card >> (8 * i))
	}
}

// InvalidateCache marks the cached cardinality stale.
func InvalidateCache(b []byte) { b[15] |= 0x80 }

// denseGet reads register i of the packed registers regs.
func denseGet(regs []byte, i int) uint8 {
	pos := i * RegBits
	byt, fb := pos>>3, uint(pos&7)
	v := uint(regs[byt]) >> fb
	if fb > 8-RegBits && byt+1 < len(regs) {
		v |= uint(regs[byt+1]) << (8 - fb)
	}
	return uint8(v & RegMax)
}

// denseSet writes register i of regs.
func denseSet(regs []byte, i int, v uint8) {
	pos := i * RegBits
	byt, fb := pos>>3, uint(pos&7)
	regs[byt] = regs[byt]&^byte(RegMax<<fb) | byte(uint(v)<<fb)
	if fb > 8-RegBits {
		regs[byt+1] = regs[byt+1]&^byte(RegMax>>(8-fb)) | byte(uint(v)>>(8-fb))
	}
}

// denseRaise sets register i to v if v is larger; it reports a change.
func denseRaise(regs []byte, i int, v uint8) bool {
	if v > denseGet(regs, i) {
		denseSet(regs, i, v)
		return true
	}
	return false
}

// Sparse opcode helpers. p is the opcode's first byte.
func isZero(p byte) bool  { return p&0xc0 == 0 }
func isXZero(p byte) bool { return p&0xc0 == 0x40 }
func isVal(p byte) bool   { return p&0x80 != 0 }
func zeroLen(p byte) int  { return int(p&0x3f) + 1 }
func valValue(p byte) int { return int(p>>2&0x1f) + 1 }
func valLen(p byte) int   { return int(p&0x3) + 1 }
func xzeroLen(b []byte, i int) int {
	lo := 0
	if i+1 < len(b) {
		lo = int(b[i+1])
	}
	return (int(b[i]&0x3f)<<8 | lo) + 1
}
func valOp(val, n int) byte { return byte((val-1)<<2|(n-1)) | 0x80 }
func putXZero(p []byte, n int) {
	p[0] = byte((n-1)>>8) | 0x40
	p[1] = byte(n - 1)
}

// zeroRun appends the opcode for n zero registers.
func zeroRun(dst []byte, n int) []byte {
	if n > sparseZeroMaxLen {
		return append(dst, byte((n-1)>>8)|0x40, byte(n-1))
	}
	return append(dst, byte(n-1))
}

// sparseWalk calls fn(first, n, val) for each opcode run of a sparse body
// (val 0 for zero runs). fn returns false to stop.
func sparseWalk(body []byte, fn func(first, n, val int) bool) {
	idx := 0
	for i := 0; i < len(body); {
		p := body[i]
		var n, val int
		switch {
		case isZero(p):
			n = zeroLen(p)
			i++
		case isXZero(p):
			n = xzeroLen(body, i)
			i += 2
		default:
			n, val = valLen(p), valValue(p)
			i++
		}
		if !fn(idx, n, val) {
			return
		}
		idx += n
	}
}

// sparseRuns calls fn for each non-zero run of a sparse body after checking
// that the runs cover exactly the 16384 registers: a run reaching past the
// end, or a body that ends early, is ErrCorrupt (as redis-server 7.0.15
// with its security fixes answers) and fn sees nothing past the overflow.
func sparseRuns(body []byte, fn func(first, n, val int)) error {
	idx := 0
	var err error
	sparseWalk(body, func(first, n, val int) bool {
		if first+n > Registers {
			err = ErrCorrupt
			return false
		}
		if val != 0 {
			fn(first, n, val)
		}
		idx = first + n
		return true
	})
	if err == nil && idx != Registers {
		err = ErrCorrupt
	}
	return err
}

// ToDense converts a sparse sketch to dense (returning b itself when it is
// already dense). The header, cached cardinality included, is kept.
func ToDense(b []byte) ([]byte, error) {
	if b[4] == Dense {
		return b, nil
	}
	d := make([]byte, DenseSize)
	copy(d, b[:HdrSize])
	d[4] = Dense
	regs := d[HdrSize:]
	err := sparseRuns(b[HdrSize:], func(first, n, val int) {
		for j := first; j < first+n; j++ {
			denseSet(regs, j, uint8(val))
		}
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// Add hashes ele into sketch b. It returns the (possibly reallocated or
// promoted) sketch and 1 if a register changed, 0 if not, -1 if b is a
// corrupted sparse sketch. sparseMax is hll-sparse-max-bytes.
func Add(b, ele []byte, sparseMax int64) ([]byte, int) {
	index, count := PatLen(ele)
	return Set(b, index, count, sparseMax)
}

// Set raises register index to count if it is lower, with Add's results.
func Set(b []byte, index int, count uint8, sparseMax int64) ([]byte, int) {
	switch b[4] {
	case Dense:
		if denseRaise(b[HdrSize:], index, count) {
			return b, 1
		}
		return b, 0
	case Sparse:
		return sparseSet(b, index, count, sparseMax)
	}
	return b, -1
}

// sparseSet updates a sparse sketch in place when it can, splitting the
// run that holds the register as Redis does (so the bytes match) and
// promoting to dense when the value or the size no longer fits.
func sparseSet(b []byte, index int, count uint8, sparseMax int64) ([]byte, int) {
	if count > sparseValMaxValue {
		return promote(b, index, count)
	}
	body := b[HdrSize:]
	// Find the opcode covering index, and the one before it.
	first, span, p, prev := 0, 0, 0, -1
	for p < len(body) {
		op, oplen := body[p], 1
		switch {
		case isZero(op):
			span = zeroLen(op)
		case isVal(op):
			span = valLen(op)
		default:
			span = xzeroLen(body, p)
			oplen = 2
		}
		if index <= first+span-1 {
			break
		}
		prev = p
		p += oplen
		first += span
	}
	if span == 0 || p >= len(body) {
		return b, -1
	}
	op := body[p]
	oldLen := 1
	if isXZero(op) {
		oldLen = 2
	}
	switch {
	case isVal(op):
		if valValue(op) >= int(count) {
			return b, 0
		}
		if valLen(op) == 1 {
			body[p] = valOp(int(count), 1)
			return sparseUpdated(b, prev), 1
		}
	case isZero(op) && zeroLen(op) == 1:
		body[p] = valOp(int(count), 1)
		return sparseUpdated(b, prev), 1
	}

	// General case: split the run into up to three opcodes around index.
	var seqBuf [5]byte
	seq := seqBuf[:0]
	last := first + span - 1
	if isVal(op) {
		cur := valValue(op)
		if index != first {
			seq = append(seq, valOp(cur, index-first))
		}
		seq = append(seq, valOp(int(count), 1))
		if index != last {
			seq = append(seq, valOp(cur, last-index))
		}
	} else {
		if index != first {
			seq = zeroRun(seq, index-first)
		}
		seq = append(seq, valOp(int(count), 1))
		if index != last {
			seq = zeroRun(seq, last-index)
		}
	}
	delta := len(seq) - oldLen
	if delta > 0 && int64(len(b)+delta) > sparseMax {
		return promote(b, index, count)
	}
	pAbs := HdrSize + p
	if p+oldLen > len(body) {
		// A corrupted sketch ending in half an XZERO opcode (Redis read
		// its second byte from the string's terminator): Redis moves
		// nothing and copies the new opcodes over the end of a string
		// grown by delta, so their last byte falls outside it. (Redis
		// keeps that byte past the end, where its next PFADD may read it
		// as the second half again; here it reads 0, as after a SET.)
		nb := append(b[:pAbs:pAbs], seq...)
		return sparseUpdated(nb[:len(b)+delta], prev), 1
	}
	if delta > 0 {
		b = append(b, seq[:delta]...) // room; the tail is moved over it next
	}
	copy(b[pAbs+len(seq):], b[pAbs+oldLen:len(b)-max(delta, 0)])
	if delta < 0 {
		b = b[:len(b)+delta]
	}
	copy(b[pAbs:], seq)
	return sparseUpdated(b, prev), 1
}

// sparseUpdated merges adjacent VAL opcodes of equal value near the change
// (up to five opcodes from the one before it, as Redis does) and marks the
// cached cardinality stale.
func sparseUpdated(b []byte, prev int) []byte {
	p := HdrSize
	if prev >= 0 {
		p += prev
	}
	for scan := 5; p < len(b) && scan > 0; scan-- {
		op := b[p]
		if isXZero(op) {
			p += 2
			continue
		}
		if isZero(op) {
			p++
			continue
		}
		if p+1 < len(b) && isVal(b[p+1]) {
			v1, v2 := valValue(op), valValue(b[p+1])
			if n := valLen(op) + valLen(b[p+1]); v1 == v2 && n <= sparseValMaxLen {
				b[p+1] = valOp(v1, n)
				copy(b[p:], b[p+1:])
				b = b[:len(b)-1]
				continue // try to merge the result with its right neighbour
			}
		}
		p++
	}
	InvalidateCache(b)
	return b
}

// promote converts to dense and then sets the register, which must change.
func promote(b []byte, index int, count uint8) ([]byte, int) {
	d, err := ToDense(b)
	if err != nil {
		return b, -1
	}
	denseRaise(d[HdrSize:], index, count)
	return d, 1
}

// Merge raises each of regs to the matching register of sketch b.
func Merge(regs *[Registers]uint8, b []byte) error {
	if b[4] == Dense {
		src := b[HdrSize:]
		for i := range regs {
			if v := denseGet(src, i); v > regs[i] {
				regs[i] = v
			}
		}
		return nil
	}
	return sparseRuns(b[HdrSize:], func(first, n, val int) {
		for j := first; j < first+n; j++ {
			if uint8(val) > regs[j] {
				regs[j] = uint8(val)
			}
		}
	})
}

// Count estimates the cardinality of sketch b (ignoring the cache). It
// fails only for a corrupted sparse sketch.
func Count(b []byte) (uint64, error) {
	var h [64]int
	if b[4] == Dense {
		regs := b[HdrSize:]
		for i := 0; i < Registers; i++ {
			h[denseGet(regs, i)]++
		}
		return estimate(&h), nil
	}
	idx := 0
	sparseWalk(b[HdrSize:], func(first, n, val int) bool {
		h[val] += n
		idx = first + n
		return true
	})
	if idx != Registers {
		return 0, ErrCorrupt
	}
	return estimate(&h), nil
}

// CountRegisters estimates the cardinality of plain registers (the union
// built by Merge).
func CountRegisters(regs *[Registers]uint8) uint64 {
	var h [256]int
	for _, v := range regs {
		h[v]++
	}
	return estimate((*[64]int)(h[:64]))
}

// alphaInf is 0.5/ln(2), the bias constant of Ertl's estimator.
const alphaInf = 0.721347520444481703680

// estimate is Otmar Ertl's improved raw estimator ("New cardinality
// estimation algorithms for HyperLogLog sketches", arXiv:1702.01284) over
// the register histogram, in the same floating-point operation order as
// Redis so results are identical. Explicit float64 conversions keep the
// compiler from fusing multiply-adds.
func estimate(h *[64]int) uint64 {
	const m = float64(Registers)
	z := m * tau((m-float64(h[Q+1]))/m)
	for j := Q; j >= 1; j-- {
		z += float64(h[j])
		z *= 0.5
	}
	z += float64(m * sigma(float64(h[0])/m))
	return uint64(math.Round(float64(float64(alphaInf*m)*m) / z))
}

func sigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y, z := 1.0, x
	for {
		x *= x
		prev := z
		z += float64(x * y)
		y += y
		if prev == z {
			return z
		}
	}
}

func tau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y, z := 1.0, 1-x
	for {
		x = math.Sqrt(x)
		prev := z
		y *= 0.5
		d := 1 - x
		z -= float64(float64(d*d) * y)
		if prev == z {
			return z / 3
		}
	}
}

// DenseRegisters returns the 16384 registers of a dense sketch.
func DenseRegisters(b []byte) []uint8 {
	out := make([]uint8, Registers)
	for i := range out {
		out[i] = denseGet(b[HdrSize:], i)
	}
	return out
}

// Decode renders a sparse sketch's opcodes as PFDEBUG DECODE does:
// "z:<len>", "Z:<len>", "v:<value>,<len>" separated by spaces.
func Decode(b []byte) string {
	var sb strings.Builder
	body := b[HdrSize:]
	for i := 0; i < len(body); {
		if sb.Len() > 0 {
			sb.WriteByte(' ')
		}
		p := body[i]
		switch {
		case isZero(p):
			sb.WriteString("z:")
			sb.WriteString(strconv.Itoa(zeroLen(p)))
			i++
		case isXZero(p):
			sb.WriteString("Z:")
			sb.WriteString(strconv.Itoa(xzeroLen(body, i)))
			i += 2
		default:
			sb.WriteString("v:")
			sb.WriteString(strconv.Itoa(valValue(p)))
			sb.WriteByte(',')
			sb.WriteString(strconv.Itoa(valLen(p)))
			i++
		}
	}
	return sb.String()
}
