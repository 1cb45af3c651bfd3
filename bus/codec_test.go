package bus

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	busv1 "github.com/slotd/slotd/proto/slotd/bus/v1"
)

// sampleFrames are frames of every shape the bus sends.
func sampleFrames() []*busv1.Frame {
	s := New(idA, sh1, DefaultOptions())
	s.SetAnnounce(DeriveAnnounce(7000, 0, 0, 0, "10.0.0.1", "host-a"))
	_ = s.AddSlotsRange(args("0", "5460"))
	ping := &busv1.Frame{Header: s.header(busv1.Type_TYPE_PING), Gossip: []*busv1.Gossip{
		{Id: idB, PingSent: 1, PongReceived: 2, Ip: "10.0.0.2", Port: 7001, Cport: 17001, Flags: 1},
		{Id: idC, Ip: "::1", Port: 7002, Cport: 17002, Flags: 2 | 4, Hostname: "c"},
	}}
	return []*busv1.Frame{
		ping,
		{Header: s.header(busv1.Type_TYPE_PONG)},
		{Header: s.header(busv1.Type_TYPE_UPDATE), Update: &busv1.Update{Id: idB, ConfigEpoch: 7,
			Slots: SlotBitmap(rangeSet(100, 200))}},
		{Header: s.header(busv1.Type_TYPE_FAIL), Fail: &busv1.Fail{Id: idC}},
		{Header: s.header(busv1.Type_TYPE_PUBLISH), Publish: &busv1.Publish{Channel: []byte("ch"),
			Message: bytes.Repeat([]byte("m"), 100_000)}},
		{Header: s.header(busv1.Type_TYPE_MEET), Forgotten: []*busv1.Forgotten{{Id: idD, TtlSeconds: 60}}},
		{},
	}
}

func TestCodecRoundTrip(t *testing.T) {
	frames := sampleFrames()
	var wire []byte
	var err error
	wire = append(wire, "prefix"...)
	for _, f := range frames {
		wire, err = AppendFrame(wire, f)
		require.NoError(t, err)
	}
	assert.Equal(t, "prefix", string(wire[:6]), "AppendFrame appends")
	for name, r := range map[string]io.Reader{
		"whole":    bytes.NewReader(wire[6:]),
		"one byte": iotest.OneByteReader(bytes.NewReader(wire[6:])),
		"half":     iotest.HalfReader(bytes.NewReader(wire[6:])),
	} {
		d := NewDecoder(r, 0)
		for i, want := range frames {
			got, err := d.Next()
			require.NoError(t, err, "%s: frame %d", name, i)
			assert.True(t, proto.Equal(want, got), "%s: frame %d", name, i)
		}
		_, err := d.Next()
		assert.Equal(t, io.EOF, err, name)
	}
	// The first length is big-endian.
	n := binary.BigEndian.Uint32(wire[6:])
	assert.Equal(t, proto.Size(frames[0]), int(n))
}

func TestDecoderErrors(t *testing.T) {
	wire, err := AppendFrame(nil, sampleFrames()[0])
	require.NoError(t, err)

	_, err = NewDecoder(bytes.NewReader(wire[:2]), 0).Next()
	assert.Equal(t, io.ErrUnexpectedEOF, err, "cut in the length")
	_, err = NewDecoder(bytes.NewReader(wire[:len(wire)-1]), 0).Next()
	assert.Equal(t, io.ErrUnexpectedEOF, err, "cut in the body")

	_, err = NewDecoder(bytes.NewReader(wire), len(wire)-5).Next()
	assert.True(t, errors.Is(err, ErrFrameTooLarge), "%v", err)
	huge := binary.BigEndian.AppendUint32(nil, MaxFrameSize+1)
	_, err = NewDecoder(bytes.NewReader(huge), 0).Next()
	assert.True(t, errors.Is(err, ErrFrameTooLarge))

	bad := append(binary.BigEndian.AppendUint32(nil, 3), 0xff, 0xff, 0xff)
	_, err = NewDecoder(bytes.NewReader(bad), 0).Next()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bus: bad frame")

	big := &busv1.Frame{Publish: &busv1.Publish{Message: make([]byte, MaxFrameSize)}}
	_, err = AppendFrame(nil, big)
	assert.True(t, errors.Is(err, ErrFrameTooLarge))
}

func TestDecoderAllocatesWhatArrives(t *testing.T) {
	// A peer announces 500 MB and sends 1 KB: the decoder must not reserve
	// the announced size.
	wire := binary.BigEndian.AppendUint32(nil, 500<<20)
	wire = append(wire, make([]byte, 1024)...)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := NewDecoder(bytes.NewReader(wire), 0).Next()
	runtime.ReadMemStats(&after)
	assert.Equal(t, io.ErrUnexpectedEOF, err)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20))
}

// FuzzDecoder feeds arbitrary bytes to the decoder in uneven chunks: it
// must never panic, and every frame it returns must survive a round trip.
// The seed corpus is in testdata/fuzz/FuzzDecoder.
func FuzzDecoder(f *testing.F) {
	for _, fr := range sampleFrames()[:4] {
		b, err := AppendFrame(nil, fr)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8(7))
	}
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		var r io.Reader = bytes.NewReader(data)
		if chunk%2 == 1 {
			r = iotest.OneByteReader(r)
		} else if chunk != 0 {
			r = iotest.HalfReader(r)
		}
		d := NewDecoder(r, 1<<20)
		// A node of a four-node cluster, with a link from an unknown node,
		// a link from b (known), and its link to c.
		s, err := Load(multi, 1, DefaultOptions(), func() string { return sh2 })
		if err != nil {
			t.Fatal(err)
		}
		unknown := s.Accept(1, "10.0.0.1", "10.0.0.9")
		fromB := s.Accept(1, "10.0.0.1", "10.0.0.2")
		s.Tick(1)
		var toC LinkID
		for _, dl := range s.TakeEffects().Dial {
			if dl.NodeID == idC {
				toC = dl.Link
			}
		}
		s.LinkConnected(1, toC)
		for range 64 {
			fr, err := d.Next()
			if err != nil {
				return
			}
			b, err := AppendFrame(nil, fr)
			if err != nil {
				t.Fatalf("re-encode: %v", err)
			}
			again, err := NewDecoder(bytes.NewReader(b), 1<<20).Next()
			if err != nil {
				t.Fatalf("decode of re-encoded frame: %v", err)
			}
			if !proto.Equal(fr, again) {
				t.Fatalf("round trip changed the frame")
			}
			// The state machine must take any decoded frame without
			// panicking or breaking its invariants, whoever it seems to
			// come from.
			s.Receive(2, unknown, fr)
			if fr.Header != nil {
				for _, c := range []struct {
					l  LinkID
					id string
				}{{fromB, idB}, {toC, idC}} {
					g := proto.Clone(fr).(*busv1.Frame)
					g.Header.Sender = c.id
					s.Receive(3, c.l, g)
				}
			}
			s.Tick(100)
			s.TakeEffects()
			if err := s.Verify(); err != nil {
				t.Fatal(err)
			}
		}
	})
}
