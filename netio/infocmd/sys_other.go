//go:build !linux

package infocmd

import "runtime"

func osName() string { return runtime.GOOS + " " + runtime.GOARCH }

func multiplexingAPI() string { return "kqueue" }

func totalSystemMemory() uint64 { return 0 }

func cpuTimes() (sys, user, csys, cuser float64) { return }
