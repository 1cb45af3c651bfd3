package rdb

import (
	"encoding/binary"
	"strconv"
)

// Ziplist, the compact encoding before listpacks (RDB types 10, 12, 13 and
// the nodes of type 14). Read-only here: Redis 7.0 never writes it. Header:
// total bytes (uint32), offset of the last entry (uint32), count (uint16,
// 65535 meaning "count them"); then entries, then 0xFF. An entry is the
// previous entry's size (1 byte, or 0xFE and a uint32), an encoding with
// the string length or integer type, and the data.

const zlHeaderSize = 10

// ziplistEach validates a ziplist as sanitize-dump-payload does and calls
// fn with each entry as text. The text may point into zl.
func ziplistEach(zl []byte, fn func(s []byte) error) (int, error) {
	if len(zl) < zlHeaderSize+1 || int(binary.LittleEndian.Uint32(zl)) != len(zl) || zl[len(zl)-1] != 0xff {
		return 0, errFormat("ziplist header")
	}
	tail := int(binary.LittleEndian.Uint32(zl[4:]))
	declared := int(binary.LittleEndian.Uint16(zl[8:]))
	if tail > len(zl)-1 {
		return 0, errFormat("ziplist tail")
	}
	end := len(zl) - 1
	count, prevSize, last := 0, 0, -1
	var num [20]byte
	for p := zlHeaderSize; ; {
		if p > end {
			return 0, errFormat("ziplist entry")
		}
		if zl[p] == 0xff {
			if p != end {
				return 0, errFormat("ziplist end")
			}
			break
		}
		q := p
		var prev int
		if zl[q] < 254 {
			prev = int(zl[q])
			q++
		} else {
			if q+5 > end {
				return 0, errFormat("ziplist entry")
			}
			prev = int(binary.LittleEndian.Uint32(zl[q+1:]))
			q += 5
		}
		if prev != prevSize {
			return 0, errFormat("ziplist prevlen")
		}
		if q >= end {
			return 0, errFormat("ziplist entry")
		}
		enc := zl[q]
		var val []byte
		var dataLen, encLen int
		isInt := false
		var iv int64
		switch {
		case enc>>6 == 0:
			encLen, dataLen = 1, int(enc&0x3f)
		case enc>>6 == 1:
			if q+2 > end {
				return 0, errFormat("ziplist entry")
			}
			encLen, dataLen = 2, int(enc&0x3f)<<8|int(zl[q+1])
		case enc>>6 == 2:
			if q+5 > end {
				return 0, errFormat("ziplist entry")
			}
			l := uint64(binary.BigEndian.Uint32(zl[q+1:]))
			if l > uint64(end) {
				return 0, errFormat("ziplist entry")
			}
			encLen, dataLen = 5, int(l)
		default:
			isInt = true
			encLen = 1
			switch enc {
			case 0xc0:
				dataLen = 2
			case 0xd0:
				dataLen = 4
			case 0xe0:
				dataLen = 8
			case 0xf0:
				dataLen = 3
			case 0xfe:
				dataLen = 1
			default:
				if enc < 0xf1 || enc > 0xfd {
					return 0, errFormat("ziplist encoding")
				}
				iv = int64(enc&0x0f) - 1
			}
		}
		data := q + encLen
		if data+dataLen > end {
			return 0, errFormat("ziplist entry")
		}
		if isInt {
			d := zl[data : data+dataLen]
			switch dataLen {
			case 1:
				iv = int64(int8(d[0]))
			case 2:
				iv = int64(int16(binary.LittleEndian.Uint16(d)))
			case 3:
				u := uint32(d[0]) | uint32(d[1])<<8 | uint32(d[2])<<16
				iv = int64(int32(u<<8) >> 8)
			case 4:
				iv = int64(int32(binary.LittleEndian.Uint32(d)))
			case 8:
				iv = int64(binary.LittleEndian.Uint64(d))
			}
			val = strconv.AppendInt(num[:0], iv, 10)
		} else {
			val = zl[data : data+dataLen]
		}
		if err := fn(val); err != nil {
			return 0, err
		}
		count++
		last = p
		prevSize = data + dataLen - p
		p = data + dataLen
	}
	if last >= 0 && last != tail {
		return 0, errFormat("ziplist tail")
	}
	if declared != 65535 && declared != count {
		return 0, errFormat("ziplist count")
	}
	return count, nil
}

// zipmapEach validates a zipmap (RDB type 9, hashes before Redis 2.6) and
// calls fn with each field and value. Layout: a count byte (254: unknown),
// then per pair a length, the field, a length, a free-space byte, the value
// and that much padding; then 0xFF. A length is one byte below 254, else
// 254 (or 255) and a little-endian uint32.
func zipmapEach(zm []byte, fn func(field, value []byte) error) error {
	if len(zm) < 2 || zm[len(zm)-1] != 0xff {
		return errFormat("zipmap header")
	}
	end := len(zm) - 1
	length := func(p int) (l, size int, ok bool) {
		if zm[p] < 254 {
			return int(zm[p]), 1, true
		}
		if p+5 > end {
			return 0, 0, false
		}
		return int(binary.LittleEndian.Uint32(zm[p+1:])), 5, true
	}
	count := 0
	p := 1
	for zm[p] != 0xff {
		kl, ks, ok := length(p)
		if !ok || kl > end-p-ks {
			return errFormat("zipmap entry")
		}
		field := zm[p+ks : p+ks+kl]
		p += ks + kl
		if p >= end {
			return errFormat("zipmap entry")
		}
		vl, vs, ok := length(p)
		if !ok || p+vs >= end {
			return errFormat("zipmap entry")
		}
		free := int(zm[p+vs])
		v := p + vs + 1
		if vl > end-v || free > end-v-vl {
			return errFormat("zipmap entry")
		}
		if err := fn(field, zm[v:v+vl]); err != nil {
			return err
		}
		count++
		p = v + vl + free
		if p > end {
			return errFormat("zipmap entry")
		}
	}
	if count == 0 || (zm[0] != 254 && int(zm[0]) != count) {
		return errFormat("zipmap count")
	}
	return nil
}
