// Package setcmd owns the set commands (SADD, SMEMBERS, SINTER and the
// other multi-key operations, SRANDMEMBER, SPOP, SSCAN, ...) over types/set,
// run inside the shard that owns the keys.
package setcmd
