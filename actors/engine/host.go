package engine

import (
	"context"
	"time"
)

// Host is what a shard asks of its actor (actors/shard): the services that
// need a timer, a goroutine or a socket, which the engine never touches
// itself. Every method is called in the shard's turn.
type Host interface {
	// After arranges for Timeout(bl, now) to run in a later turn of the
	// shard once d has passed; the returned func cancels that.
	After(d time.Duration, bl *Blocked) (cancel func())
	// Migrate performs MIGRATE's transfer of job. It either runs it to
	// the end before returning false (always when wait is set), or starts
	// it and returns true; the shard then parks the batch until the actor
	// calls ResumeMigrate(job, ...).
	Migrate(job *MigrateJob, wait bool) (async bool)
	// ScriptBegin publishes that a script (fn == nil) or function of
	// client owner starts running in the shard, for BUSY replies, FUNCTION
	// STATS and SCRIPT/FUNCTION KILL; the run stops when the returned
	// context is cancelled. ScriptEnd publishes that it ended.
	ScriptBegin(owner uint64, fn *RunningFunction) context.Context
	ScriptEnd()
	// ScriptWrites records that the running script is about to write;
	// false means it was killed meanwhile and must not.
	ScriptWrites() bool
}
