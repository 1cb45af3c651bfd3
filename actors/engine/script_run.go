package engine

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slotd/slotd/actors/script"
	"github.com/slotd/slotd/netio/batch"
	"github.com/slotd/slotd/slots"
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
// While a script runs, its shard publishes (start time, state) in one
// atomic word. Event loops read it to answer BUSY to other clients once
// the script has run longer than lua-time-limit; batches that reached the
// actor before that get BUSY at the next tick. SCRIPT KILL uses the word
// to stop a script that has not written yet. Commands of the script's own
// client wait for it, as in Redis.

// Script states in the low two bits of scriptShard.word.
const (
	scriptRunning = 1 // no write so far: killable
	scriptWrote   = 2
	scriptKilled  = 3
)

// scriptGroup is the node-wide scripting state.
type scriptGroup struct {
	once    sync.Once
	cache   *script.Cache
	base    context.Context // cancelled when the group stops
	limitMS atomic.Int64    // lua-time-limit (busy-reply-threshold)
	routing *slots.Holder   // the routing snapshot (cluster mode checks)
	libs    *script.Libraries
}

// scriptShard is one shard's scripting state.
type scriptShard struct {
	vm        *script.VM
	offloaded bool              // a batch with a script runs on the worker
	pending   []any             // messages held meanwhile
	work      chan *batch.Batch // to the worker goroutine

	// word is start unix-ns << 2 | state, 0 when no script runs. owner is
	// the client id of the running script's batch.
	word  atomic.Uint64
	owner atomic.Uint64
	// function: the running script is a function (FCALL), not an EVAL.
	function atomic.Bool
	running  atomic.Pointer[RunningFunction] // FUNCTION STATS
	libGen   uint64                          // the registry generation the VM's libraries match

	mu     sync.Mutex // guards ctx/cancel between the actor and SCRIPT KILL
	ctx    context.Context
	cancel context.CancelFunc
}

// scriptDone tells the actor that the goroutine running a script batch has
// finished with the shard's state.
type scriptDone struct{}

func (g *Group) scriptInit() *scriptGroup {
	sg := &g.scripts
	sg.once.Do(func() {
		sg.cache = script.NewCache()
		sg.libs = script.NewLibraries()
		ctx, cancel := context.WithCancel(context.Background())
		sg.base = ctx
		go func() {
			<-g.stop
			cancel()
		}()
	})
	return sg
}

// Scripts is the node's script cache.
func (g *Group) Scripts() *script.Cache { return g.scriptInit().cache }

// ScriptTimeLimit is lua-time-limit in milliseconds, for the server to keep
// current.
func (g *Group) ScriptTimeLimit() *atomic.Int64 { return &g.scripts.limitMS }

// SetRouting gives the shards the routing snapshot, so scripts can refuse
// keys this node does not serve. Call before serving.
func (g *Group) SetRouting(h *slots.Holder) { g.scripts.routing = h }

func (g *Group) clusterMode() bool {
	h := g.scripts.routing
	if h == nil {
		return false
	}
	t := h.Load()
	return t != nil && t.Cluster
}

// ScriptBusy reports whether shard i runs a script for longer than
// lua-time-limit, and the id of the client whose script it is (that client
// waits rather than getting BUSY, as in Redis).
func (g *Group) ScriptBusy(i int) (busy bool, owner uint64) {
	sh := &g.shards[i].script
	v := sh.word.Load()
	if v == 0 {
		return false, 0
	}
	lim := g.scripts.limitMS.Load()
	if lim <= 0 || time.Now().UnixNano()-int64(v>>2) <= lim*int64(time.Millisecond) {
		return false, 0
	}
	return true, sh.owner.Load()
}

// AnyScriptBusy is ScriptBusy over every shard (for fanout commands).
func (g *Group) AnyScriptBusy() bool {
	for i := range g.shards {
		if busy, _ := g.ScriptBusy(i); busy {
			return true
		}
	}
	return false
}

// KillScripts is SCRIPT KILL: it stops every script running longer than
// lua-time-limit that has not written. It returns the error reply, or ""
// when a script was killed.
func (g *Group) KillScripts() string { return g.killLua(false) }

// KillFunction is FUNCTION KILL: as KillScripts, for functions.
func (g *Group) KillFunction() string { return g.killLua(true) }

func (g *Group) killLua(function bool) string {
	killed, unkillable, other := 0, 0, 0
	for i, s := range g.shards {
		sh := &s.script
		sh.mu.Lock()
		v := sh.word.Load()
		if busy, _ := g.ScriptBusy(i); busy && sh.function.Load() != function {
			other++
		} else if busy {
			switch v & 3 {
			case scriptRunning:
				if sh.word.CompareAndSwap(v, v|scriptKilled) {
					sh.cancel()
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
		return ErrBusy // an EVAL runs: SCRIPT KILL is the way
	case other > 0:
		return ErrBusyFunction
	}
	return "NOTBUSY No scripts in execution right now."
}

// offloadScript hands b to the shard's script worker when it contains a
// script; it reports whether it did. At most one batch is offloaded at a
// time (later ones are held), so the send never blocks.
func (s *Shard) offloadScript(b *batch.Batch) bool {
	found := false
	for i := range b.Cmds {
		if isScriptSpec(b.Cmds[i].Spec) {
			found = true
			break
		}
	}
	if !found {
		return false
	}
	s.script.offloaded = true
	if s.script.work == nil {
		// One long-lived worker per shard: its stack, grown by the Lua
		// VM, is kept from one script batch to the next.
		s.script.work = make(chan *batch.Batch, 1)
		go s.scriptWorker(s.script.work)
	}
	s.script.work <- b
	return true
}

func (s *Shard) scriptWorker(work chan *batch.Batch) {
	for {
		select {
		case b := <-work:
			s.run(b)
			s.publish()
			s.releaseHeld()
			s.group.root.Send(s.group.pids[s.ID], scriptDone{})
		case <-s.group.stop:
			return
		}
	}
}

// holdForScript keeps messages in order while a script batch is offloaded
// and replays them once it is done. It reports whether it took msg.
func (s *Shard) holdForScript(msg any) bool {
	switch msg.(type) {
	case scriptDone:
		s.script.offloaded = false
		for len(s.script.pending) > 0 && !s.script.offloaded {
			m := s.script.pending[0]
			s.script.pending[0] = nil
			s.script.pending = s.script.pending[1:]
			s.handle(m)
		}
		if len(s.script.pending) == 0 {
			s.script.pending = nil
		}
		return true
	case tick:
		// No expiry pass under a running script; the tick is the moment
		// to answer BUSY to batches queued before the time limit passed.
		if s.script.offloaded {
			kept := s.script.pending[:0]
			for _, m := range s.script.pending {
				if b, ok := m.(*batch.Batch); !ok || !s.failBusy(b) {
					kept = append(kept, m)
				}
			}
			clear(s.script.pending[len(kept):])
			s.script.pending = kept
			return true
		}
	case *batch.Batch:
		if s.script.offloaded {
			if !s.failBusy(msg.(*batch.Batch)) {
				s.script.pending = append(s.script.pending, msg)
			}
			return true
		}
	case unblockTimeout, func(*Shard):
		if s.script.offloaded {
			s.script.pending = append(s.script.pending, msg)
			return true
		}
	}
	return false
}

// failBusy answers every command of b with BUSY when this shard's script
// has run past lua-time-limit, as Redis answers the commands it reads
// meanwhile. Batches of the script's own client wait, and so do those
// with transactions or allow_busy commands (WATCH), which must run later.
func (s *Shard) failBusy(b *batch.Batch) bool {
	busy, owner := s.group.ScriptBusy(s.ID)
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
		b.Out.Error(ErrBusy)
		b.Ends = append(b.Ends, len(b.Out.B))
	}
	// Straight out: this runs beside the offloaded script, whose batches
	// may be held for the AOF.
	s.Stats.Commands.Add(int64(len(b.Cmds)))
	b.Done.BatchDone(b)
	return true
}

// runScript executes sc for the EVAL in c and writes its reply.
func (s *Shard) runScript(c *Call, sc *script.Script, keys, argv [][]byte, readOnly bool) {
	s.runLua(c, readOnly, false, func(vm *script.VM, ctx context.Context, h script.Host) {
		vm.Run(ctx, sc, keys, argv, h, c.W)
	})
}

// runLua runs a script or function (run) in this shard's VM for the call
// c, publishing its running state for BUSY replies and SCRIPT KILL.
func (s *Shard) runLua(c *Call, readOnly, function bool, run func(*script.VM, context.Context, script.Host)) {
	sg := s.group.scriptInit()
	sh := &s.script
	if sh.vm == nil {
		sh.vm = script.NewVM()
	}
	sh.mu.Lock()
	if sh.ctx == nil || sh.ctx.Err() != nil {
		sh.ctx, sh.cancel = context.WithCancel(sg.base)
	}
	ctx := sh.ctx
	if s.cur != nil {
		sh.owner.Store(s.cur.TraceID() >> 32)
	}
	sh.function.Store(function)
	sh.word.Store(uint64(time.Now().UnixNano())<<2 | scriptRunning)
	sh.mu.Unlock()
	defer sh.word.Store(0)

	// A context per run: coroutines derive theirs from it, and cancelling
	// it at the end releases those a script left suspended.
	runCtx, done := context.WithCancel(ctx)
	defer done()
	h := &scriptHost{s: s, slot: c.Slot, readOnly: readOnly, asking: c.Cmd.Asking}
	run(sh.vm, runCtx, h)
	if sh.vm.Broken() {
		sh.vm = nil
	}
}
