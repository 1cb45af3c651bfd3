package rdb

import (
	"errors"
	"sync"
)

// LZF, the compression RDB strings may use. The stream is a sequence of
// literal runs (a control byte 000LLLLL followed by L+1 bytes) and back
// references (LLLooooo oooooooo, or 111ooooo LLLLLLLL oooooooo when the
// length field is 7: copy L+2 bytes starting o+1 bytes back).
//
// The compressor makes the same choices as liblzf 3.6 as Redis builds it
// (16-bit hash table, the VERY_FAST variant, same hash and same output
// limits), so a DUMP of a compressible value is byte-identical to Redis's.
// Redis leaves its hash table uninitialized between calls, which in rare
// cases lets a stale slot produce a different (equally valid) match; this
// implementation always starts from an empty table.

const (
	lzfHashLog = 16
	lzfHashLen = 1 << lzfHashLog
	lzfMaxLit  = 1 << 5
	lzfMaxOff  = 1 << 13
	lzfMaxRef  = 1<<8 + 1<<3
)

// lzfTable maps a 3-byte hash to the last input position seen with it.
// Slots are stamped with the call's epoch so a pooled table needs no
// clearing between calls: a slot from an older epoch reads as empty.
type lzfTable struct {
	slot  [lzfHashLen]uint64 // epoch<<32 | position
	epoch uint32
}

var lzfTables = sync.Pool{New: func() any { return new(lzfTable) }}

func lzfIndex(h uint32) uint32 {
	return (h>>(3*8-lzfHashLog) - h*5) & (lzfHashLen - 1)
}

// lzfCompress compresses in into at most outLen bytes, appending to dst. It
// returns dst unchanged and false when the result would not fit.
func lzfCompress(dst, in []byte, outLen int) ([]byte, bool) {
	n := len(in)
	if n == 0 || outLen <= 0 {
		return dst, false
	}
	t := lzfTables.Get().(*lzfTable)
	defer lzfTables.Put(t)
	t.epoch++
	if t.epoch == 0 { // wrapped: old stamps could match again
		clear(t.slot[:])
		t.epoch = 1
	}
	stamp := uint64(t.epoch) << 32

	base := len(dst)
	// Room for the worst case the checks below allow, so writes stay in
	// bounds; the result is cut to its real length at the end.
	full := append(dst, make([]byte, outLen+4)...)
	out := full[base:]
	op := 1 // out[0] is reserved for the first literal run's control byte
	lit := 0
	ip := 0
	var hval uint32
	if n >= 2 {
		hval = uint32(in[0])<<8 | uint32(in[1])
	}
	for ip < n-2 {
		hval = hval<<8 | uint32(in[ip+2])
		h := lzfIndex(hval)
		ref := -1
		if s := t.slot[h]; s&^0xffffffff == stamp {
			ref = int(uint32(s))
		}
		t.slot[h] = stamp | uint64(ip)
		if ref > 0 && ip-ref-1 < lzfMaxOff &&
			in[ref+2] == in[ip+2] && in[ref] == in[ip] && in[ref+1] == in[ip+1] {
			off := ip - ref - 1
			l := 2
			maxLen := min(n-ip-l, lzfMaxRef)
			if op+3+1 >= outLen {
				undo := 0
				if lit == 0 {
					undo = 1
				}
				if op-undo+3+1 >= outLen {
					return dst, false
				}
			}
			out[op-lit-1] = byte(lit - 1) // close the literal run
			if lit == 0 {
				op-- // it was empty: drop its control byte
			}
			l = lzfMatchLen(in, ref, ip, l, maxLen)
			l -= 2
			ip++
			if l < 7 {
				out[op] = byte(off>>8 + l<<5)
				op++
			} else {
				out[op] = byte(off>>8 + 7<<5)
				out[op+1] = byte(l - 7)
				op += 2
			}
			out[op] = byte(off)
			op++
			lit = 0
			op++ // open a new literal run
			ip += l + 1
			if ip >= n-2 {
				break
			}
			// Hash the two positions before the new one, as VERY_FAST does.
			ip -= 2
			hval = uint32(in[ip])<<8 | uint32(in[ip+1])
			hval = hval<<8 | uint32(in[ip+2])
			t.slot[lzfIndex(hval)] = stamp | uint64(ip)
			ip++
			hval = hval<<8 | uint32(in[ip+2])
			t.slot[lzfIndex(hval)] = stamp | uint64(ip)
			ip++
			continue
		}
		if op >= outLen {
			return dst, false
		}
		lit++
		out[op] = in[ip]
		op++
		ip++
		if lit == lzfMaxLit {
			out[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	if op+3 > outLen {
		return dst, false
	}
	for ip < n {
		lit++
		out[op] = in[ip]
		op++
		ip++
		if lit == lzfMaxLit {
			out[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	out[op-lit-1] = byte(lit - 1)
	if lit == 0 {
		op--
	}
	return full[:base+op], true
}

// lzfMatchLen extends a match of l bytes at ip against ref. Like liblzf it
// first compares up to 16 more bytes without looking at maxLen (which is
// safe: it only does so when more than 16 bytes remain) and then goes on
// byte by byte while below maxLen; the resulting length may exceed maxLen
// by up to two, exactly as liblzf's.
func lzfMatchLen(in []byte, ref, ip, l, maxLen int) int {
	if maxLen > 16 {
		for range 16 {
			l++
			if in[ref+l] != in[ip+l] {
				return l
			}
		}
	}
	for {
		l++
		if l >= maxLen || in[ref+l] != in[ip+l] {
			return l
		}
	}
}

var errLZF = errors.New("rdb: invalid LZF data")

// lzfDecompress expands in, which must produce exactly n bytes.
func lzfDecompress(in []byte, n int) ([]byte, error) {
	// A back reference of 3 input bytes yields at most 264 output bytes:
	// anything claiming more is corrupt, and is refused before allocating.
	if n < 0 || n/lzfMaxRef > len(in) {
		return nil, errLZF
	}
	out := make([]byte, 0, min(n, 4*len(in)+64))
	for i := 0; i < len(in); {
		ctrl := int(in[i])
		i++
		if ctrl < 1<<5 {
			l := ctrl + 1
			if len(out)+l > n || i+l > len(in) {
				return nil, errLZF
			}
			out = append(out, in[i:i+l]...)
			i += l
			continue
		}
		l := ctrl >> 5
		if l == 7 {
			if i >= len(in) {
				return nil, errLZF
			}
			l += int(in[i])
			i++
		}
		if i >= len(in) {
			return nil, errLZF
		}
		ref := len(out) - (ctrl&0x1f)<<8 - 1 - int(in[i])
		i++
		l += 2
		if len(out)+l > n || ref < 0 {
			return nil, errLZF
		}
		// Byte by byte: the source may overlap the bytes being written.
		for k := 0; k < l; k++ {
			out = append(out, out[ref+k])
		}
	}
	if len(out) != n {
		return nil, errLZF
	}
	return out, nil
}
