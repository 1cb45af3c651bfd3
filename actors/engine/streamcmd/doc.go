// Package streamcmd owns the stream commands (XADD, XRANGE, XREAD,
// consumer groups with XREADGROUP, XACK, XCLAIM, XAUTOCLAIM, XINFO, ...) over
// types/stream, run inside the shard that owns the key.
package streamcmd
