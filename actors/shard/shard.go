// Package shard owns the shard actors: one protoactor actor around each
// shard of the data engine (actors/engine), its mailbox, its ticks, and the
// services the engine asks of it (engine.Host) — timers for blocked
// commands, MIGRATE's transfers, the script worker that runs script
// batches off the event loops — plus the node's Group of them and the
// named messages other components send them.
//
// Actors run on protoactor-go with the synchronized dispatcher: an idle
// actor's mailbox is drained on the sending goroutine (usually the event
// loop that parsed the batch), so the common case costs a function call, not
// a goroutine wake-up, while a busy actor still gets its messages queued.
package shard

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/trace"
	"github.com/slotd/slotd/netio/batch"
)

// Actor is one shard actor: the engine shard it owns and the state of its
// mailbox policies.
type Actor struct {
	eng *engine.Shard
	g   *Group
	id  int
	pid *actor.PID
	tr  *trace.Tracer // DEBUG TRACE / trace-actors for this actor

	script scriptState // the script worker and the running script (script.go)
	held   []any       // messages received while a MIGRATE transfers (migrate.go)
	joint  jointState  // the actor's part in a joint step (joint.go)
	clock  wallClock   // read once per batch (clock.go)
}

// Named messages of the actor itself.
type (
	// tick drives active expiry.
	tick struct{}
	// blockTimeout is a blocked command's timeout firing.
	blockTimeout struct{ bl *engine.Blocked }
	// migrateDone is the end of a MIGRATE transfer.
	migrateDone struct{ job *engine.MigrateJob }
	// scriptDone tells the actor that the script worker is done with the
	// shard's state.
	scriptDone struct{}
)

// now is the wall clock in unix ms.
func now() int64 { return time.Now().UnixMilli() }

// Receive implements actor.Actor.
func (a *Actor) Receive(ctx actor.Context) {
	if a.tr.On() {
		sp := a.tr.Begin(ctx.Message(), ctx.Sender())
		before := a.eng.Offset()
		a.handle(ctx.Message())
		if after := a.eng.Offset(); after != before {
			// The turn's writes went to the stream: the replica's apply
			// of them carries this id (trace.StreamTrace).
			sp.Link(trace.StreamTrace(a.id, after))
		}
		a.tr.End(sp)
		return
	}
	a.handle(ctx.Message())
}

func (a *Actor) handle(msg any) {
	if !a.holdWhileTaken(msg) && !a.holdForMigrate(msg) && !a.holdForScript(msg) && !a.holdForJoint(msg) {
		switch m := msg.(type) {
		case *batch.Batch:
			if !a.offloadScript(m) {
				ms, mono := a.clock.read()
				a.eng.RunAt(m, ms, mono)
			}
		case tick:
			a.eng.ActiveExpire(a.clock.sync())
		case blockTimeout:
			a.eng.Timeout(m.bl, a.clock.now())
		case op:
			m.run(a.eng)
		}
	}
	// A shard lent to the script worker or taken by a joint step ends no
	// turn: another goroutine may run its state.
	if !a.script.offloaded && !a.joint.taken {
		a.eng.EndTurn()
	}
}

// After implements engine.Host: the timeout comes back as a message.
func (a *Actor) After(d time.Duration, bl *engine.Blocked) func() {
	root, pid := a.g.root, a.pid
	t := time.AfterFunc(d, func() { root.Send(pid, blockTimeout{bl}) })
	return func() { t.Stop() }
}

// Group is the shard actors of one node around the engine's shards.
type Group struct {
	*engine.Group
	actors []*Actor
	root   *actor.RootContext
	stop   chan struct{}
	// base is cancelled when the group stops, and with it running scripts.
	base       context.Context
	cancelBase context.CancelFunc
	// scriptLimitMS is lua-time-limit (busy-reply-threshold) in ms.
	scriptLimitMS atomic.Int64
	scriptWatch   scriptWatch // script-memory-limit (script_memory.go)
	log           zerolog.Logger
}

// Option configures NewGroup.
type Option func(*engine.Options)

// WithDatabases gives every shard n databases (the databases directive;
// without it, Redis's default of 16).
func WithDatabases(n int) Option { return func(o *engine.Options) { o.Databases = n } }

// NewGroup spawns n shard actors (at least one) on system.
func NewGroup(system *actor.ActorSystem, n int, log zerolog.Logger, opts ...Option) *Group {
	n = max(n, 1)
	seed := uint64(time.Now().UnixNano())
	eo := engine.Options{
		Rand:  func(i int) *rand.Rand { return rand.New(rand.NewPCG(seed, uint64(i))) },
		Clock: func() int64 { return time.Now().UnixMicro() },
		Mono:  monotonic,
		Log:   log,
	}
	for _, o := range opts {
		o(&eo)
	}
	eg := engine.NewGroup(n, eo)
	g := &Group{Group: eg, root: system.Root, stop: make(chan struct{}), log: log}
	g.base, g.cancelBase = context.WithCancel(context.Background())
	meter := trace.MeterOf(system)
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("shard-%d", i)
		a := &Actor{eng: eg.Shard(i), g: g, id: i, tr: trace.NewTracer("shard", name, meter)}
		a.clock.sync()
		a.eng.SetHost(a)
		// Traced and timed from Receive, not by a middleware: no envelope
		// per message.
		opts := []actor.PropsOption{actor.WithDispatcher(actor.NewSynchronizedDispatcher(300))}
		if meter != nil {
			opts = append(opts, actor.WithMailbox(meter.Mailbox("shard", name)))
		}
		props := actor.PropsFromProducer(func() actor.Actor { return a }, opts...)
		pid, err := system.Root.SpawnNamed(props, name)
		if err != nil {
			panic(err)
		}
		a.pid = pid
		g.actors = append(g.actors, a)
	}
	go g.ticker()
	return g
}

func (g *Group) ticker() {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-t.C:
			for _, a := range g.actors {
				g.root.Send(a.pid, tick{})
			}
		}
	}
}

// Stop ends the ticker, the script workers and the actors.
func (g *Group) Stop() {
	close(g.stop)
	g.cancelBase()
	for _, a := range g.actors {
		g.root.Stop(a.pid)
	}
}

// Send hands a batch to shard i. The batch must not be touched until its
// Completer is called.
func (g *Group) Send(i int, b *batch.Batch) {
	b.Seal()
	if trace.Enabled("shard") {
		b.SetEnqueued(time.Now().UnixNano())
	}
	g.root.Send(g.actors[i].pid, b)
}
