package keycmd

import (
	"github.com/slotd/slotd/actors/engine/types/stream"
	"runtime"
	"runtime/debug"
	"strconv"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/resp"
)

// MEMORY USAGE reports what a key would cost in Redis's own representation
// (object header, dict entry, key string and the value's encoding), so
// capacity planning done against Redis carries over; the per-type
// estimators live next to each type. The other MEMORY subcommands report on
// the Go heap.

func registerMemory() {
	command.Register(&command.Spec{Name: "memory", Arity: -2, Group: "server", Since: "4.0.0",
		Summary: "A container for memory diagnostics commands",
		Subcommands: map[string]*command.Spec{
			"usage": engine.Handle(&command.Spec{Arity: -3, Flags: []string{"readonly"}, First: 2, Last: 2, Step: 1,
				Categories: []string{"read", "slow"}, Group: "server", Since: "4.0.0",
				Summary: "Estimate the memory usage of a key", Exec: command.Shard}, cmdMemoryUsage),
			"doctor": engine.Handle(&command.Spec{Arity: 2, Categories: []string{"slow"}, Group: "server", Since: "4.0.0",
				Tips:    []string{"nondeterministic_output", "request_policy:all_shards", "response_policy:special"},
				Summary: "Outputs memory problems report", Exec: command.Fanout,
				Merge: engine.Merge(func(w *resp.Writer, _ [][]byte, _ []any) {
					w.Verbatim("Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.")
				})}, func(c *engine.Call) { c.Result(nil) }),
			"malloc-stats": engine.Handle(&command.Spec{Arity: 2, Categories: []string{"slow"}, Group: "server", Since: "4.0.0",
				Tips:    []string{"nondeterministic_output", "request_policy:all_shards", "response_policy:special"},
				Summary: "Show allocator internal stats", Exec: command.Fanout,
				Merge: engine.Merge(func(w *resp.Writer, _ [][]byte, _ []any) {
					var ms runtime.MemStats
					runtime.ReadMemStats(&ms)
					w.Verbatim("Go runtime heap: alloc=" + strconv.FormatInt(int64(ms.HeapAlloc), 10) + " sys=" + strconv.FormatInt(int64(ms.HeapSys), 10) +
						" idle=" + strconv.FormatInt(int64(ms.HeapIdle), 10) + " released=" + strconv.FormatInt(int64(ms.HeapReleased), 10) +
						" objects=" + strconv.FormatInt(int64(ms.HeapObjects), 10) + " gc-cycles=" + strconv.FormatInt(int64(ms.NumGC), 10))
				})}, func(c *engine.Call) { c.Result(nil) }),
			"purge": engine.Handle(&command.Spec{Arity: 2, Categories: []string{"slow"}, Group: "server", Since: "4.0.0",
				Tips:    []string{"request_policy:all_shards", "response_policy:all_succeeded"},
				Summary: "Ask the allocator to release memory", Exec: command.Fanout,
				Merge: engine.Merge(func(w *resp.Writer, _ [][]byte, _ []any) {
					debug.FreeOSMemory()
					w.OK()
				})}, func(c *engine.Call) { c.Result(nil) }),
			"stats": engine.Handle(&command.Spec{Arity: 2, Categories: []string{"slow"}, Group: "server", Since: "4.0.0",
				Tips:    []string{"nondeterministic_output", "request_policy:all_shards", "response_policy:special"},
				Summary: "Show memory usage details", Exec: command.Fanout,
				Merge: engine.Merge(mergeMemoryStats)}, func(c *engine.Call) {
				var keys, expires int64
				c.S.ForEachSlot(func(_ int, ks *keyspace.Keyspace) {
					keys += int64(ks.Len())
					expires += int64(ks.ExpiresLen())
				})
				c.Result([2]int64{keys, expires})
			}),
			"help": engine.Handle(&command.Spec{Arity: 2, Categories: []string{"slow"}, Group: "server", Since: "4.0.0",
				Summary: "Show helpful text about the different subcommands", Exec: command.Fanout,
				Merge: engine.Merge(func(w *resp.Writer, _ [][]byte, _ []any) {
					lines := []string{
						"MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
						"DOCTOR",
						"    Return memory problems reports.",
						"MALLOC-STATS",
						"    Return internal statistics report from the memory allocator.",
						"PURGE",
						"    Attempt to purge dirty pages for reclamation by the allocator.",
						"STATS",
						"    Return information about the memory usage of the server.",
						"USAGE <key> [SAMPLES <count>]",
						"    Return memory in bytes used by <key> and its value. Nested values are",
						"    sampled up to <count> times (default: 5, 0 means sample all).",
						"HELP",
						"    Prints this help.",
					}
					w.Array(len(lines))
					for _, l := range lines {
						w.Simple(l)
					}
				})}, func(c *engine.Call) { c.Result(nil) }),
		}})
}

// cmdMemoryUsage implements MEMORY USAGE key [SAMPLES count].
func cmdMemoryUsage(c *engine.Call) {
	for i := 3; i < len(c.Args); i++ {
		if engine.EqFold(c.Args[i], "samples") && i+1 < len(c.Args) {
			n, ok := c.IntArg(c.Args[i+1])
			if !ok {
				return
			}
			if n < 0 {
				c.W.Error(engine.ErrSyntax)
				return
			}
			i++
			continue
		}
		c.W.Error(engine.ErrSyntax)
		return
	}
	e := c.Lookup(c.Args[2])
	if e == nil {
		c.W.Null()
		return
	}
	c.W.Int(keyMemory(e))
}

// keyMemory is the Redis-representation estimate for one key.
func keyMemory(e *keyspace.Entry) int64 {
	const dictEntry = 24
	size := int64(dictEntry) + sdsSize(len(e.Key()))
	switch e.Kind {
	case keyspace.KindString:
		if _, ok := engine.ParseInt(e.Str); ok && len(e.Str) <= 20 {
			size += 16 // robj with the integer inline
		} else if len(e.Str) <= 44 {
			size += allocClass(16 + 3 + int64(len(e.Str)) + 1) // embstr: robj and sds in one block
		} else {
			size += 16 + sdsSize(len(e.Str))
		}
	case keyspace.KindList:
		size += int64(engine.ListMemory(e))
	case keyspace.KindHash:
		size += int64(engine.HashMemory(e))
	case keyspace.KindSet:
		size += engine.SetMemory(e)
	case keyspace.KindZSet:
		size += engine.ZsetMemory(e)
	case keyspace.KindStream:
		if st, ok := e.Obj.(*stream.Stream); ok {
			size += st.MemoryBytes(allocClass)
		}
	}
	if e.Expire != 0 {
		size += dictEntry
	}
	return size
}

// sdsSize is an sds string's allocation: header, bytes and NUL.
func sdsSize(n int) int64 {
	hdr := int64(3)
	if n >= 1<<8 {
		hdr = 5
	}
	if n >= 1<<16 {
		hdr = 9
	}
	return allocClass(hdr + int64(n) + 1)
}

// allocClass rounds to jemalloc-like size classes (8-byte steps below 128,
// then four classes per power of two).
func allocClass(n int64) int64 {
	if n <= 8 {
		return 8
	}
	if n <= 128 {
		return (n + 15) &^ 15
	}
	step := int64(1)
	for step*8 < n {
		step <<= 1
	}
	return (n + step - 1) &^ (step - 1)
}

func mergeMemoryStats(w *resp.Writer, _ [][]byte, parts []any) {
	var keys, expires int64
	for _, p := range parts {
		if v, ok := p.([2]int64); ok {
			keys += v[0]
			expires += v[1]
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	w.Map(6)
	w.BulkString("peak.allocated")
	w.Int(int64(ms.HeapSys))
	w.BulkString("total.allocated")
	w.Int(int64(ms.HeapAlloc))
	w.BulkString("keys.count")
	w.Int(keys)
	w.BulkString("keys.bytes-per-key")
	if keys > 0 {
		w.Int(int64(ms.HeapAlloc) / keys)
	} else {
		w.Int(0)
	}
	w.BulkString("db.0")
	w.Map(2)
	w.BulkString("overhead.hashtable.main")
	w.Int(keys * 24)
	w.BulkString("overhead.hashtable.expires")
	w.Int(expires * 24)
	w.BulkString("fragmentation")
	w.Double(float64(ms.HeapSys) / float64(max(ms.HeapAlloc, 1)))
}
