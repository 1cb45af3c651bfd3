package rdb

import (
	"encoding/binary"
	"math/bits"
)

// jonesPoly is the CRC-64 polynomial Redis uses ("Jones"), in normal bit
// order. Redis runs it reflected, starting from 0 and with no final xor, so
// the check value of "123456789" is 0xe9c6d914c4b8d9ca.
const jonesPoly = 0xad93d23594c935a9

// crcTable holds the byte-at-a-time table (crcTable[0]) and the tables that
// let CRC64 consume eight bytes per step (slicing-by-8).
var crcTable = func() *[8][256]uint64 {
	var t [8][256]uint64
	poly := bits.Reverse64(jonesPoly)
	for i := range 256 {
		c := uint64(i)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ poly
			} else {
				c >>= 1
			}
		}
		t[0][i] = c
	}
	for i := range 256 {
		c := t[0][i]
		for k := 1; k < 8; k++ {
			c = t[0][c&0xff] ^ c>>8
			t[k][i] = c
		}
	}
	return &t
}()

// CRC64 continues crc over p (start with 0).
func CRC64(crc uint64, p []byte) uint64 {
	t := crcTable
	for len(p) >= 8 {
		crc ^= binary.LittleEndian.Uint64(p)
		crc = t[7][crc&0xff] ^ t[6][crc>>8&0xff] ^ t[5][crc>>16&0xff] ^ t[4][crc>>24&0xff] ^
			t[3][crc>>32&0xff] ^ t[2][crc>>40&0xff] ^ t[1][crc>>48&0xff] ^ t[0][crc>>56]
		p = p[8:]
	}
	for _, b := range p {
		crc = t[0][byte(crc)^b] ^ crc>>8
	}
	return crc
}
