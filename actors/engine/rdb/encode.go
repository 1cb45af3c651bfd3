package rdb

import (
	"encoding/binary"
	"math"
	"slices"
)

// Object type bytes (RDB_TYPE_*), as Redis 7.0 numbers them.
const (
	TypeString           = 0
	TypeList             = 1
	TypeSet              = 2
	TypeZSet             = 3 // scores as text
	TypeHash             = 4
	TypeZSet2            = 5 // scores as binary doubles
	TypeModulePreGA      = 6
	TypeModule2          = 7
	TypeHashZipmap       = 9
	TypeListZiplist      = 10
	TypeSetIntset        = 11
	TypeZSetZiplist      = 12
	TypeHashZiplist      = 13
	TypeListQuicklist    = 14 // nodes are ziplists
	TypeStreamListpacks  = 15
	TypeHashListpack     = 16
	TypeZSetListpack     = 17
	TypeListQuicklist2   = 18 // nodes are listpacks or plain elements
	TypeStreamListpacks2 = 19
)

// Version is the RDB version Redis 7.0 writes; payloads of a later version
// are refused.
const Version = 10

// Quicklist node containers in a TypeListQuicklist2 value.
const (
	containerPlain  = 1
	containerPacked = 2
)

// Length and string encodings.
const (
	len6       = 0
	len14      = 1
	len32      = 0x80
	len64      = 0x81
	encVal     = 3 // top two bits 11: a special string encoding follows
	encInt8    = 0
	encInt16   = 1
	encInt32   = 2
	encLZF     = 3
	footerSize = 10 // version (2) + CRC-64 (8)
)

// Options are the settings that change how values are written.
type Options struct {
	// Compress is rdbcompression: strings longer than 20 bytes are stored
	// LZF-compressed when that saves at least four bytes.
	Compress bool
	// ListFill is list-max-listpack-size: how Redis splits a list into
	// quicklist nodes (negative: a size class, -2 = 8 KB; positive: at most
	// that many elements per node).
	ListFill int
}

// DefaultOptions are Redis 7.0's defaults.
var DefaultOptions = Options{Compress: true, ListFill: -2}

// Encoder builds one DUMP payload. Write the type with Type, the value with
// the other methods (in the order the type's format wants), then call
// Payload.
type Encoder struct {
	B   []byte
	Opt Options
}

// NewEncoder returns an encoder with the given options.
func NewEncoder(opt Options) *Encoder { return &Encoder{Opt: opt} }

// Type writes an object type byte.
func (e *Encoder) Type(t byte) { e.B = append(e.B, t) }

// Len writes a length.
func (e *Encoder) Len(n uint64) { e.B = AppendLen(e.B, n) }

// AppendLen appends n in RDB length encoding.
func AppendLen(b []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(b, byte(n))
	case n < 1<<14:
		return append(b, byte(n>>8)|len14<<6, byte(n))
	case n <= math.MaxUint32:
		b = append(b, len32)
		return binary.BigEndian.AppendUint32(b, uint32(n))
	}
	b = append(b, len64)
	return binary.BigEndian.AppendUint64(b, n)
}

// String writes s as an RDB string: integer-encoded when it is the
// canonical text of an integer that fits 32 bits (and at most 11 bytes),
// LZF-compressed when Compress is set, longer than 20 bytes and
// compressible, else as length and bytes.
func (e *Encoder) String(s string) { e.B = appendString(e.B, s, e.Opt.Compress) }

// Bytes is String for a byte slice.
func (e *Encoder) Bytes(s []byte) { e.B = appendString(e.B, s, e.Opt.Compress) }

func appendString[T ~string | ~[]byte](b []byte, s T, compress bool) []byte {
	if len(s) <= 11 {
		if v, ok := parseInt(s); ok {
			if out, ok := appendIntEncoded(b, v); ok {
				return out
			}
		}
	}
	if compress && len(s) > 20 {
		if out, ok := appendLZF(b, []byte(s)); ok {
			return out
		}
	}
	b = AppendLen(b, uint64(len(s)))
	return append(b, s...)
}

// appendIntEncoded writes v as an integer-encoded string if it fits 32 bits.
func appendIntEncoded(b []byte, v int64) ([]byte, bool) {
	switch {
	case v >= math.MinInt8 && v <= math.MaxInt8:
		return append(b, encVal<<6|encInt8, byte(v)), true
	case v >= math.MinInt16 && v <= math.MaxInt16:
		b = append(b, encVal<<6|encInt16)
		return binary.LittleEndian.AppendUint16(b, uint16(v)), true
	case v >= math.MinInt32 && v <= math.MaxInt32:
		b = append(b, encVal<<6|encInt32)
		return binary.LittleEndian.AppendUint32(b, uint32(v)), true
	}
	return b, false
}

// appendLZF writes in as an LZF-compressed string if that saves at least
// four bytes (Redis's rule), reporting whether it did.
func appendLZF(b, in []byte) ([]byte, bool) {
	if len(in) <= 4 {
		return b, false
	}
	// Compress after a maximal header and move it into place, so the
	// compressed bytes need no temporary buffer of their own.
	start := len(b)
	hdr := 1 + 9 + 9
	b = slices.Grow(b, hdr+len(in)+4)
	comp, ok := lzfCompress(b[:start+hdr], in, len(in)-4)
	if !ok {
		return b[:start], false
	}
	clen := len(comp) - start - hdr
	var h [19]byte
	hb := append(h[:0], encVal<<6|encLZF)
	hb = AppendLen(hb, uint64(clen))
	hb = AppendLen(hb, uint64(len(in)))
	copy(comp[start+len(hb):], comp[start+hdr:])
	copy(comp[start:], hb)
	return comp[:start+len(hb)+clen], true
}

// Double writes f as a binary double (little-endian IEEE 754), the score
// format of TypeZSet2.
func (e *Encoder) Double(f float64) {
	e.B = binary.LittleEndian.AppendUint64(e.B, math.Float64bits(f))
}

// Payload appends the footer (version and CRC-64) and returns the DUMP
// payload.
func (e *Encoder) Payload() []byte {
	e.B = binary.LittleEndian.AppendUint16(e.B, Version)
	e.B = binary.LittleEndian.AppendUint64(e.B, CRC64(0, e.B))
	return e.B
}

// Verify checks a payload's footer as RESTORE does: at least ten bytes, a
// version Redis 7.0 can read and a matching CRC-64.
func Verify(p []byte) bool {
	if len(p) < footerSize {
		return false
	}
	f := p[len(p)-footerSize:]
	if binary.LittleEndian.Uint16(f) > Version {
		return false
	}
	return binary.LittleEndian.Uint64(f[2:]) == CRC64(0, p[:len(p)-8])
}

// parseInt is Redis's string2ll: the text must be exactly the canonical
// decimal form of an int64 (no sign but '-', no leading zeros, no spaces,
// at most 20 bytes).
func parseInt[T ~string | ~[]byte](s T) (int64, bool) {
	n := len(s)
	if n == 0 || n > 20 {
		return 0, false
	}
	if n == 1 && s[0] == '0' {
		return 0, true
	}
	i, neg := 0, false
	if s[0] == '-' {
		neg, i = true, 1
		if n == 1 {
			return 0, false
		}
	}
	if s[i] < '1' || s[i] > '9' {
		return 0, false
	}
	var v uint64
	for ; i < n; i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}
