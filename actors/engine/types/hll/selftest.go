package hll

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
)

// SelfTest is PFSELFTEST: it checks that dense registers read back what was
// written without disturbing their neighbours, then adds ten million
// distinct elements to a dense and a sparse sketch side by side, checking at
// each power of ten that small sketches stay sparse, that both encodings
// count alike and that the error stays within six standard errors. It
// returns "" on success or the TESTFAILED error text.
func SelfTest(rng *rand.Rand, sparseMax int64) string {
	dense := make([]byte, DenseSize)
	copy(dense, "HYLL")
	regs := dense[HdrSize:]
	var want [Registers]uint8
	for cycle := 0; cycle < 1000; cycle++ {
		for i := range want {
			want[i] = uint8(rng.Uint32() & RegMax)
			denseSet(regs, i, want[i])
		}
		for i := range want {
			if got := denseGet(regs, i); got != want[i] {
				return fmt.Sprintf("TESTFAILED Register %d should be %d but is %d", i, want[i], got)
			}
		}
	}

	clear(regs)
	sparse := New()
	relErr := 1.04 / math.Sqrt(Registers)
	checkpoint := int64(1)
	seed := rng.Uint64()
	var ele [8]byte
	for j := int64(1); j <= 10_000_000; j++ {
		binary.LittleEndian.PutUint64(ele[:], uint64(j)^seed)
		idx, count := PatLen(ele[:])
		denseRaise(regs, idx, count)
		sparse, _ = Set(sparse, idx, count, sparseMax)
		if j != checkpoint {
			continue
		}
		if j < sparseMax/2 && sparse[4] != Sparse {
			return "TESTFAILED sparse encoding not used"
		}
		dc, _ := Count(dense)
		sc, _ := Count(sparse)
		if dc != sc {
			return "TESTFAILED dense/sparse disagree"
		}
		absErr := checkpoint - int64(dc)
		maxErr := int64(math.Ceil(relErr * 6 * float64(checkpoint)))
		if j == 10 {
			maxErr = 1 // collisions make larger errors likely at 10
		}
		if absErr < 0 {
			absErr = -absErr
		}
		if absErr > maxErr {
			return fmt.Sprintf("TESTFAILED Too big error. card:%d abserr:%d", checkpoint, absErr)
		}
		checkpoint *= 10
	}
	return ""
}
