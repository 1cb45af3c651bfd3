package hashcmd

import "sync"

var registerOnce sync.Once

// Register adds the hash commands to the command table and binds their
// implementations. The wiring calls it (once per process is enough; later
// calls do nothing) before any node runs; packages that add subcommands to
// a container registered here come after it.
func Register() {
	registerOnce.Do(func() {
		registerHashCore()
	})
}
