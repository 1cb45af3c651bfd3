//go:build !linux

package shard

// totalMemory is the machine's memory in bytes (0: unknown).
func totalMemory() int64 { return 0 }
