package shard

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/netio/batch"
)

// Running scripts off the event loop.
//
// Shard actors normally run on the goroutine that sent them a batch, often
// an event loop. A script may run for seconds (or forever, until SCRIPT
// KILL), so a batch that contains a script is executed on the shard's
// script worker goroutine instead. Meanwhile the actor holds the messages
// it receives, in arrival order; when the worker is done it sends
// scriptDone and the actor replays what it held. Only one of them touches
// the shard's state at a time, so the script stays atomic and no loop ever
// waits for it.
//
// While a script runs, its actor publishes (start time, state) in one
// atomic word. Event loops read it to answer BUSY to other clients once
// the script has run longer than lua-time-limit; batches that reached the
// actor before that get BUSY at the next tick. SCRIPT KILL uses the word
// to stop a script that has not written yet. Commands of the script's own
// client wait for it, as in Redis.

// Script states in the low two bits of scriptState.word.
const (
	scriptRunning = 1 // no write so far: killable
	scriptWrote   = 2
	scriptKilled  = 3
)

// scriptState is one actor's script worker and running script.
type scriptState struct {
	offloaded bool              // a batch with a script runs on the worker
	pending   []any             // messages held meanwhile
	work      chan *batch.Batch // to the worker goroutine

	// word is start unix-ns << 2 | state, 0 when no script runs. owner is
	// the client id of the running script's batch.
	word  atomic.Uint64
	owner atomic.Uint64
	// function: the running script is a function (FCALL), not an EVAL.
	function atomic.Bool
	running  atomic.Pointer[runningFunction] // FUNCTION STATS

	mu     sync.Mutex // guards ctx/cancel between the actor and SCRIPT KILL
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// runningFunction is a function run and when it started.
type runningFunction struct {
	engine.RunningFunction
	start time.Time
}

// ScriptBegin implements engine.Host.
func (a *Actor) ScriptBegin(owner uint64, fn *engine.RunningFunction) context.Context {
	sh := &a.script
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.ctx == nil || sh.ctx.Err() != nil {
		sh.ctx, sh.cancel = context.WithCancelCause(a.g.base)
	}
	sh.owner.Store(owner)
	sh.function.Store(fn != nil)
	if fn != nil {
		sh.running.Store(&runningFunction{RunningFunction: *fn, start: time.Now()})
	}
	sh.word.Store(uint64(time.Now().UnixNano())<<2 | scriptRunning)
	a.g.watchScriptMemory()
	return sh.ctx
}

// ScriptEnd implements engine.Host.
func (a *Actor) ScriptEnd() {
	a.script.word.Store(0)
	a.script.running.Store(nil)
}

// ScriptWrites implements engine.Host: a running script that writes can
// no longer be killed.
func (a *Actor) ScriptWrites() bool {
	w := &a.script.word
	for {
		v := w.Load()
		switch v & 3 {
		case scriptKilled:
			return false
		case scriptWrote:
			return true
		}
		if w.CompareAndSwap(v, v&^3|scriptWrote) {
			return true
		}
	}
}

// ScriptTimeLimit is lua-time-limit in milliseconds, for the server to keep
// current.
func (g *Group) ScriptTimeLimit() *atomic.Int64 { return &g.scriptLimitMS }

// ScriptBusy reports whether shard i runs a script for longer than
// lua-time-limit, and the id of the client whose script it is (that client
// waits rather than getting BUSY, as in Redis).
func (g *Group) ScriptBusy(i int) (busy bool, owner uint64) {
	sh := &g.actors[i].script
	v := sh.word.Load()
	if v == 0 {
		return false, 0
	}
	lim := g.scriptLimitMS.Load()
	if lim <= 0 || time.Now().UnixNano()-int64(v>>2) <= lim*int64(time.Millisecond) {
		return false, 0
	}
	return true, sh.owner.Load()
}

// AnyScriptBusy is ScriptBusy over every shard (for fanout commands).
func (g *Group) AnyScriptBusy() bool {
	for i := range g.actors {
		if busy, _ := g.ScriptBusy(i); busy {
			return true
		}
	}
	return false
}

// RunningFunction returns the function a shard runs now, or nil.
func (g *Group) RunningFunction() *engine.RunningFunction {
	for _, a := range g.actors {
		if r := a.script.running.Load(); r != nil {
			out := r.RunningFunction
			out.DurationMS = time.Since(r.start).Milliseconds()
			return &out
		}
	}
	return nil
}

// KillScripts is SCRIPT KILL: it stops every script running longer than
// lua-time-limit that has not written. It returns the error reply, or ""
// when a script was killed.
func (g *Group) KillScripts() string { return g.killLua(false) }

// KillFunction is FUNCTION KILL: as KillScripts, for functions.
func (g *Group) KillFunction() string { return g.killLua(true) }

func (g *Group) killLua(function bool) string {
	killed, unkillable, other := 0, 0, 0
	for i, a := range g.actors {
		sh := &a.script
		sh.mu.Lock()
		v := sh.word.Load()
		if busy, _ := g.ScriptBusy(i); busy && sh.function.Load() != function {
			other++
		} else if busy {
			switch v & 3 {
			case scriptRunning:
				if sh.word.CompareAndSwap(v, v|scriptKilled) {
					sh.cancel(nil)
					killed++
				}
			case scriptWrote:
				unkillable++
			}
		}
		sh.mu.Unlock()
	}
	switch {
	case killed > 0:
		return ""
	case unkillable > 0:
		return "UNKILLABLE Sorry the script already executed write commands against the dataset. " +
			"You can either wait the script termination or kill the server in a hard way using the " +
			"SHUTDOWN NOSAVE command."
	case other > 0 && function:
		return engine.ErrBusy // an EVAL runs: SCRIPT KILL is the way
	case other > 0:
		return engine.ErrBusyFunction
	}
	return "NOTBUSY No scripts in execution right now."
}

// offloadScript hands b to the actor's script worker when it contains a
// script; it reports whether it did. At most one batch is offloaded at a
// time (later ones are held), so the send never blocks.
func (a *Actor) offloadScript(b *batch.Batch) bool {
	if !engine.HasScript(b) {
		return false
	}
	a.script.offloaded = true
	if a.script.work == nil {
		// One long-lived worker per shard: its stack, grown by the Lua
		// VM, is kept from one script batch to the next.
		a.script.work = make(chan *batch.Batch, 1)
		go a.scriptWorker(a.script.work)
	}
	a.script.work <- b
	return true
}

func (a *Actor) scriptWorker(work chan *batch.Batch) {
	for {
		select {
		case b := <-work:
			a.eng.Run(b, now())
			a.eng.EndTurn()
			a.g.root.Send(a.pid, scriptDone{})
		case <-a.g.stop:
			return
		}
	}
}

// holdForScript keeps messages in order while a script batch is offloaded
// and replays them once it is done. It reports whether it took msg.
func (a *Actor) holdForScript(msg any) bool {
	sh := &a.script
	switch msg.(type) {
	case scriptDone:
		sh.offloaded = false
		for len(sh.pending) > 0 && !sh.offloaded {
			m := sh.pending[0]
			sh.pending[0] = nil
			sh.pending = sh.pending[1:]
			a.handle(m)
		}
		if len(sh.pending) == 0 {
			sh.pending = nil
		}
		return true
	case tick:
		// No expiry pass under a running script; the tick is the moment
		// to answer BUSY to batches queued before the time limit passed.
		if sh.offloaded {
			kept := sh.pending[:0]
			for _, m := range sh.pending {
				if b, ok := m.(*batch.Batch); !ok || !a.failBusy(b) {
					kept = append(kept, m)
				}
			}
			clear(sh.pending[len(kept):])
			sh.pending = kept
			return true
		}
	case *batch.Batch:
		if sh.offloaded {
			if !a.failBusy(msg.(*batch.Batch)) {
				sh.pending = append(sh.pending, msg)
			}
			return true
		}
	default:
		if sh.offloaded {
			sh.pending = append(sh.pending, msg)
			return true
		}
	}
	return false
}

// failBusy answers every command of b with BUSY when this shard's script
// has run past lua-time-limit, as Redis answers the commands it reads
// meanwhile. Batches of the script's own client wait, and so do those
// with transactions or allow_busy commands (WATCH), which must run later.
func (a *Actor) failBusy(b *batch.Batch) bool {
	busy, owner := a.g.ScriptBusy(a.id)
	if !busy || b.TraceID()>>32 == owner {
		return false
	}
	for i := range b.Cmds {
		c := &b.Cmds[i]
		if c.Spec == nil || c.TxBegin != 0 || c.Spec.Is("allow_busy") {
			return false
		}
	}
	for i := range b.Cmds {
		b.Out.Proto = int(b.Cmds[i].Proto)
		b.Out.Error(engine.ErrBusy)
		b.Ends = append(b.Ends, len(b.Out.B))
	}
	// Straight out: this runs beside the offloaded script, whose batches
	// may be held for the AOF.
	a.eng.Stats.Commands.Add(int64(len(b.Cmds)))
	b.Done.BatchDone(b)
	return true
}
