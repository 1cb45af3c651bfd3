// Package hashcmd owns the hash commands (HSET, HGET, HINCRBYFLOAT, HSCAN,
// HRANDFIELD, ...): their specs and their implementations over the engine's
// hash values (types/hash), run inside the shard that owns the key.
package hashcmd
