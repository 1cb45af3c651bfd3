// Package enginetest runs the data engine in-process, as a node's event
// loop reaches it but without sockets, goroutines or the wall clock: one
// engine shard (actors/engine.Shard) owning every slot, on a virtual clock
// that moves only when told to (or to a blocked command's timeout) and a
// random source seeded by the caller, so one seed gives the same reply
// bytes on every run. A Client takes RESP command arguments and returns the
// exact bytes a standalone node writes: the command is resolved and checked
// with netio/command as netio's dispatch does, routed to its slot, run by
// the engine's handlers, fanout parts merged; the event-loop commands that
// command streams need (PING, ECHO, SELECT 0, MULTI, EXEC, DISCARD, UNWATCH)
// are answered here (see Serves). The shard's Host runs timers on the
// virtual clock and reaches no network.
package enginetest

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/slotd/slotd/actors/engine"
)

// DefaultStart is where the virtual clock starts unless Options say.
var DefaultStart = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// expireTick is the virtual time between two active-expiry cycles (a
// node's default hz 10).
const expireTick = 100 * time.Millisecond

// Options configure New.
type Options struct {
	// Seed seeds the shard's random source (SPOP, RANDOMKEY, sampling).
	Seed uint64
	// Start is the virtual clock's first instant (zero: DefaultStart).
	Start time.Time
	// Migrate performs MIGRATE's transfer of a job, filling Restored and
	// ErrMsg as the shard actor's transfer does. nil: no target is
	// reachable in-process, and MIGRATE answers what a node answers when
	// the target refuses the connection.
	Migrate func(job *engine.MigrateJob)
}

// Engine is one engine shard, its virtual clock and its Host. It is not
// safe for concurrent use: like the shard actor it serves one step at a
// time.
type Engine struct {
	shard   *engine.Shard
	nowUS   int64 // virtual clock, unix µs
	tick    int64 // expireTick periods elapsed at the last active-expiry cycle
	timers  []*timer
	migrate func(job *engine.MigrateJob)
	clients int64
}

// timer is a blocked command's timeout on the virtual clock.
type timer struct {
	at        int64 // unix µs
	bl        *engine.Blocked
	cancelled bool
}

// New builds an empty engine.
func New(o Options) *Engine {
	start := o.Start
	if start.IsZero() {
		start = DefaultStart
	}
	e := &Engine{nowUS: start.UnixMicro(), migrate: o.Migrate}
	e.tick = e.nowUS / expireTick.Microseconds()
	rng := rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15))
	e.shard = engine.NewShard(rng, func() int64 { return e.nowUS }, (*host)(e))
	return e
}

// Shard is the engine's shard, for tests that look at its state directly.
func (e *Engine) Shard() *engine.Shard { return e.shard }

// Now is the virtual clock.
func (e *Engine) Now() time.Time { return time.UnixMicro(e.nowUS) }

func (e *Engine) nowMS() int64 { return e.nowUS / 1000 }

// Advance moves the virtual clock forward by d: timeouts falling due fire
// in order, each at its own instant, and the active-expiry cycle runs once
// for each tick (100 ms) crossed, at the end.
func (e *Engine) Advance(d time.Duration) {
	if d <= 0 {
		return
	}
	e.advanceTo(e.nowUS + d.Microseconds())
}

// AdvanceTo moves the virtual clock forward to t (never back).
func (e *Engine) AdvanceTo(t time.Time) {
	if us := t.UnixMicro(); us > e.nowUS {
		e.advanceTo(us)
	}
}

func (e *Engine) advanceTo(us int64) {
	for {
		t := e.nextTimer()
		if t == nil || t.at > us {
			break
		}
		e.nowUS = max(e.nowUS, t.at)
		e.fire(t)
	}
	e.nowUS = us
	if tick := us / expireTick.Microseconds(); tick != e.tick {
		e.tick = tick
		e.shard.ActiveExpire(e.nowMS())
		e.shard.EndTurn()
	}
}

// nextTimer is the earliest armed timeout (the first armed of equal ones).
func (e *Engine) nextTimer() *timer {
	var next *timer
	live := e.timers[:0]
	for _, t := range e.timers {
		if t.cancelled {
			continue
		}
		live = append(live, t)
		if next == nil || t.at < next.at {
			next = t
		}
	}
	clear(e.timers[len(live):])
	e.timers = live
	return next
}

// fire runs t's timeout in the shard.
func (e *Engine) fire(t *timer) {
	t.cancelled = true
	e.shard.Timeout(t.bl, e.nowMS())
	e.shard.EndTurn()
}

// host is the shard's Host on the virtual clock.
type host Engine

// After implements engine.Host.
func (h *host) After(d time.Duration, bl *engine.Blocked) func() {
	t := &timer{at: h.nowUS + max(d.Microseconds(), 1), bl: bl}
	h.timers = append(h.timers, t)
	return func() { t.cancelled = true }
}

// Migrate implements engine.Host: the transfer runs to its end at once.
func (h *host) Migrate(job *engine.MigrateJob, _ bool) bool {
	if h.migrate != nil {
		h.migrate(job)
		return false
	}
	job.Restored = make([]bool, len(job.Keys))
	job.ErrMsg = "IOERR error or timeout writing to target instance"
	return false
}

// ScriptBegin implements engine.Host. Nothing can kill a script here: no
// other client runs while it does.
func (h *host) ScriptBegin(uint64, *engine.RunningFunction) context.Context {
	return context.Background()
}

// ScriptEnd implements engine.Host.
func (h *host) ScriptEnd() {}

// ScriptWrites implements engine.Host.
func (h *host) ScriptWrites() bool { return true }
