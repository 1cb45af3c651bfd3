// Package strcmd owns the string and bitmap commands (GET, SET, INCR and
// INCRBYFLOAT, APPEND, GETRANGE, LCS, MSET, SETBIT, BITCOUNT, BITFIELD,
// BITOP, ...), run inside the shard that owns the keys.
package strcmd
