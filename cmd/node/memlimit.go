package node

import (
	"math"
	"runtime/debug"
	"sync"

	"github.com/slotd/slotd/netio/config"
)

// The Go runtime's soft memory limit (debug.SetMemoryLimit) follows
// maxmemory, so the collector runs harder as the heap nears the limit
// instead of letting garbage pile up until the kernel kills the node.
// go-memory-limit sets it outright; at 0 (the default) it is derived from
// maxmemory, and without maxmemory the limit the process started with
// (GOMEMLIMIT, else none) stays.

// goMemoryHeadroom is what the limit allows beyond maxmemory besides
// goMemoryMargin of it: the runtime, the node's own structures and the
// garbage of a collection cycle (an idle node maps about 20 MB).
const goMemoryHeadroom = 16 << 20

// goMemoryMargin: the limit is maxmemory + maxmemory/goMemoryMargin + the
// headroom.
const goMemoryMargin = 4

var (
	memLimitOnce sync.Once
	memLimitBase int64 // the limit before any node set one
)

// GoMemoryLimit is the runtime limit for the directives' values, or 0 for
// the process's own (GOMEMLIMIT, else none).
func GoMemoryLimit(maxmemory, explicit int64) int64 {
	switch {
	case explicit > 0:
		return explicit
	case maxmemory <= 0:
		return 0
	case maxmemory > (math.MaxInt64-goMemoryHeadroom)/2:
		return math.MaxInt64
	}
	return maxmemory + maxmemory/goMemoryMargin + goMemoryHeadroom
}

// followMemoryLimit applies the limit now and on every CONFIG SET of
// maxmemory or go-memory-limit; the returned func restores the process's
// own limit (the node stopped).
func followMemoryLimit(cfg *config.Config) (restore func()) {
	memLimitOnce.Do(func() { memLimitBase = debug.SetMemoryLimit(-1) })
	apply := func(string) {
		lim := GoMemoryLimit(cfg.Int("maxmemory"), cfg.Int("go-memory-limit"))
		if lim == 0 {
			lim = memLimitBase
		}
		debug.SetMemoryLimit(lim)
	}
	apply("")
	cfg.OnChange("maxmemory", apply)
	cfg.OnChange("go-memory-limit", apply)
	return func() { debug.SetMemoryLimit(memLimitBase) }
}
