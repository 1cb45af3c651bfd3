// Package keycmd owns the generic key commands (DEL, EXISTS, EXPIRE and
// TTL, RENAME, COPY, SCAN, KEYS, RANDOMKEY, DBSIZE, FLUSHALL, DUMP,
// RESTORE, OBJECT, MEMORY, ...), CLUSTER COUNTKEYSINSLOT / GETKEYSINSLOT
// and the shards' part of DEBUG DIGEST: the commands that act on a key
// whatever its type.
package keycmd
