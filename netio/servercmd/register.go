package servercmd

import "sync"

var registerOnce sync.Once

// Register adds the server administration commands (COMMAND, CONFIG, SAVE,
// BGSAVE, BGREWRITEAOF, LASTSAVE) and their DEBUG subcommands (DIGEST,
// DIGEST-VALUE, RELOAD, LOADAOF, POPULATE) to the command table and binds
// their implementations. The wiring calls it (once per process is enough;
// later calls do nothing) before netio.Register, so DEBUG HELP lists these
// subcommands first, as it always has.
func Register() {
	registerOnce.Do(func() {
		registerCommand()
		registerConfig()
		registerDebugDigest()
		registerPersist()
	})
}
