package streamcmd

import "sync"

var registerOnce sync.Once

// Register adds the stream commands to the command table and binds their
// implementations. The wiring calls it (once per process is enough; later
// calls do nothing) before any node runs.
func Register() {
	registerOnce.Do(func() {
		registerStreamCmds()
		registerStreamGroup()
		registerStreamInfo()
		registerStreamRead()
	})
}
