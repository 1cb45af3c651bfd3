package servercmd

// SAVE, BGSAVE, LASTSAVE and DEBUG RELOAD over the snapshot manager
// (actors/persist). A save never blocks the event loop: SAVE's reply is
// deferred until the file is written (other clients keep being served,
// unlike Redis, whose SAVE stops the server).

import (
	"strings"

	"github.com/slotd/slotd/netio"
	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/resp"
)

func registerPersist() {
	cats := []string{"admin", "slow", "dangerous"}
	command.Register(
		netio.Loop(&command.Spec{Name: "save", Arity: 1, Flags: []string{"admin", "noscript", "no_async_loading", "no_multi"},
			Categories: cats, Group: "server", Since: "1.0.0",
			Summary: "Synchronously save the dataset to disk"}, cmdSave),
		netio.Loop(&command.Spec{Name: "bgsave", Arity: -1, Flags: []string{"admin", "noscript", "no_async_loading"},
			Categories: cats, Group: "server", Since: "1.0.0",
			Summary: "Asynchronously save the dataset to disk"}, cmdBgsave),
		netio.Loop(&command.Spec{Name: "bgrewriteaof", Arity: 1, Flags: []string{"admin", "noscript", "no_async_loading"},
			Categories: cats, Group: "server", Since: "1.0.0",
			Summary: "Asynchronously rewrite the append-only file"}, cmdBgrewriteaof),
		netio.Loop(&command.Spec{Name: "lastsave", Arity: 1, Flags: []string{"loading", "stale", "fast"},
			Categories: []string{"admin", "fast", "dangerous"}, Tips: []string{"nondeterministic_output"},
			Group: "server", Since: "1.0.0",
			Summary: "Get the UNIX time stamp of the last successful save to disk"}, cmdLastsave),
	)
	netio.RegisterDebug("reload", []string{"RELOAD [MERGE] [NOFLUSH] [NOSAVE]",
		"    Save the RDB on disk and reload it back to memory. By default it will save",
		"    the RDB file and load it back.",
		"    NOFLUSH: the existing database is not removed before load.",
		"    MERGE: merge the loaded keys (implies NOFLUSH).",
		"    NOSAVE: the database will be loaded from an existing RDB file."}, -2, debugReload)
	netio.RegisterDebug("loadaof", []string{"LOADAOF",
		"    Flush the AOF buffers on disk and reload the AOF in memory."}, 2, debugLoadAOF)
	netio.RegisterDebug("populate", []string{"POPULATE <count> [<prefix>] [<size>]",
		"    Create <count> string keys named key:<num>. If <prefix> is specified then",
		"    it is used instead of the 'key' prefix. These are not propagated to",
		"    replicas. Cluster slots are not respected so keys not belonging to the",
		"    current node can be created in cluster mode."}, -3, debugPopulate)
}

// debugPopulate creates count keys prefix:N holding "value:N" (zero-padded
// or cut to size bytes when size is given), leaving existing keys alone.
// The keys are built off the loop and handed to the shards in batches.
func debugPopulate(x *netio.Ctx) {
	const errPositive = "ERR value is out of range, must be positive"
	if len(x.Args) > 5 {
		x.W.Error("ERR unknown subcommand or wrong number of arguments for '" + netio.Trunc(string(x.Args[1]), 128) +
			"'. Try DEBUG HELP.")
		return
	}
	count, ok := resp.ParseInt(x.Args[2])
	if !ok || count < 0 {
		x.W.Error(errPositive)
		return
	}
	prefix := "key"
	if len(x.Args) > 3 {
		prefix = string(x.Args[3])
	}
	size := int64(-1)
	if len(x.Args) > 4 {
		if size, ok = resp.ParseInt(x.Args[4]); !ok || size < 0 {
			x.W.Error(errPositive)
			return
		}
	}
	g := x.S.Shards()
	x.Defer(func(d *netio.Deferred) {
		g.Populate(count, prefix, size, func() {
			d.W.OK()
			d.Done()
		})
	})
}

const errNoPersist = "ERR snapshots are not available on this server"

func cmdSave(x *netio.Ctx) {
	p := x.S.Persist
	if p == nil {
		x.W.Error(errNoPersist)
		return
	}
	x.Defer(func(d *netio.Deferred) {
		go func() {
			err := p.Save()
			switch {
			case err == command.ErrBGSaveInProgress:
				d.W.Error(err.Error())
			case err != nil:
				d.W.Error("ERR")
			default:
				d.W.OK()
			}
			d.Done()
		}()
	})
}

func cmdBgsave(x *netio.Ctx) {
	p := x.S.Persist
	if p == nil {
		x.W.Error(errNoPersist)
		return
	}
	schedule := false
	if len(x.Args) > 1 {
		if len(x.Args) > 2 || !netio.ArgIs(x.Args[1], "schedule") {
			x.W.Error("ERR syntax error")
			return
		}
		schedule = true
	}
	if p.AOFRewriting() {
		if schedule {
			x.W.Simple("Background saving scheduled")
			return
		}
		x.W.Error("ERR Another child process is active (AOF?): can't BGSAVE right now. " +
			"Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.")
		return
	}
	if err := p.BGSave(nil); err != nil {
		if schedule {
			// The save-rule ticker starts another one once this ends if
			// changes are pending; a scheduled save is not queued apart.
			x.W.Simple("Background saving scheduled")
			return
		}
		x.W.Error(err.Error())
		return
	}
	x.S.Log.Info().Msg("Background saving started")
	x.W.Simple("Background saving started")
}

// cmdBgrewriteaof starts an AOF rewrite (actors/aof), or schedules it
// while a snapshot is being written.
func cmdBgrewriteaof(x *netio.Ctx) {
	p := x.S.Persist
	if p == nil {
		x.W.Error(errNoPersist)
		return
	}
	err := p.RewriteAOF()
	switch {
	case err == nil:
		x.W.Simple("Background append only file rewriting started")
	case err.Error() == "Background append only file rewriting scheduled":
		x.W.Simple(err.Error())
	default:
		x.W.Error(err.Error())
	}
}

func cmdLastsave(x *netio.Ctx) {
	if x.S.Persist == nil {
		x.W.Int(x.S.Started().Unix())
		return
	}
	x.W.Int(x.S.Persist.LastSave())
}

// debugLoadAOF empties the dataset and replays the AOF (off the loop).
func debugLoadAOF(x *netio.Ctx) {
	p := x.S.Persist
	if p == nil {
		x.W.Error(errNoPersist)
		return
	}
	log := x.S.Log
	x.Defer(func(d *netio.Deferred) {
		go func() {
			if err := p.ReloadAOF(); err != nil {
				log.Warn().Err(err).Msg("DEBUG LOADAOF failed")
				msg := err.Error()
				if !strings.HasPrefix(msg, "ERR ") {
					msg = "ERR Error loading the AOF: " + msg
				}
				d.W.Error(msg)
			} else {
				log.Info().Msg("Append Only File loaded by DEBUG LOADAOF")
				d.W.OK()
			}
			d.Done()
		}()
	})
}

// debugReload saves (unless NOSAVE), empties the shards (unless NOFLUSH or
// MERGE) and loads the file back.
func debugReload(x *netio.Ctx) {
	p := x.S.Persist
	if p == nil {
		x.W.Error(errNoPersist)
		return
	}
	save, flush := true, true
	for _, a := range x.Args[2:] {
		switch {
		case netio.ArgIs(a, "merge"), netio.ArgIs(a, "noflush"):
			flush = false
		case netio.ArgIs(a, "nosave"):
			save = false
		default:
			x.W.Error("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.")
			return
		}
	}
	g, log := x.S.Shards(), x.S.Log
	x.Defer(func(d *netio.Deferred) {
		go func() {
			if save {
				if err := p.Save(); err != nil {
					d.W.Error("ERR Error trying to save the DB")
					d.Done()
					return
				}
			}
			if flush {
				done := make(chan struct{})
				g.DropAll(func() { close(done) })
				<-done
			}
			if err := p.Load(); err != nil {
				log.Warn().Err(err).Msg("DEBUG RELOAD failed loading the RDB")
				d.W.Error("ERR Error trying to load the RDB dump, check server logs.")
				d.Done()
				return
			}
			log.Info().Msg("DB reloaded by DEBUG RELOAD")
			d.W.OK()
			d.Done()
		}()
	})
}
