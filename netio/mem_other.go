//go:build !linux

package netio

func processRSS() uint64 { return 0 }
