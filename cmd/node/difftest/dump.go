package difftest

import (
	"encoding/binary"
	"hash/crc64"
	"reflect"

	"github.com/slotd/slotd/actors/engine/rdb"
)

// DUMP payloads: <type><value><RDB version: 2 bytes><CRC64: 8 bytes>. A set
// or hash stored as a hashtable (RDB types 2 and 4) lists its elements in
// hashtable order, which is unspecified; every other payload is compared
// byte for byte.

// crcTable is Redis's CRC-64/Jones (reflected polynomial). Redis starts
// from 0 and does not invert; Go's crc64 does both, hence the ^ around it.
var crcTable = crc64.MakeTable(0x95ac9329ac4bc9b5)

func dumpCRC(b []byte) uint64 { return ^crc64.Update(^uint64(0), crcTable, b) }

// dumpValid reports whether a payload's CRC footer matches its contents.
func dumpValid(p string) bool {
	if len(p) < 10 {
		return false
	}
	body := []byte(p[:len(p)-8])
	return dumpCRC(body) == binary.LittleEndian.Uint64([]byte(p[len(p)-8:]))
}

// rdbLen reads an RDB length at b[i:]; enc reports the special string
// encodings (0xC0..0xC3), whose kind is returned as the length.
func rdbLen(b string, i int) (n uint64, next int, enc, ok bool) {
	if i >= len(b) {
		return 0, 0, false, false
	}
	c := b[i]
	switch c >> 6 {
	case 0:
		return uint64(c & 0x3f), i + 1, false, true
	case 1:
		if i+2 > len(b) {
			return 0, 0, false, false
		}
		return uint64(c&0x3f)<<8 | uint64(b[i+1]), i + 2, false, true
	case 3:
		return uint64(c & 0x3f), i + 1, true, true
	}
	switch c {
	case 0x80:
		if i+5 > len(b) {
			return 0, 0, false, false
		}
		return uint64(binary.BigEndian.Uint32([]byte(b[i+1 : i+5]))), i + 5, false, true
	case 0x81:
		if i+9 > len(b) {
			return 0, 0, false, false
		}
		return binary.BigEndian.Uint64([]byte(b[i+1 : i+9])), i + 9, false, true
	}
	return 0, 0, false, false
}

// rdbString returns the raw encoded bytes of the RDB string at b[i:].
func rdbString(b string, i int) (string, int, bool) {
	n, j, enc, ok := rdbLen(b, i)
	if !ok {
		return "", 0, false
	}
	if enc {
		switch n {
		case 0:
			j++
		case 1:
			j += 2
		case 2:
			j += 4
		case 3: // LZF: compressed length, uncompressed length, data
			clen, k, _, ok := rdbLen(b, j)
			if !ok {
				return "", 0, false
			}
			_, k, _, ok = rdbLen(b, k)
			if !ok {
				return "", 0, false
			}
			j = k + int(clen)
		default:
			return "", 0, false
		}
	} else {
		j += int(n)
	}
	if j > len(b) {
		return "", 0, false
	}
	return b[i:j], j, true
}

// dumpItems splits a type 2 (set) or 4 (hash) payload into its elements
// (hash: field+value pairs) as raw encoded strings.
func dumpItems(p string) ([]string, bool) {
	if len(p) < 11 {
		return nil, false
	}
	body := p[:len(p)-10]
	per := 1
	if body[0] == 4 {
		per = 2
	}
	n, i, enc, ok := rdbLen(body, 1)
	if !ok || enc {
		return nil, false
	}
	items := make([]string, 0, n)
	for k := uint64(0); k < n; k++ {
		it := ""
		for e := 0; e < per; e++ {
			s, j, ok := rdbString(body, i)
			if !ok {
				return nil, false
			}
			it += s
			i = j
		}
		items = append(items, it)
	}
	return items, i == len(body)
}

func dumpCmp(x *cmpIn) string {
	if x.a.Kind != '$' || x.b.Kind != '$' || x.a.Nil || x.b.Nil || len(x.b.Str) < 11 {
		return "replies differ"
	}
	a, b := x.a.Str, x.b.Str
	if !dumpValid(a) {
		return "the payload's CRC64 footer is wrong"
	}
	if a[0] == rdb.TypeStreamListpacks2 && b[0] == a[0] {
		return streamDumpCmp(a, b)
	}
	if a[0] != b[0] || (b[0] != 2 && b[0] != 4) || a[len(a)-10:len(a)-8] != b[len(b)-10:len(b)-8] {
		return "replies differ"
	}
	ia, okA := dumpItems(a)
	ib, okB := dumpItems(b)
	if !okA || !okB {
		return "replies differ (unparsable payload)"
	}
	if !sameMultiset(ia, ib) {
		return "different elements in the payload"
	}
	return ""
}

// lzfDecompress expands an LZF block (the format of RDB's compressed
// strings) into n bytes.
func lzfDecompress(in string, n int) (string, bool) {
	out := make([]byte, 0, n)
	for i := 0; i < len(in); {
		ctrl := int(in[i])
		i++
		if ctrl < 32 { // literal run
			if i+ctrl+1 > len(in) {
				return "", false
			}
			out = append(out, in[i:i+ctrl+1]...)
			i += ctrl + 1
			continue
		}
		length := ctrl >> 5
		if length == 7 {
			if i >= len(in) {
				return "", false
			}
			length += int(in[i])
			i++
		}
		if i >= len(in) {
			return "", false
		}
		ref := len(out) - (ctrl&0x1f)<<8 - int(in[i]) - 1
		i++
		if ref < 0 {
			return "", false
		}
		for k := 0; k < length+2; k++ {
			out = append(out, out[ref+k])
		}
	}
	return string(out), len(out) == n
}

// rdbStringValue decodes the raw bytes of an RDB string (plain or LZF).
func rdbStringValue(raw string) (string, bool) {
	n, i, enc, ok := rdbLen(raw, 0)
	if !ok {
		return "", false
	}
	if !enc {
		return raw[i:], true
	}
	if n != 3 {
		return "", false // integer encodings never hold an intset
	}
	clen, j, _, ok := rdbLen(raw, i)
	if !ok {
		return "", false
	}
	ulen, k, _, ok := rdbLen(raw, j)
	if !ok || k+int(clen) != len(raw) {
		return "", false
	}
	return lzfDecompress(raw[k:], int(ulen))
}

// dumpIntset decodes a type 11 (intset) payload: its integer width and
// members.
func dumpIntset(p string) (int, []int64, bool) {
	if len(p) < 11 || p[0] != 11 {
		return 0, nil, false
	}
	raw, end, ok := rdbString(p, 1)
	if !ok || end != len(p)-10 {
		return 0, nil, false
	}
	is, ok := rdbStringValue(raw)
	if !ok || len(is) < 8 {
		return 0, nil, false
	}
	width := int(binary.LittleEndian.Uint32([]byte(is[:4])))
	n := int(binary.LittleEndian.Uint32([]byte(is[4:8])))
	if (width != 2 && width != 4 && width != 8) || len(is) != 8+n*width {
		return 0, nil, false
	}
	vals := make([]int64, n)
	for i := range vals {
		b := []byte(is[8+i*width : 8+(i+1)*width])
		switch width {
		case 2:
			vals[i] = int64(int16(binary.LittleEndian.Uint16(b)))
		case 4:
			vals[i] = int64(int32(binary.LittleEndian.Uint32(b)))
		default:
			vals[i] = int64(binary.LittleEndian.Uint64(b))
		}
	}
	return width, vals, true
}

// streamDumpCmp compares two stream payloads field by field, leaving out
// the times in them (consumers' seen-time, pending entries' delivery
// time), which follow each server's clock.
func streamDumpCmp(a, b string) string {
	oa, errA := rdb.Decode([]byte(a))
	ob, errB := rdb.Decode([]byte(b))
	if errA != nil || errB != nil || oa.Stream == nil || ob.Stream == nil {
		return "replies differ (unparsable stream payload)"
	}
	untime := func(s *rdb.Stream) {
		for gi := range s.Groups {
			g := &s.Groups[gi]
			for i := range g.Pending {
				g.Pending[i].DeliveryTime = 0
			}
			for i := range g.Consumers {
				g.Consumers[i].SeenTime = 0
			}
		}
	}
	untime(oa.Stream)
	untime(ob.Stream)
	if !reflect.DeepEqual(oa.Stream, ob.Stream) {
		return "the stream payloads differ"
	}
	return ""
}
