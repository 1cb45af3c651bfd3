package trace

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/extensions"
)

// Observer receives one handling time in seconds (a Prometheus histogram
// is one).
type Observer interface{ Observe(seconds float64) }

// Meter is one node's actor instrumentation, attached to the node's actor
// system as a protoactor extension: the mailboxes of its actors, whose
// depth is read on demand (no cost per message), and, once SetTiming
// switched it on, the handling-time observers. Several nodes in one
// process (tests) keep apart because each has its own actor system.
type Meter struct {
	mu    sync.Mutex
	boxes map[ActorKey]actor.Mailbox
	// timing resolves the observer of an actor; nil: off.
	timing atomic.Pointer[func(kind, id string) Observer]
}

// ActorKey names one actor: its kind (shard, cluster, peer) and id.
type ActorKey struct{ Kind, ID string }

// MailboxDepth is the number of user messages waiting in one actor's
// mailbox.
type MailboxDepth struct {
	ActorKey
	Depth int
}

var meterID = extensions.NextExtensionID()

// timingOn is set once any meter's timing was switched on: until then the
// actors' check is one load of it.
var timingOn atomic.Bool

// ExtensionID implements extensions.Extension.
func (m *Meter) ExtensionID() extensions.ExtensionID { return meterID }

// NewMeter attaches a new meter to sys (before its actors are spawned).
func NewMeter(sys *actor.ActorSystem) *Meter {
	m := &Meter{boxes: map[ActorKey]actor.Mailbox{}}
	sys.Extensions.Register(m)
	return m
}

// MeterOf is the meter attached to sys, nil if none.
func MeterOf(sys *actor.ActorSystem) *Meter {
	if !hooks || sys == nil || sys.Extensions == nil {
		return nil
	}
	m, _ := sys.Extensions.Get(meterID).(*Meter)
	return m
}

// SetTiming switches handling-time measurement on (fn resolves each
// actor's observer, once per actor) or off (nil).
func (m *Meter) SetTiming(fn func(kind, id string) Observer) {
	if fn == nil {
		m.timing.Store(nil)
		return
	}
	timingOn.Store(true)
	gate.Or(gateTiming)
	m.timing.Store(&fn)
}

// Mailbox is the mailbox producer of actor id of the given kind: protoactor's
// unbounded mailbox, registered so that Depths can read it.
func (m *Meter) Mailbox(kind, id string) actor.MailboxProducer {
	return func() actor.Mailbox {
		mb := actor.Unbounded()()
		m.mu.Lock()
		m.boxes[ActorKey{kind, id}] = mb
		m.mu.Unlock()
		return mb
	}
}

// Forget drops an actor's mailbox (the actor stopped).
func (m *Meter) Forget(kind, id string) {
	m.mu.Lock()
	delete(m.boxes, ActorKey{kind, id})
	m.mu.Unlock()
}

// Depths returns every registered actor's mailbox depth, sorted by kind
// and id. It reads one atomic counter per actor.
func (m *Meter) Depths() []MailboxDepth {
	m.mu.Lock()
	out := make([]MailboxDepth, 0, len(m.boxes))
	for k, mb := range m.boxes {
		out = append(out, MailboxDepth{ActorKey: k, Depth: mb.UserMessageCount()})
	}
	m.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// timer is one actor's view of its meter's timing switch.
type timer struct {
	m        *Meter
	kind, id string
	fn       *func(kind, id string) Observer // the switch obs was resolved for
	obs      Observer
}

// observer is the actor's observer while timing is on, else nil. Called
// only from the actor's own turn.
func (t *timer) observer() Observer {
	if !timingOn.Load() || t.m == nil {
		return nil
	}
	fn := t.m.timing.Load()
	if fn == nil {
		return nil
	}
	if fn != t.fn {
		t.fn, t.obs = fn, (*fn)(t.kind, t.id)
	}
	return t.obs
}

// Props are the options of an actor of the given kind spawned on sys:
// traced by Middleware, timed and its mailbox watched when sys has a
// meter.
func Props(sys *actor.ActorSystem, kind, id string) []actor.PropsOption {
	if !hooks {
		return nil
	}
	m := MeterOf(sys)
	opts := []actor.PropsOption{actor.WithReceiverMiddleware(middleware(kind, id, m))}
	if m != nil {
		opts = append(opts, actor.WithMailbox(m.Mailbox(kind, id)))
	}
	return opts
}

func observe(o Observer, d time.Duration) {
	if o != nil {
		o.Observe(d.Seconds())
	}
}
