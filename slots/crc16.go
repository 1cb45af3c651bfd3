package slots

// crc16Poly is the CCITT polynomial x^16 + x^12 + x^5 + 1 in MSB-first form.
const crc16Poly = 0x1021

// crc16Tables drives a slicing-by-8 CRC16-XMODEM. crc16Tables[0][b] is the
// register value produced by feeding the single byte b into a zero register
// (the classic byte-at-a-time table); crc16Tables[k][b] is the register after
// b followed by k zero bytes. Because the CRC is linear and the register is
// only two bytes wide, eight input bytes can be folded in with eight lookups.
var crc16Tables = buildCRC16Tables()

func buildCRC16Tables() (t [8][256]uint16) {
	for b := range 256 {
		r := uint16(b) << 8
		for range 8 {
			if r&0x8000 != 0 {
				r = r<<1 ^ crc16Poly
			} else {
				r <<= 1
			}
		}
		t[0][b] = r
	}
	for k := 1; k < 8; k++ {
		for b := range 256 {
			r := t[k-1][b]
			t[k][b] = r<<8 ^ t[0][r>>8]
		}
	}
	return t
}

// CRC16 returns the CRC16-XMODEM checksum of b (polynomial 0x1021, initial
// value 0, no reflection, no final XOR): the checksum Redis Cluster uses for
// key hashing. CRC16([]byte("123456789")) == 0x31C3.
func CRC16(b []byte) uint16 {
	return crc16Of(b, 0, len(b))
}

// crc16Of computes the CRC16-XMODEM of key[lo:hi]. It is generic over string
// and []byte so that HashSlotString needs no conversion (and no allocation).
func crc16Of[T ~string | ~[]byte](key T, lo, hi int) uint16 {
	t := &crc16Tables
	var crc uint16
	i := lo
	for ; hi-i >= 8; i += 8 {
		crc = t[7][key[i]^byte(crc>>8)] ^ t[6][key[i+1]^byte(crc)] ^
			t[5][key[i+2]] ^ t[4][key[i+3]] ^
			t[3][key[i+4]] ^ t[2][key[i+5]] ^
			t[1][key[i+6]] ^ t[0][key[i+7]]
	}
	for ; i < hi; i++ {
		crc = crc<<8 ^ t[0][byte(crc>>8)^key[i]]
	}
	return crc
}
