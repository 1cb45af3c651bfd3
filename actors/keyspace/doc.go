// Package keyspace owns one slot's key dictionary: entries with values and
// expiry, Redis-style cursor SCAN that survives resizes, random sampling, and
// Redis glob matching.
//
// A shard actor keeps one [Keyspace] per hash slot it serves. Everything here
// is single-threaded by design: a Keyspace must only ever be touched by the
// goroutine that currently runs its owning actor, so there are no locks and no
// goroutines.
//
// # Why not a Go map
//
// SCAN must be resumable with an opaque cursor and must return every key that
// is present for the whole duration of the scan at least once, even when the
// table grows or shrinks between calls. A Go map cannot do that. Keyspace is a
// chained hash table with a power-of-two bucket array and walks it with
// Redis's reverse-binary cursor: the cursor is incremented on its reversed
// bits, so the buckets already visited in a table of size 2^n map exactly onto
// a prefix of the visit order of a table of size 2^(n±k). A resize between
// calls therefore never makes the scan skip a bucket; a shrink may make it
// report some keys twice, which SCAN permits.
//
// The same table gives O(1) expected random sampling (RANDOMKEY, eviction),
// and a second chained table threaded through the same entries indexes the
// keys that carry a TTL, so active expiry can walk just those incrementally
// with [Keyspace.ScanExpires].
//
// # Costs
//
// A zero Keyspace allocates nothing; bucket arrays are created on the first
// insert, so a node holding 16384 mostly empty slots stays cheap. Tables grow
// (doubling) when they hold more entries than buckets and shrink when less
// than 1/8 full, never below 4 buckets. A resize rehashes nothing
// (each entry caches its hash) but is a single O(n) pass, amortised over the
// inserts or deletes that triggered it. All other mutations are O(1)
// expected.
package keyspace
