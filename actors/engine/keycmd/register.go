package keycmd

import "sync"

var registerOnce sync.Once

// Register adds the generic key commands (MOVE, SWAPDB, and CLUSTER COUNTKEYSINSLOT/GETKEYSINSLOT, MEMORY, OBJECT, DEBUG DIGEST's shard part) to the command table and binds their
// implementations. The wiring calls it (once per process is enough; later
// calls do nothing) before any node runs; packages that add subcommands to
// a container registered here come after it.
func Register() {
	registerOnce.Do(func() {
		registerClusterKeys()
		registerKeys()
		registerDB()
		registerKeysDigest()
		registerKeysDump()
		registerKeysExpire()
		registerKeysObject()
		registerKeysScan()
		registerMemory()
	})
}
