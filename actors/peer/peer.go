// Package peer owns the TCP links of the cluster bus: the listener on the
// bus port and one actor per link. A link is either inbound (a connection a
// peer opened to us, spawned with its net.Conn) or outbound (spawned with an
// address: the actor dials in a goroutine, so its owner never waits on the
// network).
//
// A peer actor does no cluster logic. It reports to its owner (the cluster
// actor) with explicit messages — [Connected] once an outbound dial
// succeeded, [Received] for every frame read, [Closed] exactly once when the
// link ends for any reason — and writes the frames it is given ([Write]).
// Frames are read by a reader goroutine with bus.Decoder and forwarded to the
// owner directly, in order; writes go through a byte-counted queue drained
// by a writer goroutine with one writev per batch. A queue that grows past
// the send limit closes the link ([Closed].BufferLimit), as Redis does with
// cluster-link-sendbuf-limit: a peer that does not read cannot make this
// node buffer without bound.
package peer

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/slotd/slotd/actors/trace"
	"github.com/slotd/slotd/bus"
	busv1 "github.com/slotd/slotd/proto/slotd/bus/v1"
)

// Connected tells the owner that the outbound link's dial succeeded.
type Connected struct {
	Link          bus.LinkID
	Local, Remote net.Addr
}

// Received is a frame read from a link.
type Received struct {
	Link  bus.LinkID
	Frame *busv1.Frame
}

// TraceName implements trace.Named: the frame in protocol terms.
func (r *Received) TraceName() string { return "recv " + bus.Describe(r.Frame) }

// EnqueuedAt implements trace.Stamped (frames carry no enqueue time).
func (r *Received) EnqueuedAt() int64 { return 0 }

// TraceID implements trace.Stamped: the trace the sender put the frame in.
func (r *Received) TraceID() uint64 { return r.Frame.GetHeader().GetTraceId() }

// TraceClock implements trace.Causal: the sender's Lamport clock.
func (r *Received) TraceClock() uint64 { return r.Frame.GetHeader().GetTraceClock() }

// TraceName implements trace.Named: the frame written, in protocol terms.
func (w *Write) TraceName() string { return "write " + bus.Describe(w.Frame) }

// Closed tells the owner that a link ended (dial failure, read or write
// error, EOF, a Close request or the send limit). It is sent once per link;
// nothing about the link follows it except frames a reader had already
// decoded, which the owner should drop.
type Closed struct {
	Link bus.LinkID
	Err  error
	// BufferLimit: the link was closed because its send queue went over
	// the limit.
	BufferLimit bool
}

// Write asks a peer actor to send a frame. The frame must not change
// afterwards (it may be shared by several links).
type Write struct{ Frame *busv1.Frame }

// Close asks a peer actor to close its link. Closing twice is harmless.
type Close struct{}

// SetSendLimit changes the link's send limit (cluster-link-sendbuf-limit;
// 0: DefaultSendLimit). A queue already past the new limit closes the link.
type SetSendLimit struct{ Bytes int64 }

// Options describe one link.
type Options struct {
	Link  bus.LinkID
	Owner *actor.PID
	// Conn is the connection of an inbound link; nil for outbound links,
	// which dial Addr ("host:port") with DialTimeout.
	Conn        net.Conn
	Addr        string
	DialTimeout time.Duration
	// SourceIP is the local address outbound links dial from
	// (bind-source-addr; "": the kernel's choice).
	SourceIP string
	// SendLimit is the largest number of queued, unwritten bytes; one more
	// frame closes the link. 0 means DefaultSendLimit.
	SendLimit int64
	Log       zerolog.Logger
}

// DefaultSendLimit bounds a link's send queue when cluster-link-sendbuf-limit
// is 0 (Redis then has no bound): big enough for a 512 MB Pub/Sub message.
const DefaultSendLimit = 1 << 30

// ErrSendLimit is the Closed.Err of a link closed by the send limit.
var ErrSendLimit = errors.New("send buffer limit exceeded")

// closeGrace bounds how long a link closed on request keeps writing the
// frames queued before the request.
const closeGrace = 2 * time.Second

// ErrClosed is the Closed.Err of a link closed on request.
var ErrClosed = errors.New("link closed")

// Handle is what the owner keeps for a link: the actor and its send-buffer
// counters (for CLUSTER LINKS).
type Handle struct {
	PID   *actor.PID
	queue *queue
}

// SendBuffer returns the bytes held by the send queue (allocated) and the
// bytes in it not yet written (used).
func (h *Handle) SendBuffer() (allocated, used int64) {
	return h.queue.allocated.Load(), h.queue.used.Load()
}

// Bytes returns the bytes written to and read from the link's connection.
func (h *Handle) Bytes() (sent, received int64) {
	return h.queue.sent.Load(), h.queue.received.Load()
}

// Connected reports whether the link has a connection (outbound links
// have none until the dial succeeds).
func (h *Handle) Connected() bool { return h.queue.connected.Load() }

// Spawn starts the actor of one link as a child of ctx (the owner).
func Spawn(ctx actor.SpawnerContext, o Options) *Handle {
	if o.SendLimit <= 0 {
		o.SendLimit = DefaultSendLimit
	}
	q := &queue{wake: make(chan struct{}, 1)}
	p := &peerActor{o: o, q: q, log: o.Log.With().Str("actor", "peer").Uint64("link", uint64(o.Link)).Logger()}
	props := actor.PropsFromProducer(func() actor.Actor { return p },
		trace.Props(ctx.ActorSystem(), "peer", strconv.FormatUint(uint64(o.Link), 10))...)
	return &Handle{PID: ctx.Spawn(props), queue: q}
}

// dialed is the result of an outbound dial, sent by the dial goroutine.
type dialed struct {
	conn net.Conn
	err  error
}

// ioFailed reports a read or write error from a link goroutine.
type ioFailed struct{ err error }

type peerActor struct {
	o      Options
	q      *queue
	log    zerolog.Logger
	root   *actor.RootContext
	self   *actor.PID
	cancel context.CancelFunc // stops a pending dial
	done   bool               // Closed was sent
}

// Receive implements actor.Actor.
func (p *peerActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		p.root, p.self = ctx.ActorSystem().Root, ctx.Self()
		if p.o.Conn != nil {
			p.q.setConn(p.o.Conn)
			p.startIO(p.o.Conn)
			return
		}
		dctx, cancel := context.WithTimeout(context.Background(), p.o.DialTimeout)
		p.cancel = cancel
		go p.dial(dctx)
	case dialed:
		if m.err != nil {
			p.finish(ctx, m.err, false)
			return
		}
		if p.done {
			return // the queue (and so the connection) is closed already
		}
		ctx.Send(p.o.Owner, &Connected{Link: p.o.Link, Local: m.conn.LocalAddr(), Remote: m.conn.RemoteAddr()})
		p.startIO(m.conn)
	case *Write:
		if p.done {
			return
		}
		b, err := bus.AppendFrame(nil, m.Frame)
		if err != nil {
			p.log.Error().Err(err).Msg("can't encode bus frame")
			return
		}
		if !p.q.push(b, p.o.SendLimit) {
			p.finish(ctx, ErrSendLimit, true)
		}
	case *SetSendLimit:
		p.o.SendLimit = m.Bytes
		if p.o.SendLimit <= 0 {
			p.o.SendLimit = DefaultSendLimit
		}
		if !p.done && p.q.used.Load() > p.o.SendLimit {
			p.finish(ctx, ErrSendLimit, true)
		}
	case ioFailed:
		p.finish(ctx, m.err, false)
	case Close, *Close:
		// Frames queued before the Close go out first (the state may send
		// a last frame and close in the same step); a peer that does not
		// read them gets a short grace period.
		if p.done {
			return
		}
		if !p.q.closeWhenFlushed(closeGrace) {
			p.finish(ctx, ErrClosed, false)
		}
	case *actor.Stopping:
		p.q.close()
		if p.cancel != nil {
			p.cancel()
		}
	}
}

// finish closes the link, reports it once and stops the actor.
func (p *peerActor) finish(ctx actor.Context, err error, limit bool) {
	if p.done {
		return
	}
	p.done = true
	p.q.close()
	if p.cancel != nil {
		p.cancel()
	}
	ctx.Send(p.o.Owner, &Closed{Link: p.o.Link, Err: err, BufferLimit: limit})
	ctx.Stop(ctx.Self())
}

func (p *peerActor) dial(ctx context.Context) {
	var d net.Dialer
	if ip := net.ParseIP(p.o.SourceIP); ip != nil {
		d.LocalAddr = &net.TCPAddr{IP: ip}
	}
	conn, err := d.DialContext(ctx, "tcp", p.o.Addr)
	if err == nil && !p.q.setConn(conn) {
		// Closed while dialing: the actor may be gone, nobody else would
		// close this connection.
		_ = conn.Close()
		return
	}
	p.root.Send(p.self, dialed{conn: conn, err: err})
}

// startIO starts the reader and writer goroutines of an established link.
func (p *peerActor) startIO(conn net.Conn) {
	go p.read(conn)
	go p.write(conn)
}

// read forwards every frame to the owner until the connection fails.
func (p *peerActor) read(conn net.Conn) {
	dec := bus.NewDecoder(countingReader{conn, &p.q.received}, bus.MaxFrameSize)
	for {
		f, err := dec.Next()
		if err != nil {
			p.root.Send(p.self, ioFailed{err: err})
			return
		}
		p.root.Send(p.o.Owner, &Received{Link: p.o.Link, Frame: f})
	}
}

// write drains the queue with one writev per batch.
func (p *peerActor) write(conn net.Conn) {
	for {
		batch, ok := p.q.take()
		if !ok {
			if p.q.flushed() {
				p.root.Send(p.self, ioFailed{err: ErrClosed})
			}
			return
		}
		var n, c int64
		for _, b := range batch {
			n += int64(len(b))
			c += int64(cap(b))
		}
		bufs := net.Buffers(batch)
		wrote, err := bufs.WriteTo(conn)
		p.q.sent.Add(wrote)
		p.q.written(n, c)
		if err != nil {
			p.root.Send(p.self, ioFailed{err: err})
			return
		}
	}
}

// countingReader counts the bytes read from a link's connection.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n.Add(int64(n))
	return n, err
}

// queue is the send queue of a link, shared by the actor (push, close) and
// the writer goroutine (take). It also holds the connection so that a close
// from any side closes the socket exactly once.
type queue struct {
	mu      sync.Mutex
	bufs    [][]byte
	conn    net.Conn
	closed  bool
	closing bool // close once the queue is empty
	drained bool // the writer stopped on an empty closing queue
	wake    chan struct{}

	// sent and received count the bytes written and read (link metrics).
	sent, received atomic.Int64

	used      atomic.Int64 // queued + in-flight bytes
	allocated atomic.Int64 // capacity of the queued buffers
	connected atomic.Bool
}

// setConn records the connection; false if the queue was already closed.
func (q *queue) setConn(c net.Conn) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	q.conn = c
	q.connected.Store(true)
	return true
}

// push queues b; false when the queue would exceed limit bytes.
func (q *queue) push(b []byte, limit int64) bool {
	q.mu.Lock()
	if q.closed || q.closing {
		q.mu.Unlock()
		return true
	}
	if q.used.Load()+int64(len(b)) > limit {
		q.mu.Unlock()
		return false
	}
	q.bufs = append(q.bufs, b)
	q.used.Add(int64(len(b)))
	q.allocated.Add(int64(cap(b)))
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return true
}

// take waits for queued buffers; ok is false once the queue is closed, or
// closing and empty.
func (q *queue) take() (batch [][]byte, ok bool) {
	for {
		q.mu.Lock()
		if q.closed {
			q.mu.Unlock()
			return nil, false
		}
		if len(q.bufs) > 0 {
			batch, q.bufs = q.bufs, nil
			q.mu.Unlock()
			return batch, true
		}
		if q.closing {
			q.drained = true
			q.mu.Unlock()
			return nil, false
		}
		q.mu.Unlock()
		<-q.wake
	}
}

// closeWhenFlushed makes the writer stop once the queue is empty, writing
// for at most grace. false: there is nothing to flush (or no connection):
// close now.
func (q *queue) closeWhenFlushed(grace time.Duration) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed || q.conn == nil || q.used.Load() == 0 {
		return false
	}
	q.closing = true
	_ = q.conn.SetWriteDeadline(time.Now().Add(grace))
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return true
}

// flushed reports that the writer stopped because a closing queue drained.
func (q *queue) flushed() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.drained
}

// written accounts for a batch of n bytes (c allocated) handed to the
// socket.
func (q *queue) written(n, c int64) {
	q.mu.Lock()
	if !q.closed { // close already zeroed the counters
		q.used.Add(-n)
		q.allocated.Add(-c)
	}
	q.mu.Unlock()
}

// close closes the connection (once) and wakes the writer.
func (q *queue) close() {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	q.closed = true
	c := q.conn
	q.bufs = nil
	q.used.Store(0)
	q.allocated.Store(0)
	q.connected.Store(false)
	q.mu.Unlock()
	if c != nil {
		_ = c.Close()
	}
	select {
	case q.wake <- struct{}{}:
	default:
	}
}
