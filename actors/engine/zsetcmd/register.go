package zsetcmd

import "sync"

var registerOnce sync.Once

// Register adds the sorted set commands to the command table and binds their
// implementations. The wiring calls it (once per process is enough; later
// calls do nothing) before any node runs; packages that add subcommands to
// a container registered here come after it.
func Register() {
	registerOnce.Do(func() {
		registerGeoCmds()
		registerZsetBlocking()
		registerZsetCmds()
		registerZsetOps()
		registerZsetPop()
		registerZsetRange()
	})
}
