// Package config owns slotd's configuration directives (redis.conf names),
// their defaults, validation, parsing from
//
//	slotd [config-file] [--directive value ...]
//
// and the CONFIG GET/SET view.
//
// Every directive has a kind: bool (yes/no), int (with bounds; memory
// directives also take the units b, k, kb, m, mb, g, gb, case-insensitive,
// where k/m/g are powers of 1000 and kb/mb/gb powers of 1024, exactly as
// Redis's memtoull), enum, string, or special (save, bind,
// client-output-buffer-limit, notify-keyspace-events, dir, replicaof, ...).
// Values are always shown the way Redis's CONFIG GET shows them: memory
// values as plain bytes, enums in lower case, bools as yes/no.
//
// Concurrency: a Config is safe for concurrent use. Set and the Load
// functions are serialised by one mutex and publish all their changes at
// once (Get never sees half of a multi-directive CONFIG SET). The typed
// accessors (String, Int, Bool, Var) are lock-free atomic loads meant for hot
// paths.
//
// Errors: the Load functions return *LoadError, whose Error() is a
// ready-to-print block in the style of redis-server's
//
//	*** FATAL CONFIG FILE ERROR ***
//
// message (the caller prints it and exits 1). Set returns errors whose text is
// the exact Redis 7 CONFIG SET error reply, "ERR ..." included.
package config
