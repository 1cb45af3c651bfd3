// Package keyspace owns the key dictionaries of the hash slots: entries
// with values and expiry, Redis-style cursor SCAN, random sampling, and Redis
// glob matching.
//
// A shard actor keeps one [Keyspace] per hash slot it serves, all sharing
// one [Index] for lookups. Everything here is single-threaded by design: a
// Keyspace must only ever be touched by the goroutine that currently runs its
// owning actor, so there are no locks and no goroutines.
//
// # Layout
//
// Lookups are the hot path (every GET and SET), so they go through a single
// open-addressing table per shard ([Index]: linear probing over (hash,
// entry) cells, no tombstones) rather than through a per-slot dictionary: a
// hit costs the cell's cache line, the entry, and the key bytes, which for a
// string added with [Keyspace.AddString] share one allocation with the value.
//
// Per-slot work (SCAN, COUNTKEYSINSLOT, GETKEYSINSLOT, dropping a slot,
// RANDOMKEY, active expiry) uses two dense arrays per Keyspace: all entries,
// and the entries with a TTL. Each entry records its positions; a delete
// moves the array's last entry into the hole. SCAN walks an array from the
// end down, which keeps Redis's guarantee (every key present for the whole
// scan is returned) without the reverse-binary cursor a resizable hash table
// needs: see [Keyspace.Scan].
//
// # Costs
//
// A zero Keyspace allocates nothing. The index grows (doubling) past 3/4
// load and shrinks below 1/8; a resize is one O(n) pass without rehashing
// (cells keep their hash). Everything else is O(1) expected, except
// [Keyspace.Clear] on a shared index (O(keys in the slot)) and
// [Keyspace.ForEach], which snapshots the slot's entries first.
package keyspace
