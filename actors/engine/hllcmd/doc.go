// Package hllcmd owns the HyperLogLog commands (PFADD, PFCOUNT, PFMERGE,
// PFDEBUG, PFSELFTEST) over types/hll's sketches, run inside the shard that
// owns the keys.
package hllcmd
