// Package stream implements the Redis 7.0 stream value: entries with
// 128-bit IDs and field/value lists, stored compactly in listpack nodes
// byte-compatible with Redis's, plus consumer groups with their pending
// entries lists. It reads no clock: callers pass the time in.
//
// # Layout
//
// Redis keeps a stream as a radix tree whose keys are node master IDs and
// whose values are listpacks; every node starts with a "master entry" (live
// count, deleted count, the field names of its first entry) and holds
// entries delta-encoded against it. Here the tree is a sorted slice of
// nodes (XADD only appends at the tail, trimming removes from the head),
// and the listpacks are built exactly as Redis builds them. So node
// boundaries (stream-node-max-bytes / -entries), approximate trimming
// (which only drops whole nodes), tombstones and the memory per entry match
// Redis's, and RDB payloads carry the node blobs unchanged.
package stream

import (
	"math"
	"strconv"
)

// ID is a stream entry ID, <ms>-<seq>.
type ID struct{ Ms, Seq uint64 }

// MinID and MaxID are the smallest and largest IDs ("-" and "+").
var (
	MinID = ID{}
	MaxID = ID{math.MaxUint64, math.MaxUint64}
)

// Compare returns -1, 0 or +1 as a is before, equal to or after b.
func (a ID) Compare(b ID) int {
	switch {
	case a.Ms < b.Ms:
		return -1
	case a.Ms > b.Ms:
		return 1
	case a.Seq < b.Seq:
		return -1
	case a.Seq > b.Seq:
		return 1
	}
	return 0
}

// Less reports a < b.
func (a ID) Less(b ID) bool { return a.Compare(b) < 0 }

// IsZero reports a == 0-0.
func (a ID) IsZero() bool { return a.Ms == 0 && a.Seq == 0 }

// Incr returns the successor of a; ok is false when a is MaxID (the result
// is then 0-0, as Redis wraps).
func (a ID) Incr() (ID, bool) {
	switch {
	case a.Seq != math.MaxUint64:
		return ID{a.Ms, a.Seq + 1}, true
	case a.Ms != math.MaxUint64:
		return ID{a.Ms + 1, 0}, true
	}
	return ID{}, false
}

// Decr returns the predecessor of a; ok is false when a is 0-0 (the result
// is then MaxID).
func (a ID) Decr() (ID, bool) {
	switch {
	case a.Seq != 0:
		return ID{a.Ms, a.Seq - 1}, true
	case a.Ms != 0:
		return ID{a.Ms - 1, math.MaxUint64}, true
	}
	return MaxID, false
}

// Append writes a as "<ms>-<seq>".
func (a ID) Append(b []byte) []byte {
	b = strconv.AppendUint(b, a.Ms, 10)
	b = append(b, '-')
	return strconv.AppendUint(b, a.Seq, 10)
}

// String is "<ms>-<seq>".
func (a ID) String() string { return string(a.Append(nil)) }

// Key is a's 16-byte big-endian form, Redis's radix tree key.
func (a ID) Key() [16]byte {
	var k [16]byte
	for i := 0; i < 8; i++ {
		k[i] = byte(a.Ms >> (56 - 8*i))
		k[8+i] = byte(a.Seq >> (56 - 8*i))
	}
	return k
}

// IDFromKey reads a 16-byte big-endian ID.
func IDFromKey(k []byte) ID {
	var a ID
	for i := 0; i < 8; i++ {
		a.Ms = a.Ms<<8 | uint64(k[i])
		a.Seq = a.Seq<<8 | uint64(k[8+i])
	}
	return a
}

// ParseMode says how ParseID treats the special forms.
type ParseMode uint8

const (
	// Lenient accepts "-" and "+".
	Lenient ParseMode = iota
	// Strict refuses "-" and "+".
	Strict
	// StrictSeqStar is Strict that also accepts "<ms>-*" (XADD).
	StrictSeqStar
)

// ParseID reads an ID as Redis's stream commands do: "<ms>-<seq>", or
// "<ms>" with the sequence set to missingSeq, "-"/"+" unless strict, and
// "<ms>-*" for StrictSeqStar (seqGiven is then false). ok is false for
// anything else; the caller replies "Invalid stream ID ...".
func ParseID(s []byte, missingSeq uint64, mode ParseMode) (id ID, seqGiven, ok bool) {
	if len(s) > 127 {
		return ID{}, false, false
	}
	if len(s) == 1 && (s[0] == '-' || s[0] == '+') {
		if mode != Lenient {
			return ID{}, false, false
		}
		if s[0] == '-' {
			return MinID, true, true
		}
		return MaxID, true, true
	}
	dash := -1
	for i, c := range s {
		if c == '-' {
			dash = i
			break
		}
	}
	msPart, seqPart := s, []byte(nil)
	if dash >= 0 {
		msPart, seqPart = s[:dash], s[dash+1:]
	}
	ms, ok := parseUint(msPart)
	if !ok {
		return ID{}, false, false
	}
	if dash < 0 {
		return ID{ms, missingSeq}, true, true
	}
	if mode == StrictSeqStar && len(seqPart) == 1 && seqPart[0] == '*' {
		return ID{ms, 0}, false, true
	}
	seq, ok := parseUint(seqPart)
	if !ok {
		return ID{}, false, false
	}
	return ID{ms, seq}, true, true
}

// parseUint is Redis's string2ull: strtoull on the whole string, which
// allows leading spaces and a sign ('-' negates modulo 2^64), but no empty
// string, trailing garbage or overflow.
func parseUint(s []byte) (uint64, bool) {
	i := 0
	for i < len(s) && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r')) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	if i == len(s) {
		return 0, false
	}
	var v uint64
	for ; i < len(s); i++ {
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
		// string2ll takes canonical negative int64 texts first and refuses
		// them; only what it cannot parse reaches strtoull's wrap-around.
		if s[0] == '-' && len(s) > 1 && s[1] != '0' && v <= 1<<63 {
			return 0, false
		}
		v = -v
	}
	return v, true
}
