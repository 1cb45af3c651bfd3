// Package infocmd owns INFO: the sections Redis 7.0 prints, rendered from
// the server's counters (netio's Server accessors), the replication and
// persistence engines' fields, the process's memory and CPU figures and,
// for the keyspace section, the shards' key counts.
package infocmd
