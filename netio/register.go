package netio

import "sync"

var registerOnce sync.Once

// Register adds the loop commands (connection, server, pub/sub, transactions, CLUSTER's configuration subcommands) to the command table and binds their
// implementations. The wiring calls it (once per process is enough; later
// calls do nothing) before any node runs; packages that add subcommands to
// a container registered here come after it.
func Register() {
	registerOnce.Do(func() {
		registerContainers()
		registerCmdBasic()
		registerCmdClient()
		registerCmdACL()
		registerCmdClientpause()
		registerCmdClientReply()
		registerCmdCluster()
		registerCmdConn()
		registerCmdModule()
		registerCmdMonitor()
		registerCmdServer()
		registerCmdSlowlog()
		registerCmdLatency()
		registerMulti()
		registerPause()
		registerPubsub()
		registerTracking()
	})
}
