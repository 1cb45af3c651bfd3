package shard

import _ "unsafe" // go:linkname

// monotonic is the engine's Mono clock: the runtime's monotonic nanoseconds
// (what time.Since reads, without its wall-clock bookkeeping). Commandstats
// read it once per command, so the shortest path matters: it is about a
// third cheaper than time.Since through a closure.
//
//go:linkname monotonic runtime.nanotime
func monotonic() int64
