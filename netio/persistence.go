package netio

// Persistence is the node's snapshots and append-only file as the loop
// commands (SAVE, BGSAVE, BGREWRITEAOF, LASTSAVE, DEBUG RELOAD/LOADAOF,
// SHUTDOWN, INFO persistence) use them (implemented by actors/persist).
type Persistence interface {
	// Save writes a snapshot and waits for it; BGSave starts one (done, if
	// not nil, runs when it ends); FinalSave is the shutdown save.
	Save() error
	BGSave(done func(error)) error
	FinalSave() error
	// Load replaces nothing: it adds the snapshot file's keys.
	Load() error
	// LastSave is the unix time of the last successful save.
	LastSave() int64
	// ShouldSaveOnShutdown reports save rules (a plain SHUTDOWN saves).
	ShouldSaveOnShutdown() bool
	// Info is INFO persistence's fields.
	Info() [][2]string
	// RewriteAOF starts BGREWRITEAOF and ReloadAOF is DEBUG LOADAOF; their
	// errors are the client's reply.
	RewriteAOF() error
	ReloadAOF() error
	// AOFRewriting reports an AOF rewrite in progress (BGSAVE waits).
	AOFRewriting() bool
}
