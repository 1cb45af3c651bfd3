package replcmd

import "sync"

var registerOnce sync.Once

// Register adds the replication commands (REPLICAOF, SLAVEOF, ROLE, WAIT,
// REPLCONF, PSYNC, SYNC) and DEBUG SET-ACTIVE-EXPIRE to the command table
// and binds their implementations. The wiring calls it (once per process
// is enough; later calls do nothing) after netio/servercmd and before
// netio.Register, the order DEBUG HELP lists their subcommands in.
func Register() {
	registerOnce.Do(registerRepl)
}
