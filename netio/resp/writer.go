// Package resp owns the Redis serialization protocol: an allocation-free
// command parser (multibulk and inline) and a reply writer that emits RESP2
// or RESP3 shapes depending on what the client negotiated with HELLO.
package resp

import (
	"math"
	"strconv"
)

// Writer appends encoded replies to B. Proto selects RESP2 (2) or RESP3 (3)
// encodings for the types that differ; a zero Proto means RESP2.
type Writer struct {
	B     []byte
	Proto int
}

// Reset empties the buffer but keeps its capacity.
func (w *Writer) Reset() { w.B = w.B[:0] }

// Len is the number of encoded bytes.
func (w *Writer) Len() int { return len(w.B) }

func (w *Writer) resp3() bool { return w.Proto >= 3 }

// OK writes +OK.
func (w *Writer) OK() { w.B = append(w.B, "+OK\r\n"...) }

// Simple writes a status reply (+s).
func (w *Writer) Simple(s string) {
	w.B = append(w.B, '+')
	w.B = append(w.B, s...)
	w.B = append(w.B, '\r', '\n')
}

// Error writes an error reply; msg must carry its code prefix ("ERR ...",
// "WRONGTYPE ..."). Line breaks are replaced so the reply stays framed.
func (w *Writer) Error(msg string) {
	w.B = append(w.B, '-')
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		if c == '\r' || c == '\n' {
			c = ' '
		}
		w.B = append(w.B, c)
	}
	w.B = append(w.B, '\r', '\n')
}

// Int writes an integer reply.
func (w *Writer) Int(n int64) {
	w.B = append(w.B, ':')
	w.B = strconv.AppendInt(w.B, n, 10)
	w.B = append(w.B, '\r', '\n')
}

func (w *Writer) header(c byte, n int) {
	w.B = append(w.B, c)
	w.B = strconv.AppendInt(w.B, int64(n), 10)
	w.B = append(w.B, '\r', '\n')
}

// Bulk writes a bulk string.
func (w *Writer) Bulk(b []byte) {
	w.header('$', len(b))
	w.B = append(w.B, b...)
	w.B = append(w.B, '\r', '\n')
}

// BulkString writes a bulk string from a string.
func (w *Writer) BulkString(s string) {
	w.header('$', len(s))
	w.B = append(w.B, s...)
	w.B = append(w.B, '\r', '\n')
}

// BulkInt writes an integer as a bulk string (as Redis does for INCRBYFLOAT
// and CONFIG values).
func (w *Writer) BulkInt(n int64) {
	var tmp [24]byte
	w.Bulk(strconv.AppendInt(tmp[:0], n, 10))
}

// Null writes the null reply: $-1 in RESP2, _ in RESP3.
func (w *Writer) Null() {
	if w.resp3() {
		w.B = append(w.B, "_\r\n"...)
		return
	}
	w.B = append(w.B, "$-1\r\n"...)
}

// NullArray writes a null array: *-1 in RESP2, _ in RESP3.
func (w *Writer) NullArray() {
	if w.resp3() {
		w.B = append(w.B, "_\r\n"...)
		return
	}
	w.B = append(w.B, "*-1\r\n"...)
}

// Array writes an array header of n elements.
func (w *Writer) Array(n int) { w.header('*', n) }

// Map writes a map header of n pairs (RESP2: a flat array of 2n elements).
func (w *Writer) Map(n int) {
	if w.resp3() {
		w.header('%', n)
		return
	}
	w.header('*', 2*n)
}

// Set writes a set header (RESP2: an array).
func (w *Writer) Set(n int) {
	if w.resp3() {
		w.header('~', n)
		return
	}
	w.header('*', n)
}

// Push writes a push header (RESP2: an array, as used by pub/sub messages).
func (w *Writer) Push(n int) {
	if w.resp3() {
		w.header('>', n)
		return
	}
	w.header('*', n)
}

// Bool writes a boolean (RESP2: integer 1 or 0).
func (w *Writer) Bool(v bool) {
	if w.resp3() {
		if v {
			w.B = append(w.B, "#t\r\n"...)
		} else {
			w.B = append(w.B, "#f\r\n"...)
		}
		return
	}
	if v {
		w.B = append(w.B, ":1\r\n"...)
	} else {
		w.B = append(w.B, ":0\r\n"...)
	}
}

// Double writes a double (RESP2: a bulk string in Redis's %.17g style).
func (w *Writer) Double(f float64) {
	var tmp [32]byte
	b := AppendFloat(tmp[:0], f)
	if w.resp3() {
		w.B = append(w.B, ',')
		w.B = append(w.B, b...)
		w.B = append(w.B, '\r', '\n')
		return
	}
	w.Bulk(b)
}

// Verbatim writes a verbatim string of format "txt" (RESP2: a bulk string).
func (w *Writer) Verbatim(s string) {
	if w.resp3() {
		w.header('=', len(s)+4)
		w.B = append(w.B, "txt:"...)
		w.B = append(w.B, s...)
		w.B = append(w.B, '\r', '\n')
		return
	}
	w.BulkString(s)
}

// Raw appends pre-encoded bytes.
func (w *Writer) Raw(b []byte) { w.B = append(w.B, b...) }

// AppendFloat formats f the way Redis 7.0 replies with doubles: %.17g (so an
// integral value has no fraction, and 0.1 reads 0.10000000000000001), with
// inf/-inf/nan spelled as Redis does.
func AppendFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	case math.IsNaN(f):
		return append(dst, "nan"...)
	}
	return strconv.AppendFloat(dst, f, 'g', 17, 64)
}
