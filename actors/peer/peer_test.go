package peer_test

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/actors/peer"
	"github.com/slotd/slotd/bus"
	busv1 "github.com/slotd/slotd/proto/slotd/bus/v1"
)

// sink is an owner actor that hands every message it gets to the test.
type sink struct{ ch chan any }

func (s *sink) Receive(ctx actor.Context) {
	switch ctx.Message().(type) {
	case *actor.Started, *actor.Stopping, *actor.Stopped, *actor.Restarting:
		return
	}
	s.ch <- ctx.Message()
}

type fixture struct {
	t     *testing.T
	sys   *actor.ActorSystem
	owner *actor.PID
	ch    chan any
}

func newFixture(t *testing.T) *fixture {
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.DiscardHandler)
	}))
	ch := make(chan any, 1024)
	owner := sys.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return &sink{ch: ch} }))
	t.Cleanup(sys.Shutdown)
	return &fixture{t: t, sys: sys, owner: owner, ch: ch}
}

// next returns the next message the owner got.
func (f *fixture) next() any {
	f.t.Helper()
	select {
	case m := <-f.ch:
		return m
	case <-time.After(10 * time.Second):
		f.t.Fatal("no message for the owner")
		return nil
	}
}

// none checks that nothing more reaches the owner for a short while (used
// only after the link is closed, where nothing may follow Closed).
func (f *fixture) none() {
	f.t.Helper()
	select {
	case m := <-f.ch:
		f.t.Fatalf("unexpected message %T %+v", m, m)
	case <-time.After(100 * time.Millisecond):
	}
}

func (f *fixture) spawn(o peer.Options) *peer.Handle {
	o.Owner = f.owner
	o.Log = zerolog.Nop()
	if o.DialTimeout == 0 {
		o.DialTimeout = 5 * time.Second
	}
	return peer.Spawn(f.sys.Root, o)
}

// tcpPair returns the two ends of a loopback TCP connection.
func tcpPair(t *testing.T) (a, b net.Conn) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	acc := make(chan net.Conn, 1)
	go func() {
		c, _ := l.Accept()
		acc <- c
	}()
	a, err = net.Dial("tcp", l.Addr().String())
	require.NoError(t, err)
	b = <-acc
	require.NotNil(t, b)
	t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
	return a, b
}

func ping(sender string) *busv1.Frame {
	return &busv1.Frame{Header: &busv1.Header{Type: busv1.Type_TYPE_PING, Version: bus.ProtoVersion, Sender: sender}}
}

func writeFrame(t *testing.T, c net.Conn, f *busv1.Frame) {
	b, err := bus.AppendFrame(nil, f)
	require.NoError(t, err)
	_, err = c.Write(b)
	require.NoError(t, err)
}

func TestInboundLink(t *testing.T) {
	f := newFixture(t)
	ours, theirs := tcpPair(t)
	h := f.spawn(peer.Options{Link: 7, Conn: ours})

	// Frames read from the connection reach the owner in order.
	for _, s := range []string{"a", "b", "c"} {
		writeFrame(t, theirs, ping(s))
	}
	for _, s := range []string{"a", "b", "c"} {
		m, ok := f.next().(*peer.Received)
		require.True(t, ok)
		assert.Equal(t, bus.LinkID(7), m.Link)
		assert.Equal(t, s, m.Frame.GetHeader().GetSender())
	}

	// Frames written by the owner reach the peer in order.
	for _, s := range []string{"x", "y", "z"} {
		f.sys.Root.Send(h.PID, &peer.Write{Frame: ping(s)})
	}
	dec := bus.NewDecoder(theirs, 0)
	for _, s := range []string{"x", "y", "z"} {
		fr, err := dec.Next()
		require.NoError(t, err)
		assert.Equal(t, s, fr.GetHeader().GetSender())
	}

	// The peer hangs up: Closed, once, and nothing after it.
	require.NoError(t, theirs.Close())
	m, ok := f.next().(*peer.Closed)
	require.True(t, ok)
	assert.Equal(t, bus.LinkID(7), m.Link)
	assert.ErrorIs(t, m.Err, io.EOF)
	assert.False(t, m.BufferLimit)
	assert.False(t, h.Connected())
	f.sys.Root.Send(h.PID, peer.Close{})
	f.none()
}

func TestGarbageClosesLink(t *testing.T) {
	f := newFixture(t)
	ours, theirs := tcpPair(t)
	f.spawn(peer.Options{Link: 1, Conn: ours})
	// A length over the maximum frame size.
	_, err := theirs.Write([]byte{0xff, 0xff, 0xff, 0xff})
	require.NoError(t, err)
	m, ok := f.next().(*peer.Closed)
	require.True(t, ok)
	assert.ErrorIs(t, m.Err, bus.ErrFrameTooLarge)
	// Our side closed the socket.
	_ = theirs.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = theirs.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF)
}

func TestOutboundLinkFlushesOnClose(t *testing.T) {
	f := newFixture(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	h := f.spawn(peer.Options{Link: 3, Addr: l.Addr().String()})
	// Frames written before the dial completes are kept for the link.
	f.sys.Root.Send(h.PID, &peer.Write{Frame: ping("early")})
	theirs, err := l.Accept()
	require.NoError(t, err)
	defer theirs.Close()

	m, ok := f.next().(*peer.Connected)
	require.True(t, ok)
	assert.Equal(t, bus.LinkID(3), m.Link)
	assert.Equal(t, l.Addr().String(), m.Remote.String())
	assert.Equal(t, theirs.RemoteAddr().String(), m.Local.String())

	// A Close right after writes: they are flushed, then the link closes.
	for _, s := range []string{"a", "b"} {
		f.sys.Root.Send(h.PID, &peer.Write{Frame: ping(s)})
	}
	f.sys.Root.Send(h.PID, peer.Close{})
	f.sys.Root.Send(h.PID, peer.Close{}) // closing twice is harmless
	dec := bus.NewDecoder(theirs, 0)
	for _, s := range []string{"early", "a", "b"} {
		fr, err := dec.Next()
		require.NoError(t, err)
		assert.Equal(t, s, fr.GetHeader().GetSender())
	}
	_, err = dec.Next()
	assert.ErrorIs(t, err, io.EOF)
	c, ok := f.next().(*peer.Closed)
	require.True(t, ok)
	assert.ErrorIs(t, c.Err, peer.ErrClosed)
	f.none()
}

func TestDialFailure(t *testing.T) {
	f := newFixture(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close()) // nothing listens there now
	f.spawn(peer.Options{Link: 9, Addr: addr})
	m, ok := f.next().(*peer.Closed)
	require.True(t, ok, "got %T", m)
	assert.Equal(t, bus.LinkID(9), m.Link)
	var op *net.OpError
	assert.True(t, errors.As(m.Err, &op), "%v", m.Err)
	f.none()
}

func TestSendLimit(t *testing.T) {
	f := newFixture(t)
	ours, theirs := tcpPair(t)
	// theirs never reads: the kernel buffers fill up, then our queue.
	const limit = 256 << 10
	h := f.spawn(peer.Options{Link: 5, Conn: ours, SendLimit: limit})
	big := &busv1.Frame{Header: &busv1.Header{Type: busv1.Type_TYPE_PUBLISH, Sender: "s"},
		Publish: &busv1.Publish{Channel: []byte("ch"), Message: make([]byte, 64<<10)}}
	var closed *peer.Closed
	for i := 0; closed == nil && i < 10000; i++ {
		f.sys.Root.Send(h.PID, &peer.Write{Frame: big})
		select {
		case m := <-f.ch:
			c, ok := m.(*peer.Closed)
			require.True(t, ok, "got %T", m)
			closed = c
		default:
		}
	}
	if closed == nil {
		m, ok := f.next().(*peer.Closed)
		require.True(t, ok)
		closed = m
	}
	assert.True(t, closed.BufferLimit)
	assert.ErrorIs(t, closed.Err, peer.ErrSendLimit)
	alloc, used := h.SendBuffer()
	assert.Zero(t, alloc)
	assert.Zero(t, used)
	_ = theirs
}

func TestListener(t *testing.T) {
	got := make(chan net.Conn, 1)
	l, err := peer.Listen([]string{"127.0.0.1:0"}, func(c net.Conn) { got <- c })
	require.NoError(t, err)
	c, err := net.Dial("tcp", l.Addrs()[0].String())
	require.NoError(t, err)
	defer c.Close()
	s := <-got
	assert.Equal(t, c.LocalAddr().String(), s.RemoteAddr().String())
	_ = s.Close()
	l.Close()
	l.Close()
	_, err = net.Dial("tcp", l.Addrs()[0].String())
	assert.Error(t, err)

	// A busy address fails the whole listener.
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	_, err = peer.Listen([]string{"127.0.0.1:0", busy.Addr().String()}, func(net.Conn) {})
	assert.Error(t, err)
}

func TestSendBufferCounts(t *testing.T) {
	f := newFixture(t)
	ours, theirs := tcpPair(t)
	h := f.spawn(peer.Options{Link: 2, Conn: ours})
	big := &busv1.Frame{Header: &busv1.Header{Type: busv1.Type_TYPE_PUBLISH, Sender: "s"},
		Publish: &busv1.Publish{Message: make([]byte, 64<<10)}}
	// theirs does not read: once the kernel buffers are full, frames stay
	// queued and CLUSTER LINKS can see them.
	deadline := time.Now().Add(10 * time.Second)
	for {
		f.sys.Root.Send(h.PID, &peer.Write{Frame: big})
		alloc, used := h.SendBuffer()
		if used > 1<<20 {
			assert.GreaterOrEqual(t, alloc, used)
			break
		}
		require.True(t, time.Now().Before(deadline), "send queue never grew")
		time.Sleep(time.Millisecond)
	}
	// Reading drains it.
	go func() { _, _ = io.Copy(io.Discard, theirs) }()
	require.Eventually(t, func() bool { _, used := h.SendBuffer(); return used == 0 }, 10*time.Second,
		5*time.Millisecond)
}

// Lowering the send limit of an open link (CONFIG SET
// cluster-link-sendbuf-limit) closes it once its queue is past the new
// limit, as Redis's cron frees such links.
func TestSendLimitLoweredOnOpenLink(t *testing.T) {
	f := newFixture(t)
	ours, theirs := tcpPair(t)
	h := f.spawn(peer.Options{Link: 3, Conn: ours}) // the default, large limit
	big := &busv1.Frame{Header: &busv1.Header{Type: busv1.Type_TYPE_PUBLISH, Sender: "s"},
		Publish: &busv1.Publish{Message: make([]byte, 64<<10)}}
	deadline := time.Now().Add(10 * time.Second)
	for {
		f.sys.Root.Send(h.PID, &peer.Write{Frame: big})
		if _, used := h.SendBuffer(); used > 512<<10 {
			break
		}
		require.True(t, time.Now().Before(deadline), "send queue never grew")
		time.Sleep(time.Millisecond)
	}
	f.sys.Root.Send(h.PID, &peer.SetSendLimit{Bytes: 256 << 10})
	m, ok := f.next().(*peer.Closed)
	require.True(t, ok, "got %T", m)
	assert.True(t, m.BufferLimit)
	assert.ErrorIs(t, m.Err, peer.ErrSendLimit)
	_ = theirs
}
