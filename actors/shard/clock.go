package shard

import (
	"time"
	_ "unsafe" // go:linkname
)

// monotonic is the engine's Mono clock: the runtime's monotonic nanoseconds
// (what time.Since reads, without its wall-clock bookkeeping). Commandstats
// read it once per command, so the shortest path matters: it is about a
// third cheaper than time.Since through a closure.
//
//go:linkname monotonic runtime.nanotime
func monotonic() int64

// wallClock is a shard actor's wall clock read through the monotonic one:
// one clock read per batch gives the engine both its unix ms (expiry, LRU)
// and the start of its command clock. A clock read costs 100-250 ns on a
// machine whose hypervisor traps the TSC, and time.Now makes two. The
// offset is synced on every 100 ms tick, so a step of the system clock
// reaches the keyspace's notion of now within a tick.
type wallClock struct {
	offset int64 // unix ns minus monotonic ns at the last sync
}

// sync takes the offset anew and returns the wall clock it read, in unix ms.
func (c *wallClock) sync() int64 {
	t := time.Now()
	c.offset = t.UnixNano() - monotonic()
	return t.UnixMilli()
}

// read returns the wall clock in unix ms and the monotonic ns it was read
// from.
func (c *wallClock) read() (unixMS, mono int64) {
	mono = monotonic()
	return (mono + c.offset) / 1e6, mono
}

// now is the wall clock in unix ms.
func (c *wallClock) now() int64 {
	ms, _ := c.read()
	return ms
}
