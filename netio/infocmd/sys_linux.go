//go:build linux

package infocmd

import (
	"syscall"
)

// osName is "<sysname> <release> <machine>", as Redis prints it.
func osName() string {
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		return "Linux"
	}
	return cstr(u.Sysname[:]) + " " + cstr(u.Release[:]) + " " + cstr(u.Machine[:])
}

// cstr converts a NUL-terminated utsname field (int8 or uint8 by arch).
func cstr[T int8 | uint8](a []T) string {
	b := make([]byte, 0, len(a))
	for _, c := range a {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}

func multiplexingAPI() string { return "epoll" }

func totalSystemMemory() uint64 {
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) != nil {
		return 0
	}
	return uint64(si.Totalram) * uint64(si.Unit)
}

// cpuTimes returns the process's and its children's system and user CPU
// seconds.
func cpuTimes() (sys, user, csys, cuser float64) {
	sec := func(tv syscall.Timeval) float64 { return float64(tv.Sec) + float64(tv.Usec)/1e6 }
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		sys, user = sec(ru.Stime), sec(ru.Utime)
	}
	if syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru) == nil {
		csys, cuser = sec(ru.Stime), sec(ru.Utime)
	}
	return
}
