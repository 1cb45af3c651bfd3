package shard

import "syscall"

// totalMemory is the machine's memory in bytes (0: unknown).
func totalMemory() int64 {
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit)
}
