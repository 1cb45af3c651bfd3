package bus

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"google.golang.org/protobuf/proto"

	busv1 "github.com/slotd/slotd/proto/slotd/bus/v1"
)

// Frames travel on the bus as a 4-byte big-endian length followed by that
// many bytes of a serialized busv1.Frame.

// MaxFrameSize bounds a frame's length: room for a 512 MB pub/sub payload
// plus its channel and header.
const MaxFrameSize = 512<<20 + 1<<20

// ErrFrameTooLarge reports a frame longer than the allowed maximum.
var ErrFrameTooLarge = errors.New("bus: frame too large")

// AppendFrame appends the length-prefixed encoding of f to dst.
func AppendFrame(dst []byte, f *busv1.Frame) ([]byte, error) {
	if proto.Size(f) > MaxFrameSize {
		return dst, ErrFrameTooLarge
	}
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst, err := proto.MarshalOptions{}.MarshalAppend(dst, f)
	if err != nil {
		return dst[:start], err
	}
	n := len(dst) - start - 4
	binary.BigEndian.PutUint32(dst[start:], uint32(n))
	return dst, nil
}

// Decoder reads frames from a stream.
type Decoder struct {
	r   io.Reader
	max int
	hdr [4]byte
	buf []byte
}

// decoderInitial is the first buffer size; it grows only as bytes arrive.
const decoderInitial = 4 << 10

// decoderKeep is the largest buffer kept between frames.
const decoderKeep = 1 << 20

// NewDecoder returns a decoder reading r that refuses frames longer than
// max bytes (MaxFrameSize if max <= 0 or larger).
func NewDecoder(r io.Reader, max int) *Decoder {
	if max <= 0 || max > MaxFrameSize {
		max = MaxFrameSize
	}
	return &Decoder{r: r, max: max}
}

// Next reads the next frame. It returns io.EOF at a clean end of stream,
// io.ErrUnexpectedEOF inside a frame, ErrFrameTooLarge for an oversized
// length, and a decoding error for a frame that is not a valid Frame. The
// buffer grows with what has arrived (at most doubling it), never to a
// length the peer merely announced.
func (d *Decoder) Next() (*busv1.Frame, error) {
	if _, err := io.ReadFull(d.r, d.hdr[:]); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint32(d.hdr[:]))
	if n > d.max {
		return nil, fmt.Errorf("%w: %d bytes (max %d)", ErrFrameTooLarge, n, d.max)
	}
	buf := d.buf[:0]
	for len(buf) < n {
		if len(buf) == cap(buf) {
			grow := max(cap(buf), decoderInitial)
			buf = slices.Grow(buf, min(grow, n-len(buf)))
		}
		chunk := buf[len(buf):min(cap(buf), n)]
		m, err := io.ReadFull(d.r, chunk)
		buf = buf[:len(buf)+m]
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
	f := &busv1.Frame{}
	err := proto.Unmarshal(buf, f)
	if cap(buf) <= decoderKeep {
		d.buf = buf[:0]
	} else {
		d.buf = nil
	}
	if err != nil {
		return nil, fmt.Errorf("bus: bad frame: %w", err)
	}
	return f, nil
}
