package shard

import (
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"time"

	"github.com/slotd/slotd/actors/script"
	"github.com/slotd/slotd/netio/config"
)

// The memory budget of scripts (actors/script/budget.go): while a script
// runs, a watcher compares the Go heap with what it was when the script
// started, every scriptMemoryTick, and stops the script (its context
// cancelled with script.ErrNoMemory) once it grew by more than the budget
// and still does after a collection. The heap is the whole process's, so
// what other shards write meanwhile counts too. The watcher sleeps while
// no script runs.

// scriptMemoryTick is how often the watcher looks: a script cannot
// allocate much more than memory bandwidth times this between two looks.
const scriptMemoryTick = 2 * time.Millisecond

// scriptGCGap is the least time between two collections the watcher
// forces for one script (a script making garbage fast would otherwise
// collect continuously).
const scriptGCGap = 50 * time.Millisecond

// scriptWatch is the group's watcher state.
type scriptWatch struct {
	wake    chan struct{} // a script started (buffered: 1)
	started atomic.Bool   // the watcher goroutine runs
}

// followScriptMemory keeps ScriptMemoryLimit equal to script-memory-limit
// (ScriptMemoryBudget).
func (g *Group) followScriptMemory(cfg *config.Config) {
	apply := func(string) {
		g.ScriptMemoryLimit.Store(ScriptMemoryBudget(cfg.Int("script-memory-limit"), cfg.Int("maxmemory"), totalMemory()))
	}
	apply("")
	cfg.OnChange("script-memory-limit", apply)
	cfg.OnChange("maxmemory", apply)
}

// ScriptMemoryBudget resolves script-memory-limit: the directive when set,
// else the least of maxmemory (when set), a quarter of the machine's
// memory (ram, when known) and 1 GiB.
func ScriptMemoryBudget(directive, maxmemory, ram int64) int64 {
	if directive > 0 {
		return directive
	}
	b := int64(1 << 30)
	if maxmemory > 0 {
		b = min(b, maxmemory)
	}
	if ram > 0 {
		b = min(b, ram/4)
	}
	return b
}

// watchScriptMemory wakes the watcher for a script that starts now,
// starting it the first time.
func (g *Group) watchScriptMemory() {
	w := &g.scriptWatch
	if !w.started.Load() && w.started.CompareAndSwap(false, true) {
		w.wake = make(chan struct{}, 1)
		go g.scriptMemoryWatcher(w.wake)
	}
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// watched is what the watcher knows of one actor's running script.
type watched struct {
	word   uint64 // the script's start word (a new word: a new script)
	base   int64  // heap bytes when first seen
	lastGC time.Time
}

func (g *Group) scriptMemoryWatcher(wake chan struct{}) {
	seen := make([]watched, len(g.actors))
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	heap := func() int64 {
		metrics.Read(sample)
		return int64(sample[0].Value.Uint64())
	}
	for {
		select {
		case <-g.stop:
			return
		case <-wake:
		}
		t := time.NewTicker(scriptMemoryTick)
		for running := true; running; {
			running = false
			now := heap()
			for i, a := range g.actors {
				v := a.script.word.Load()
				if v == 0 || v&3 == scriptKilled {
					seen[i].word = 0
					continue
				}
				running = true
				s := &seen[i]
				if s.word>>2 != v>>2 {
					*s = watched{word: v, base: now}
					continue
				}
				limit := g.ScriptMemoryLimit.Load()
				if limit <= 0 || now-s.base <= limit {
					continue
				}
				// Garbage counts until a collection: look again after one.
				if time.Since(s.lastGC) < scriptGCGap {
					continue
				}
				runtime.GC()
				s.lastGC = time.Now()
				if now = heap(); now-s.base > limit && a.script.word.Load()>>2 == v>>2 {
					a.killForMemory(v)
				}
			}
			select {
			case <-g.stop:
				t.Stop()
				return
			case <-t.C:
			}
		}
		t.Stop()
	}
}

// killForMemory stops the script that started at v's time, written or not.
func (a *Actor) killForMemory(v uint64) {
	sh := &a.script
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if cur := sh.word.Load(); cur>>2 == v>>2 && cur&3 != scriptKilled && sh.cancel != nil {
		sh.cancel(script.ErrNoMemory)
		a.g.log.Warn().Int64("limit", a.g.ScriptMemoryLimit.Load()).
			Msg("A script grew the heap past script-memory-limit and was stopped (not enough memory)")
	}
}
