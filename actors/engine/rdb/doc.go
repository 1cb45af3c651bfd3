// Package rdb reads and writes single values in Redis 7.0's RDB
// serialization, the format of DUMP payloads (and, later, of snapshots).
//
// A DUMP payload is one object type byte, the serialized value, the RDB
// version as two little-endian bytes (10 for Redis 7.0) and a CRC-64 (Jones
// polynomial, reflected, no final xor, the variant Redis uses) of everything
// before it, as eight little-endian bytes. [Encoder] writes payloads the way
// Redis 7.0 does for the same logical value and encoding (lists as
// quicklists of listpacks split like Redis splits them, small hashes and
// sorted sets as listpacks, integer sets as intsets, strings LZF-compressed
// when rdbcompression is on), so payloads are byte-identical to Redis's for
// values whose representation matches. [Decode] reads every value type
// Redis 7.0 RESTOREs, including the older encodings (ziplists, zipmaps,
// plain lists, text-encoded sorted-set scores), and checks every blob as
// deeply as Redis's sanitize-dump-payload does, so corrupt input is an
// error, never a panic or a huge allocation.
//
// The package knows nothing about slotd's value types: the shard actor
// iterates its values into an Encoder and builds its values from an
// [Object].
package rdb
