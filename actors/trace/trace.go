// Package trace records the messages actors handle, for debugging: actor
// kind and id, message type, queue time (when the message carries its
// enqueue time) and handling time. It is off by default and switched per
// actor kind at run time (CONFIG SET trace-actors "shard cluster" or "all").
// Records go to a zerolog logger and to an in-memory ring that a command can
// read back, so a developer can replay what happened in order.
package trace

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
)

// Record is one handled message.
type Record struct {
	Seq      uint64
	At       time.Time
	Kind     string
	ID       string
	Message  string
	Sender   string
	Queued   time.Duration // 0 when unknown
	Handling time.Duration
	TraceID  uint64
	// Clock is the node's logical clock at the record (Tick): a frame
	// received from another node is recorded after the clock its sender
	// stamped on it, so sorting the records of all nodes by Clock is a
	// causal order.
	Clock uint64
}

// Causal messages carry their sender's clock (a bus frame from a
// tracing node); 0 when they carry none.
type Causal interface{ TraceClock() uint64 }

// clock is the process's clock for traces: a hybrid logical clock (unix
// µs, advanced past every clock received), so records of all nodes sort
// in causal order and, between unrelated records, roughly by time — a
// restarted node starts from the wall clock, not from 0. One node per
// process; nodes in one test process share it, which keeps it valid.
var clock atomic.Uint64

// Tick advances the clock for a local event and returns it.
func Tick() uint64 { return advance(0) }

// Witness merges a received clock c and returns the new value, above c.
func Witness(c uint64) uint64 { return advance(c) }

func advance(seen uint64) uint64 {
	now := uint64(time.Now().UnixMicro())
	for {
		cur := clock.Load()
		next := max(cur, seen) + 1
		next = max(next, now)
		if clock.CompareAndSwap(cur, next) {
			return next
		}
	}
}

// Stamped messages expose when they were enqueued and the trace id they
// carry (a client command's or a bus frame's).
type Stamped interface {
	EnqueuedAt() int64 // unix ns, 0 if not stamped
	TraceID() uint64
}

var (
	allOn   atomic.Bool
	kinds   sync.Map // kind → *atomic.Bool
	logger  atomic.Pointer[zerolog.Logger]
	ringMu  sync.Mutex
	ring    []Record
	ringPos int
	seq     atomic.Uint64
	anyOn   atomic.Bool
)

func flag(kind string) *atomic.Bool {
	if v, ok := kinds.Load(kind); ok {
		return v.(*atomic.Bool)
	}
	v, _ := kinds.LoadOrStore(kind, new(atomic.Bool))
	return v.(*atomic.Bool)
}

// Configure sets the traced kinds from a trace-actors value: a space or
// comma separated list of kinds, "all", or "" for none.
func Configure(value string) {
	allOn.Store(false)
	kinds.Range(func(_, v any) bool { v.(*atomic.Bool).Store(false); return true })
	on := false
	for _, k := range strings.FieldsFunc(strings.ToLower(value), func(r rune) bool { return r == ' ' || r == ',' }) {
		on = true
		if k == "all" {
			allOn.Store(true)
			continue
		}
		flag(k).Store(true)
	}
	anyOn.Store(on)
	if on {
		gate.Or(gateTrace)
	} else {
		gate.And(^gateTrace)
	}
}

// gate has a bit set while any kind is traced (gateTrace) and once any
// meter times its actors (gateTiming): Tracer.On's first check.
var gate atomic.Uint32

const (
	gateTrace uint32 = 1 << iota
	gateTiming
)

// Enabled reports whether kind is traced.
func Enabled(kind string) bool {
	if !hooks || !anyOn.Load() {
		return false
	}
	return allOn.Load() || flag(kind).Load()
}

// SetLogger routes records to l (nil: ring only).
func SetLogger(l *zerolog.Logger) { logger.Store(l) }

// SetRingSize resizes the in-memory ring (dropping what it held).
func SetRingSize(n int) {
	if n < 0 {
		n = 0
	}
	ringMu.Lock()
	ring = make([]Record, 0, n)
	ringPos = 0
	ringMu.Unlock()
}

func init() { SetRingSize(4096) }

// Add stores a record (used by the middleware and by non-actor code paths
// that want to appear in the same trace).
func Add(r Record) {
	r.Seq = seq.Add(1)
	if r.At.IsZero() {
		r.At = time.Now()
	}
	if r.Clock == 0 {
		r.Clock = Tick()
	}
	if l := logger.Load(); l != nil {
		ev := l.Debug().Str("kind", r.Kind).Str("id", r.ID).Str("msg", r.Message).
			Dur("handling", r.Handling).Uint64("seq", r.Seq)
		if r.Queued > 0 {
			ev = ev.Dur("queued", r.Queued)
		}
		if r.Sender != "" {
			ev = ev.Str("sender", r.Sender)
		}
		if r.TraceID != 0 {
			ev = ev.Uint64("trace", r.TraceID)
		}
		ev.Msg("actor message")
	}
	ringMu.Lock()
	if c := cap(ring); c > 0 {
		if len(ring) < c {
			ring = append(ring, r)
		} else {
			ring[ringPos] = r
			ringPos = (ringPos + 1) % c
		}
	}
	ringMu.Unlock()
}

// Recent returns up to n most recent records, oldest first.
func Recent(n int) []Record {
	ringMu.Lock()
	defer ringMu.Unlock()
	out := make([]Record, 0, len(ring))
	if len(ring) < cap(ring) {
		out = append(out, ring...)
	} else {
		out = append(out, ring[ringPos:]...)
		out = append(out, ring[:ringPos]...)
	}
	if n > 0 && len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

// Reset empties the ring.
func Reset() {
	ringMu.Lock()
	ring = ring[:0]
	ringPos = 0
	ringMu.Unlock()
}

// Middleware returns a protoactor receiver middleware tracing actors of the
// given kind. When tracing is off it costs one atomic load per message.
// Props adds the node's meter (handling times, mailbox depth).
func Middleware(kind, id string) actor.ReceiverMiddleware { return middleware(kind, id, nil) }

func middleware(kind, id string, m *Meter) actor.ReceiverMiddleware {
	f := flag(kind)
	return func(next actor.ReceiverFunc) actor.ReceiverFunc {
		// One actor's messages are handled one at a time: tm is its own.
		tm := &timer{m: m, kind: kind, id: id}
		return func(c actor.ReceiverContext, env *actor.MessageEnvelope) {
			traced := anyOn.Load() && (allOn.Load() || f.Load())
			obs := tm.observer()
			if !traced && obs == nil {
				next(c, env)
				if _, stopped := env.Message.(*actor.Stopped); stopped && m != nil {
					m.Forget(kind, id)
				}
				return
			}
			start := time.Now()
			var r Record
			if traced {
				r = begin(kind, id, start, env.Message, env.Sender)
			}
			next(c, env)
			observe(obs, time.Since(start))
			if traced {
				r.Handling = time.Since(start)
				Add(r)
			}
			if _, stopped := env.Message.(*actor.Stopped); stopped && m != nil {
				m.Forget(kind, id)
			}
		}
	}
}

// Named is a message whose type alone does not say what it is: a wrapper
// (a step with a completion callback) or a container of another
// component's step run in an actor's turn. Traces print its TraceName.
type Named interface{ TraceName() string }

// Name is how traces name msg: its TraceName, else its type
// ("package.Type", "*package.Type").
func Name(msg any) string {
	if n, ok := msg.(Named); ok {
		return n.TraceName()
	}
	return fmt.Sprintf("%T", msg)
}

// begin is the record of a message about to be handled: what it says is
// read before (a batch is recycled once handled); Handling is filled in
// after.
func begin(kind, id string, start time.Time, msg any, sender *actor.PID) Record {
	r := Record{At: start, Kind: kind, ID: id, Message: Name(msg)}
	if sender != nil {
		r.Sender = sender.Id
	}
	if st, ok := msg.(Stamped); ok {
		if at := st.EnqueuedAt(); at > 0 {
			r.Queued = time.Duration(start.UnixNano() - at)
		}
		r.TraceID = st.TraceID()
	}
	if c, ok := msg.(Causal); ok && c.TraceClock() != 0 {
		r.Clock = Witness(c.TraceClock())
	} else {
		r.Clock = Tick()
	}
	return r
}

// Tracer traces one actor from inside its own Receive, and times it for
// the node's meter. Hot actors use it instead of Middleware: protoactor
// wraps every message in an envelope (one allocation) as soon as an actor
// has a receiver middleware, tracing on or off.
type Tracer struct {
	kind, id string
	f        *atomic.Bool
	tm       timer
}

// NewTracer returns the tracer of actor id of the given kind; m (nil:
// none) is the node's meter.
func NewTracer(kind, id string, m *Meter) *Tracer {
	return &Tracer{kind: kind, id: id, f: flag(kind), tm: timer{m: m, kind: kind, id: id}}
}

// On reports whether the actor's messages are traced or timed now. Called
// from the actor's own turn only.
func (t *Tracer) On() bool {
	if !hooks || gate.Load() == 0 {
		return false // tracing and metrics off: one load, inlined
	}
	return t.on()
}

func (t *Tracer) on() bool {
	return anyOn.Load() && (allOn.Load() || t.f.Load()) || t.tm.observer() != nil
}

// Span is one message being handled by a Tracer's actor.
type Span struct {
	start  time.Time
	rec    Record
	traced bool
}

// Begin starts the span of msg; call it only when On.
func (t *Tracer) Begin(msg any, sender *actor.PID) Span {
	sp := Span{start: time.Now(), traced: anyOn.Load() && (allOn.Load() || t.f.Load())}
	if sp.traced {
		sp.rec = begin(t.kind, t.id, sp.start, msg, sender)
	}
	return sp
}

// Link gives the span's record trace id id (a write's StreamTrace).
func (sp *Span) Link(id uint64) { sp.rec.TraceID = id }

// StreamTrace is the trace id of the replication stream records a primary
// shard wrote in one turn, derived from what both ends of the link know
// without a byte more on the wire: the shard and its stream offset after
// the turn (the offset an S frame carries). The primary's record of the
// write and the replica's apply of that frame get the same id. The top
// bit sets it apart from a client's id (client id << 32 | read).
func StreamTrace(shard int, offset int64) uint64 {
	return 1<<63 | uint64(shard&0x7fff)<<48 | uint64(offset)&(1<<48-1)
}

// End records the span's message as handled.
func (t *Tracer) End(sp Span) {
	d := time.Since(sp.start)
	observe(t.tm.observer(), d)
	if sp.traced {
		sp.rec.Handling = d
		Add(sp.rec)
	}
}

// TimeFormat is the time= of a DEBUG TRACE line.
const TimeFormat = "2006-01-02T15:04:05.000000Z07:00"

// String formats r as DEBUG TRACE prints it: key=value fields, the
// message last (it may contain spaces), the trace id in hex.
func (r Record) String() string {
	sender := r.Sender
	if sender == "" {
		sender = "-"
	}
	return fmt.Sprintf("seq=%d time=%s clock=%d kind=%s id=%s sender=%s queued=%s handling=%s trace=%x msg=%s",
		r.Seq, r.At.Format(TimeFormat), r.Clock, r.Kind, r.ID, sender, r.Queued, r.Handling, r.TraceID, r.Message)
}

// RecentLines is Recent, formatted.
func RecentLines(n int) []string {
	recs := Recent(n)
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.String()
	}
	return out
}
