package rdb

// Whole-file RDB support (snapshots): the opcodes that frame values in a
// dump.rdb, and a reader that walks a file's records with the same string
// and value decoders DUMP payloads use.

import (
	"encoding/binary"
	"fmt"
)

// File opcodes (RDB_OPCODE_*), as Redis 7.0 numbers them.
const (
	OpFunction2     = 245
	OpFunctionPreGA = 246
	OpModuleAux     = 247
	OpIdle          = 248
	OpFreq          = 249
	OpAux           = 250
	OpResizeDB      = 251
	OpExpireTimeMS  = 252
	OpExpireTime    = 253
	OpSelectDB      = 254
	OpEOF           = 255
)

// AppendString appends s as an RDB string (see Encoder.String).
func AppendString[T ~string | ~[]byte](b []byte, s T, compress bool) []byte {
	return appendString(b, s, compress)
}

// FileReader walks the records of a whole RDB file held in memory.
type FileReader struct{ r reader }

// NewFileReader checks the "REDISnnnn" header (a version this package can
// read) and returns a reader positioned after it.
func NewFileReader(b []byte) (*FileReader, int, error) {
	if len(b) < 9 || string(b[:5]) != "REDIS" {
		return nil, 0, fmt.Errorf("wrong signature trying to load DB from file")
	}
	v := 0
	for _, c := range b[5:9] {
		if c < '0' || c > '9' {
			return nil, 0, fmt.Errorf("wrong signature trying to load DB from file")
		}
		v = v*10 + int(c-'0')
	}
	if v < 1 || v > Version {
		return nil, v, fmt.Errorf("can't handle RDB format version %d", v)
	}
	return &FileReader{r: reader{b: b, p: 9}}, v, nil
}

// NewPayloadReader reads records of a payload that has no file header
// (FUNCTION RESTORE's): Verify it first; the footer is the last ten bytes.
func NewPayloadReader(p []byte) *FileReader { return &FileReader{r: reader{b: p}} }

// Pos is the offset of the next unread byte.
func (f *FileReader) Pos() int { return f.r.p }

// Byte reads one byte (an opcode or a type).
func (f *FileReader) Byte() (byte, error) { return f.r.next() }

// Len reads a plain length.
func (f *FileReader) Len() (uint64, error) {
	n, special, err := f.r.length()
	if err == nil && special {
		err = errFormat("length")
	}
	return n, err
}

// String reads a string in any encoding; the result may point into the
// file's bytes.
func (f *FileReader) String() ([]byte, error) { return f.r.str() }

// Take reads n raw bytes.
func (f *FileReader) Take(n int) ([]byte, error) { return f.r.take(uint64(n)) }

// Uint64 reads a little-endian uint64 (millisecond expiry times, checksum).
func (f *FileReader) Uint64() (uint64, error) {
	b, err := f.r.take(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// Uint32 reads a little-endian uint32 (second expiry times).
func (f *FileReader) Uint32() (uint32, error) {
	b, err := f.r.take(4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

// Object reads a value of type t (already read) whose key was just read.
func (f *FileReader) Object(t byte) (*Object, error) { return f.r.typed(t) }
