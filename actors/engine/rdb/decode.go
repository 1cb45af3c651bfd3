package rdb

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"
)

// FormatError reports a payload Redis would refuse with "Bad data format".
type FormatError struct{ What string }

func (e *FormatError) Error() string { return "rdb: bad " + e.What }

func errFormat(what string) error { return &FormatError{What: what} }

// ErrUnsupported is returned for value types slotd does not implement
// (modules).
var ErrUnsupported = errors.New("rdb: unsupported value type")

// Kind is the logical type of a decoded value.
type Kind uint8

// Value kinds.
const (
	KindString Kind = iota
	KindList
	KindSet
	KindZSet
	KindHash
	KindStream
)

// Object is a decoded value. Its strings are copies: it does not point into
// the payload.
type Object struct {
	// Type is the RDB type byte the value was stored with; it says which
	// encoding Redis would have restored it into (see Packed).
	Type byte
	Kind Kind
	// Str is a string value.
	Str []byte
	// Elems are a list's elements in order, a set's members (unless Ints),
	// a hash's fields and values interleaved, or a sorted set's members.
	Elems []string
	// Ints are the members of a set stored as an intset, ascending.
	Ints []int64
	// IntsetWidth is that intset's integer width in bytes.
	IntsetWidth int
	// Scores are a sorted set's scores, parallel to Elems.
	Scores []float64
	// Stream is a stream value.
	Stream *Stream
}

// Packed reports whether the value came in a compact encoding (listpack,
// ziplist, zipmap, intset), which decides the encoding Redis gives the
// restored value.
func (o *Object) Packed() bool {
	switch o.Type {
	case TypeHashZipmap, TypeSetIntset, TypeZSetZiplist, TypeHashZiplist, TypeHashListpack, TypeZSetListpack:
		return true
	}
	return false
}

// Len is the number of elements (members, fields, list items) of a
// non-string value.
func (o *Object) Len() int {
	switch {
	case o.Kind == KindHash:
		return len(o.Elems) / 2
	case o.Ints != nil:
		return len(o.Ints)
	}
	return len(o.Elems)
}

// reader walks a payload.
type reader struct {
	b []byte
	p int
}

var errShort = errFormat("payload: truncated")

func (r *reader) next() (byte, error) {
	if r.p >= len(r.b) {
		return 0, errShort
	}
	c := r.b[r.p]
	r.p++
	return c, nil
}

func (r *reader) take(n uint64) ([]byte, error) {
	if n > uint64(len(r.b)-r.p) {
		return nil, errShort
	}
	s := r.b[r.p : r.p+int(n)]
	r.p += int(n)
	return s, nil
}

// length reads an RDB length, or (special set) a string encoding number.
func (r *reader) length() (n uint64, special bool, err error) {
	c, err := r.next()
	if err != nil {
		return 0, false, err
	}
	switch c >> 6 {
	case len6:
		return uint64(c & 0x3f), false, nil
	case len14:
		d, err := r.next()
		return uint64(c&0x3f)<<8 | uint64(d), false, err
	case encVal:
		return uint64(c & 0x3f), true, nil
	}
	switch c {
	case len32:
		b, err := r.take(4)
		if err != nil {
			return 0, false, err
		}
		return uint64(binary.BigEndian.Uint32(b)), false, nil
	case len64:
		b, err := r.take(8)
		if err != nil {
			return 0, false, err
		}
		return binary.BigEndian.Uint64(b), false, nil
	}
	return 0, false, errFormat("length encoding")
}

// count reads an element count. Every element takes at least one byte, so a
// count above the bytes left is corrupt; refusing it early bounds the
// allocations a hostile payload can cause.
func (r *reader) count() (int, error) {
	n, special, err := r.length()
	if err != nil {
		return 0, err
	}
	if special || n > uint64(len(r.b)-r.p) {
		return 0, errFormat("length")
	}
	return int(n), nil
}

// str reads a string in any of its encodings. The result may point into
// the payload.
func (r *reader) str() ([]byte, error) {
	n, special, err := r.length()
	if err != nil {
		return nil, err
	}
	if !special {
		return r.take(n)
	}
	switch n {
	case encInt8:
		b, err := r.take(1)
		if err != nil {
			return nil, err
		}
		return strconv.AppendInt(nil, int64(int8(b[0])), 10), nil
	case encInt16:
		b, err := r.take(2)
		if err != nil {
			return nil, err
		}
		return strconv.AppendInt(nil, int64(int16(binary.LittleEndian.Uint16(b))), 10), nil
	case encInt32:
		b, err := r.take(4)
		if err != nil {
			return nil, err
		}
		return strconv.AppendInt(nil, int64(int32(binary.LittleEndian.Uint32(b))), 10), nil
	case encLZF:
		clen, s1, err := r.length()
		if err != nil {
			return nil, err
		}
		ulen, s2, err := r.length()
		if err != nil {
			return nil, err
		}
		if s1 || s2 || ulen > math.MaxInt32*8 {
			return nil, errFormat("LZF header")
		}
		c, err := r.take(clen)
		if err != nil {
			return nil, err
		}
		if ulen == 0 {
			return []byte{}, nil // what Redis's decompressor yields for a 0-byte target
		}
		return lzfDecompress(c, int(ulen))
	}
	return nil, errFormat("string encoding")
}

// text reads a string and copies it.
func (r *reader) text() (string, error) {
	b, err := r.str()
	return string(b), err
}

// binaryDouble reads a little-endian IEEE 754 double.
func (r *reader) binaryDouble() (float64, error) {
	b, err := r.take(8)
	if err != nil {
		return 0, err
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b)), nil
}

// textDouble reads the old score format: a length byte (253 NaN, 254 +inf,
// 255 -inf) and that many bytes of decimal text.
func (r *reader) textDouble() (float64, error) {
	n, err := r.next()
	if err != nil {
		return 0, err
	}
	switch n {
	case 253:
		return math.NaN(), nil
	case 254:
		return math.Inf(1), nil
	case 255:
		return math.Inf(-1), nil
	}
	b, err := r.take(uint64(n))
	if err != nil {
		return 0, err
	}
	f, ok := parseScore(b)
	if !ok {
		return 0, errFormat("double")
	}
	return f, nil
}

// parseScore reads a score stored as text (listpack and ziplist entries,
// old-style doubles).
func parseScore(b []byte) (float64, bool) {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
			return f, true // ±inf or 0, as strtod gives
		}
		return 0, false
	}
	return f, true
}

// Decode reads the value at the start of a DUMP payload (the footer is not
// checked: see Verify). Bytes after the value are ignored, as RESTORE
// ignores them.
func Decode(payload []byte) (*Object, error) {
	return (&reader{b: payload}).object()
}

// object reads one value: its type byte and its serialization.
func (r *reader) object() (*Object, error) {
	t, err := r.next()
	if err != nil {
		return nil, err
	}
	return r.typed(t)
}

// typed reads the serialization of a value of type t.
func (r *reader) typed(t byte) (*Object, error) {
	var err error
	o := &Object{Type: t}
	switch t {
	case TypeString:
		o.Kind = KindString
		s, err := r.str()
		if err != nil {
			return nil, err
		}
		o.Str = append(make([]byte, 0, len(s)), s...)
		return o, nil
	case TypeList, TypeSet:
		o.Kind = KindList
		if t == TypeSet {
			o.Kind = KindSet
		}
		err = r.strings(o, 1)
	case TypeHash:
		o.Kind = KindHash
		err = r.strings(o, 2)
	case TypeZSet, TypeZSet2:
		o.Kind = KindZSet
		err = r.zset(o, t == TypeZSet2)
	case TypeListQuicklist, TypeListQuicklist2:
		o.Kind = KindList
		err = r.quicklist(o, t == TypeListQuicklist2)
	case TypeListZiplist:
		o.Kind = KindList
		err = r.blob(o, ziplistEach, 1)
	case TypeSetIntset:
		o.Kind = KindSet
		var b []byte
		if b, err = r.str(); err == nil {
			o.Ints, err = intsetValues(b)
			if err == nil {
				o.IntsetWidth = int(binary.LittleEndian.Uint32(b))
			}
		}
	case TypeZSetZiplist, TypeZSetListpack:
		o.Kind = KindZSet
		each := listpackEach
		if t == TypeZSetZiplist {
			each = ziplistEach
		}
		err = r.blob(o, each, 2)
		if err == nil {
			err = o.splitScores()
		}
	case TypeHashZiplist, TypeHashListpack:
		o.Kind = KindHash
		each := listpackEach
		if t == TypeHashZiplist {
			each = ziplistEach
		}
		err = r.blob(o, each, 2)
	case TypeHashZipmap:
		o.Kind = KindHash
		var b []byte
		if b, err = r.str(); err == nil {
			err = zipmapEach(b, func(f, v []byte) error {
				o.Elems = append(o.Elems, string(f), string(v))
				return nil
			})
		}
	case TypeStreamListpacks, TypeStreamListpacks2:
		o.Kind = KindStream
		if err := r.stream(o, t == TypeStreamListpacks2); err != nil {
			return nil, err
		}
		return o, nil // an empty stream is a valid value
	case TypeModulePreGA, TypeModule2:
		return nil, ErrUnsupported
	default:
		return nil, errFormat("object type")
	}
	if err != nil {
		return nil, err
	}
	if o.Len() == 0 {
		return nil, errFormat("empty value")
	}
	return o, nil
}

// strings reads a count of items, each group strings long (list and set
// elements, hash field/value pairs).
func (r *reader) strings(o *Object, group int) error {
	n, err := r.count()
	if err != nil {
		return err
	}
	o.Elems = make([]string, 0, min(n*group, len(r.b)-r.p))
	for range n * group {
		s, err := r.text()
		if err != nil {
			return err
		}
		o.Elems = append(o.Elems, s)
	}
	return nil
}

// zset reads a sorted set stored member by member.
func (r *reader) zset(o *Object, binary bool) error {
	n, err := r.count()
	if err != nil {
		return err
	}
	c := min(n, len(r.b)-r.p)
	o.Elems, o.Scores = make([]string, 0, c), make([]float64, 0, c)
	for range n {
		m, err := r.text()
		if err != nil {
			return err
		}
		var f float64
		if binary {
			f, err = r.binaryDouble()
		} else {
			f, err = r.textDouble()
		}
		if err != nil {
			return err
		}
		if math.IsNaN(f) {
			return errFormat("zset score (NaN)")
		}
		o.Elems = append(o.Elems, m)
		o.Scores = append(o.Scores, f)
	}
	return nil
}

// quicklist reads a list stored as nodes: ziplists (v1), or listpacks and
// plain elements (v2). Empty nodes are skipped as Redis skips them.
func (r *reader) quicklist(o *Object, v2 bool) error {
	n, err := r.count()
	if err != nil {
		return err
	}
	for range n {
		container := uint64(containerPacked)
		if v2 {
			var special bool
			container, special, err = r.length()
			if err != nil {
				return err
			}
			if special || (container != containerPacked && container != containerPlain) {
				return errFormat("quicklist container")
			}
		}
		b, err := r.str()
		if err != nil {
			return err
		}
		if len(b) == 0 {
			return errFormat("quicklist node")
		}
		if container == containerPlain {
			o.Elems = append(o.Elems, string(b))
			continue
		}
		each := listpackEach
		if !v2 {
			each = ziplistEach
		}
		if _, err := each(b, func(s []byte) error {
			o.Elems = append(o.Elems, string(s))
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// blob reads one string holding a listpack or ziplist whose entries come in
// groups (pairs for hashes and sorted sets).
func (r *reader) blob(o *Object, each func([]byte, func([]byte) error) (int, error), group int) error {
	b, err := r.str()
	if err != nil {
		return err
	}
	n, err := each(b, func(s []byte) error {
		o.Elems = append(o.Elems, string(s))
		return nil
	})
	if err != nil {
		return err
	}
	if n%group != 0 {
		return errFormat("odd pair count")
	}
	return nil
}

// splitScores turns member/score pairs read from a listpack or ziplist into
// Elems and Scores.
func (o *Object) splitScores() error {
	n := len(o.Elems) / 2
	o.Scores = make([]float64, n)
	for i := range n {
		f, ok := parseScore([]byte(o.Elems[2*i+1]))
		if !ok || math.IsNaN(f) {
			return errFormat("zset score")
		}
		o.Elems[i] = o.Elems[2*i]
		o.Scores[i] = f
	}
	clear(o.Elems[n:])
	o.Elems = o.Elems[:n]
	return nil
}
