//go:build !linux

package netio

import "runtime"

func osName() string { return runtime.GOOS + " " + runtime.GOARCH }

func multiplexingAPI() string { return "kqueue" }

func processRSS() uint64 { return 0 }

func totalSystemMemory() uint64 { return 0 }

func cpuTimes() (sys, user, csys, cuser float64) { return }
