package infocmd

import "sync"

var registerOnce sync.Once

// Register adds INFO to the command table and binds its implementation.
// The wiring calls it (once per process is enough; later calls do nothing)
// before any node runs.
func Register() {
	registerOnce.Do(registerInfo)
}
