// Package engine is the data engine of a shard: the keyspaces of the hash
// slots a shard actor owns and the execution of every keyed command against
// them — lookups and lazy expiry, blocking commands, WATCH, CLIENT TRACKING
// reads, the replication and AOF records a write produces, MIGRATE's and
// the scripts' parts that touch data. It is deterministic: the time comes in
// with each step (Run, Timeout, ActiveExpire), randomness from the source it
// was built with, and everything that needs a goroutine, a socket or a timer
// is asked of the shard's Host (actors/shard implements it). The keyed
// commands themselves live in the *cmd sub-packages, one per concern, and
// register their handlers here (Register).
//
// A node runs N shards; slot s belongs to shard s % N, which spreads any
// contiguous slot range evenly and never moves a slot between shards when
// ownership changes. Each slot has its own keyspace, so counting, listing and
// dropping a slot touch one dictionary.
//
// Size: about 5.5k lines, a little over the 5k the project aims at per
// package: the value formats (rdb, rdbvalue), the values (types/*) and the
// commands (*cmd) are already their own packages; what stays is the Shard
// and what works on its private state in one turn — the databases and
// their keyspaces, the replication/AOF stream a write produces (propagate*),
// blocking and WATCH bookkeeping, and the script host's data side.
package engine

import (
	"github.com/slotd/slotd/netio/acl"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/actors/script"
	"github.com/slotd/slotd/netio/batch"
	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/resp"
	"github.com/slotd/slotd/slots"
)

// Merge combines the fanout parts (one per shard, in shard order) into one
// reply.
type Merge = command.Merge

// Stats are counters read by INFO while the actor writes them.
type Stats struct {
	Hits, Misses, Expired, ExpiredStale atomic.Int64
	Commands                            atomic.Int64
	Blocked                             atomic.Int64
	// Dirty counts writes that changed something (save rules, INFO
	// rdb_changes_since_last_save).
	Dirty atomic.Int64
	// Used is the dataset's byte charge (memory.go), published at the end
	// of each batch and turn.
	Used atomic.Int64
	// Evicted counts keys evicted for maxmemory (evict.go).
	Evicted atomic.Int64
	// EvictFailed: the last eviction found nothing left to evict while
	// over maxmemory (evict.go; OutOfMemory).
	EvictFailed atomic.Bool
	// Panics counts panics contained in this shard (contain.go).
	Panics atomic.Int64
}

// Shard is one shard's data and execution state. Only its actor touches
// it, one step at a time.
type Shard struct {
	ID    int
	n     int
	group *Group
	host  Host

	// oomAtStart: the command now running found the node over maxmemory
	// with nothing to evict (evictBefore; its scripts' first write fails).
	oomAtStart bool

	// spaces is the database of the command being executed (db its
	// number), one of dbs; every database's keyspaces share index.
	spaces *DBSpaces
	db     int
	dbs    []*DBSpaces     // nil: a database never written in this shard
	dbKeys []atomic.Int64  // keys per database (read by any goroutine)
	index  *keyspace.Index // key lookups for all of dbs
	rng    *rand.Rand
	now    int64 // unix ms of the batch being executed
	call   Call

	expireDB     int // active-expiry walk position
	expireSlot   int
	expireCursor uint64

	cur     *batch.Batch         // batch being executed
	parked  bool                 // the last command blocked
	rerun   *Blocked             // blocked command being retried
	blocked map[DBKey][]*Blocked // key → commands waiting on it
	ready   []DBKey              // keys signalled since the last wake
	wakeKey string               // the key whose signal re-runs parked commands
	txHold  int                  // commands of a transaction still to run: no wake before
	watched map[DBKey][]watchRec // key → WATCHing clients
	keyIdx  []int
	// spreadSigs are the keys a spread command signalled (spread.go).
	spreadSigs []DBKey
	script     scriptShard    // Lua VM, offloaded script batches
	migr       *migrateWait   // MIGRATE in flight (migrate.go)
	trk        trackTable     // CLIENT TRACKING readers (tracking.go)
	aof        AOF            // append-only log, nil when off (aof.go)
	aofHeld    []*batch.Batch // batches waiting for the turn's fsync
	// finished is the last batch handed to finish (contain.go: a panic
	// after that must not complete it twice).
	finished *batch.Batch

	// Replication (propagate*.go): the stream, and replica mode.
	repl        replShard
	replica     bool
	snapBuf     []byte
	applyCmd    batch.Cmd
	applyArgs   [][]byte
	applyOut    resp.Writer
	applyErrors int64
	applyErrAt  int64 // unix ms of the last logged apply error

	Stats Stats
	log   zerolog.Logger

	// tick is the monotonic time (ns) the last command ended, the start of
	// the next one's commandstats time.
	tick int64
	// calls are commandstats counts not yet added to the group's shared
	// counters (flushCalls): a batch of GETs adds once, not per GET.
	calls []pendingCalls
	// fastRun are the fast commands run since tick (exec, closeRun).
	fastRun []fastCall
	// startAt is the Mono time RunAt was given for the batch it starts,
	// 0 once the batch's clock started (restartClock).
	startAt int64
	// dirty are the entries writes reached since the last settle
	// (memory.go).
	dirty []*keyspace.Entry
	// spaceBytes are the databases' slot arrays and the slots' keyspaces,
	// charged beside the entries.
	spaceBytes int64
	evictor    evictState // maxmemory (evict.go)

	// notes are the keyspace events recorded since the last flushNotes,
	// their keys in noteKeys (notify.go).
	notes    []note
	noteKeys []byte

	// lat is this shard's latency histograms (INFO latencystats), taken
	// from CmdStats on the first command; slow are the latency-monitor
	// samples not yet handed to the group's LatencyMonitor (flushSlow).
	lat  *command.Latencies
	slow []command.LatencySample
}

// Run executes b's commands at now (unix ms); replies go to b.Out and b.Done
// is told when the batch is complete (at once, or later for a command that
// blocks or waits for MIGRATE).
func (s *Shard) Run(b *batch.Batch, now int64) {
	s.startAt = 0
	s.run(b, now)
}

// RunAt is Run for a caller that read the group's Mono clock (mono) with
// its wall clock: the batch's command clock starts there instead of at a
// clock read of its own.
func (s *Shard) RunAt(b *batch.Batch, now, mono int64) {
	s.startAt = mono
	s.run(b, now)
}

func (s *Shard) run(b *batch.Batch, now int64) {
	s.now = now
	s.cur = b
	s.finished = nil
	s.runSafe(b, 0)
}

// EndTurn closes a step of the shard's actor: the step's records go to the
// backlog, the feeds and the AOF, and batches held for the AOF's fsync are
// handed to it. The actor calls it after every message it handled, unless
// the shard's state is lent to the script worker.
func (s *Shard) EndTurn() {
	s.flushCalls()
	s.flushSlow()
	s.publishUsed()
	s.flushNotes()
	if len(s.repl.pending) > 0 && !s.repl.wrapping {
		s.publish()
	}
	s.releaseHeld()
}

// runFrom executes b's commands from index start on (a batch resumes after
// a MIGRATE completes).
func (s *Shard) runFrom(b *batch.Batch, start int) {
	skip := 0
	s.restartClock()
	for i := start; i < len(b.Cmds); i++ {
		if (i-start)%prefetchChunk == 0 {
			s.prefetch(b, i)
		}
		cmd := &b.Cmds[i]
		if skip > 0 {
			// Commands of a transaction aborted by WATCH: no reply.
			skip--
			b.Ends = append(b.Ends, len(b.Out.B))
			continue
		}
		if cmd.TxBegin != 0 {
			if n := max(int(cmd.TxBegin), 0); s.redirectTx(cmd, b.Cmds[i+1:i+1+n]) {
				skip = n // EXEC replies with the redirect (asking.go)
			} else if cmd.Watch.Decide(s.now) {
				cmd.Result = true
				skip = max(int(cmd.TxBegin), 0)
			}
			if cmd.Watch != nil {
				s.endWatch(cmd.Watch)
			}
			if skip == 0 && cmd.TxBegin > 0 && s.repl.on {
				s.txStart(int(cmd.TxBegin), int(cmd.Slot))
			}
			if skip == 0 && cmd.TxBegin > 0 {
				s.txHold = int(cmd.TxBegin) // blocked clients wake after EXEC
			}
			b.Ends = append(b.Ends, len(b.Out.B))
			continue
		}
		s.runOne(b, cmd)
		if s.repl.txLeft > 0 {
			s.txStep()
		}
		if s.txHold > 0 {
			s.txHold--
		}
		if s.parked {
			// A blocking command is always its batch's last: the batch
			// completes when the command is served or times out. A
			// MIGRATE in flight resumes the batch after it.
			s.parked = false
			if w := s.migr; w != nil && w.next < 0 {
				w.next = i + 1
			}
			if len(s.ready) > 0 && s.txHold == 0 {
				s.wake()
			}
			return
		}
		if len(s.ready) > 0 && s.txHold == 0 {
			s.wake()
		}
	}
	s.finish(b)
}

// runOne executes one command and records its reply end. After a write it
// signals the command's keys to WATCHers and blocked clients.
func (s *Shard) runOne(b *batch.Batch, cmd *batch.Cmd) {
	b.Out.Proto = int(cmd.Proto)
	if int(cmd.DB) != s.db {
		s.UseDB(int(cmd.DB))
	}
	mark := len(b.Out.B)
	s.oomAtStart = false
	if s.group.MaxMemory.Load() > 0 && s.evictBefore(cmd.Spec) {
		b.Out.Error(ErrOOM)
		command.Rejected(s.group.CmdStats, cmd.Spec, b.Out.B[mark:])
		b.Ends = append(b.Ends, len(b.Out.B))
		return
	}
	s.trackWriter(cmd)
	// A write to keys that exist neither before nor after it changed
	// nothing (PERSIST, RPUSHX, HDEL … on a missing key): Redis signals no
	// WATCHer for those, so remember which keys existed.
	signalling := cmd.Spec.Write() && (len(s.blocked) > 0 || len(s.watched) > 0 || s.trackingActive())
	var existed uint64
	if cmd.Spread {
		// Keys of several slots, maybe of several shards (spread.go).
		s.keyIdx, _ = cmd.Spec.KeyIndexes(s.keyIdx[:0], cmd.Args)
		s.spreadBegin(cmd, s.keyIdx)
		signalling = cmd.Spec.Write()
		existed = s.spreadLive(cmd.Args, s.keyIdx)
	} else if signalling {
		s.keyIdx, _ = cmd.Spec.KeyIndexes(s.keyIdx[:0], cmd.Args)
		existed = s.liveKeys(int(cmd.Slot), cmd.Args, s.keyIdx)
	}
	wrap, wrapRec := -1, 0
	if s.repl.on && isScriptSpec(cmd.Spec) {
		wrap, wrapRec = s.wrapStart() // a script's effects replay atomically
	}
	s.exec(cmd, &b.Out)
	if len(s.dirty) > 0 {
		s.settle()
	}
	if wrap >= 0 {
		s.wrapEnd(wrap, wrapRec, int(cmd.Slot))
	}
	if s.parked {
		return
	}
	b.Ends = append(b.Ends, len(b.Out.B))
	if s.repl.on && !s.replica {
		s.propagateAfter(&s.call, cmd.Spec, cmd.Args, len(b.Out.B) > mark && b.Out.B[mark] == '-')
	}
	if cmd.Track&batch.TrackRead != 0 && cmd.Spec.ReadOnly() {
		s.trackRead(cmd)
	}
	if cmd.Spec.Write() && (!s.call.unchanged || s.call.signalled) && (len(b.Out.B) == mark || b.Out.B[mark] != '-') {
		s.Stats.Dirty.Add(1)
	}
	if cmd.Spread {
		if signalling && !s.call.unchanged && (len(b.Out.B) == mark || b.Out.B[mark] != '-') {
			existed |= s.spreadLive(cmd.Args, s.keyIdx)
			for i, k := range s.keyIdx {
				if i >= 64 || existed&(1<<uint(i)) != 0 {
					o, _ := s.ownerOf(cmd.Args[k])
					o.signal(cmd.Args[k])
				}
			}
		}
		s.spreadEnd(cmd.Args, s.keyIdx)
		return
	}
	if signalling && !s.call.unchanged && (len(b.Out.B) == mark || b.Out.B[mark] != '-') {
		existed |= s.liveKeys(int(cmd.Slot), cmd.Args, s.keyIdx)
		for i, k := range s.keyIdx {
			if i >= 64 || existed&(1<<uint(i)) != 0 {
				s.signal(cmd.Args[k])
			}
		}
	}
}

// liveKeys returns a bit per key index (up to 64) set when that key is in
// the slot's keyspace.
func (s *Shard) liveKeys(slot int, args [][]byte, idx []int) uint64 {
	if slot < 0 || slot >= slots.NumSlots {
		return ^uint64(0)
	}
	ks := s.spaces[slot]
	var bits uint64
	for i, k := range idx {
		if i >= 64 {
			break
		}
		if s.index.Lookup(ks, args[k]) != nil {
			bits |= 1 << uint(i)
		}
	}
	return bits
}

func (s *Shard) finish(b *batch.Batch) {
	s.finished = b
	s.Stats.Commands.Add(int64(len(b.Cmds)))
	s.flushCalls() // before the replies go: INFO after a reply counts it
	s.flushSlow()
	s.publishUsed()
	s.flushNotes() // the batch's keyspace events reach subscribers first, as in Redis
	if s.holdBatch(b) {
		return
	}
	b.Done.BatchDone(b)
}

// signal is Redis's signalModifiedKey: WATCHers of key become dirty and
// clients blocked on it get a chance to run.
func (s *Shard) signal(key []byte) {
	s.signalWatch(key)
	s.signalBlocked(key)
	if s.trackingActive() {
		s.trackInvalidate(key)
	}
}

// Signal tells WATCHers and blocked clients that key changed. Write
// handlers get this automatically for their key arguments; handlers that
// modify other keys (or only sometimes modify) may call it explicitly.
func (c *Call) Signal(key []byte) {
	c.signalled = true
	o, _ := c.at(key)
	o.signal(key)
	if c.spread && c.S.Streaming() {
		c.S.spreadSigs = append(c.S.spreadSigs, DBKey{DB: c.S.db, Key: string(key)})
	}
}

// exec runs cmd's handler. It has no recover of its own: a panic unwinds
// to the batch's guard (contain.go), so a command pays nothing for it.
func (s *Shard) exec(cmd *batch.Cmd, w *resp.Writer) {
	mark := len(w.B)
	if s.redirect(cmd, w) {
		command.Rejected(s.group.CmdStats, cmd.Spec, w.B[mark:])
		return
	}
	c := &s.call
	*c = Call{Args: cmd.Args, W: w, Slot: int(cmd.Slot), Now: s.now, S: s, Cmd: cmd, spread: cmd.Spread}
	h := handlerOf(cmd.Spec)
	stats := s.group.CmdStats
	if stats == nil || cmd.Spec.Exec != command.Shard { // a fanout counts once, on the loop
		h(c)
		return
	}
	if cmd.Spec.Fast() || cmd.Spec.RunTimed && smallArgs(cmd.Args) {
		// A fast command reads no clock: a run of them (a pipeline of GETs)
		// is timed as one, at its end (closeRun). A clock read costs more
		// than a GET on some machines (100-250 ns under a hypervisor that
		// traps the TSC), and Redis's per-call µs of such commands are
		// mostly 0 anyway. SET and its kin join a run while their
		// arguments are small; a big value's copy is timed by itself.
		h(c)
		if !s.parked {
			f := fastCall{cmd: cmd, peer: s.cur.Peer}
			if len(w.B) > mark && w.B[mark] == '-' {
				f.reply = w.B[mark:]
			}
			s.fastRun = append(s.fastRun, f)
		}
		return
	}
	// Any other command is timed by itself, from the end of the command
	// before it (runFrom and wake start the chain).
	s.closeRun()
	t0 := s.tick
	h(c)
	s.tick = s.group.mono()
	if !s.parked { // a parked command counts when it is served (Redis: on unblock)
		// A parked command is logged when it is served, as Redis logs a
		// blocked command when it is unblocked.
		one := [1]fastCall{{cmd: cmd, reply: w.B[mark:]}}
		if s.cur != nil {
			one[0].peer = s.cur.Peer
		}
		s.timed(one[:], s.tick-t0)
	}
}

// Keyspace returns slot's keyspace in the current database, creating it
// when create is set.
func (s *Shard) Keyspace(slot int, create bool) *keyspace.Keyspace {
	ks := s.spaces[slot]
	if ks == nil && create {
		if s.index == nil {
			s.index = keyspace.NewIndex() // a Shard built by hand (tests)
		}
		if s.spaces == &noSpaces {
			s.dbs[s.db] = new(DBSpaces)
			s.spaces = s.dbs[s.db]
			s.spaceBytes += dbSpacesBytes
		}
		ks = s.index.NewKeyspace()
		s.spaces[slot] = ks
		s.spaceBytes += keyspaceBytes
	}
	return ks
}

// ForEachSlot visits every slot of this shard that has keys in the
// current database.
func (s *Shard) ForEachSlot(fn func(slot int, ks *keyspace.Keyspace)) {
	for slot := s.ID; slot < slots.NumSlots; slot += s.n {
		if ks := s.spaces[slot]; ks != nil && ks.Len() > 0 {
			fn(slot, ks)
		}
	}
}

// ForEachDB makes each database that has keys in this shard the current
// one in turn, calls fn, and restores the current database.
func (s *Shard) ForEachDB(fn func(db int)) {
	saved := s.db
	for db, d := range s.dbs {
		if d != nil {
			s.UseDB(db)
			fn(db)
		}
	}
	s.UseDB(saved)
}

// Rand is the shard's random source.
func (s *Shard) Rand() *rand.Rand { return s.rng }

// Group returns the shard's group.
func (s *Shard) Group() *Group { return s.group }

// added and removed keep the shared per-slot key counts current.
func (s *Shard) added(slot int) {
	s.group.counts[slot].Add(1)
	s.dbKeys[s.db].Add(1)
}

func (s *Shard) removed(slot int) {
	s.group.counts[slot].Add(-1)
	s.dbKeys[s.db].Add(-1)
}

// DropSlotAll deletes every key of slot in every database.
func (s *Shard) DropSlotAll(slot int) int {
	n := 0
	s.ForEachDB(func(int) { n += s.DropSlot(slot) })
	return n
}

// DropSlot deletes every key of slot in the current database.
func (s *Shard) DropSlot(slot int) int {
	ks := s.spaces[slot]
	if ks == nil {
		return 0
	}
	n := ks.Len()
	if len(s.watched) > 0 {
		ks.ForEach(func(e *keyspace.Entry) bool { s.signalWatch([]byte(e.Key())); return true })
	}
	s.trackDropSlot(slot)
	ks.Clear()
	s.spaces[slot] = nil
	s.spaceBytes -= keyspaceBytes
	s.group.counts[slot].Add(int64(-n))
	s.dbKeys[s.db].Add(int64(-n))
	return n
}

// ActiveExpire walks the expiry index of this shard's slots, deleting keys
// whose time (now, unix ms) has passed. It stops after a small time budget
// (measured with the group's Mono clock) so a loop that runs the actor
// inline is not held up; the walk resumes at the next tick.
func (s *Shard) ActiveExpire(now int64) {
	if s.evictor.later || s.group.MaxMemory.Load() > 0 {
		s.evict(now) // over maxmemory with no command coming
	}
	if s.replica || s.group.NoActiveExpire.Load() {
		return // a replica's keys expire when its primary says so
	}
	if s.index.Expires() == 0 {
		return // nothing to expire: don't walk thousands of slots
	}
	saved := s.db
	defer s.UseDB(saved)
	const budget = int64(2 * time.Millisecond)
	start := s.group.mono()
	defer s.noteLatency("expire-cycle", start)
	visited := 0
	if s.expireDB >= len(s.dbs) {
		s.expireDB = 0
	}
	s.UseDB(s.expireDB)
	for steps := 0; steps < (slots.NumSlots/s.n+1)*len(s.dbs); steps++ {
		slot := s.expireSlot
		ks := s.spaces[slot]
		if ks != nil && ks.ExpiresLen() > 0 {
			var dead []string
			s.expireCursor = ks.ScanExpires(s.expireCursor, func(e *keyspace.Entry) {
				visited++
				if e.Expire != 0 && e.Expire <= now {
					dead = append(dead, e.Key())
				}
			})
			for _, k := range dead {
				if ks.Delete([]byte(k)) != nil {
					s.signalWatch([]byte(k))
					if s.trackingActive() {
						s.trackInvalidate([]byte(k))
					}
					s.removed(slot)
					s.Stats.Expired.Add(1)
					s.propagateExpired(slot, []byte(k))
					s.notify(NotifyExpired, "expired", []byte(k))
				}
			}
			if s.expireCursor != 0 {
				if visited&63 == 0 && s.group.mono()-start > budget {
					return
				}
				steps--
				continue
			}
		}
		s.expireCursor = 0
		s.expireSlot += s.n
		if s.expireSlot >= slots.NumSlots {
			s.expireSlot = s.ID
			s.expireDB++
			for s.expireDB < len(s.dbs) && s.dbs[s.expireDB] == nil {
				s.expireDB++
			}
			if s.expireDB >= len(s.dbs) {
				s.expireDB = 0
				return // one full pass per tick at most
			}
			s.UseDB(s.expireDB)
		}
		if visited > 0 && visited&63 == 0 && s.group.mono()-start > budget {
			return
		}
	}
}

// Group is the shards of one node and what they share: settings mirrored
// from the configuration, per-slot key counts readable by any goroutine, the
// script cache and function libraries, the CLIENT TRACKING hook-up.
type Group struct {
	shards    []*Shard
	databases int
	counts    [slots.NumSlots]atomic.Int64
	mono      func() int64 // monotonic ns (time budgets)
	clock     func() int64 // unix µs (steps that are not a command: saves, loads)

	replica, streamsOn atomic.Bool // replication mode (propagate_sync.go)
	// ReplicaReadOnly mirrors replica-read-only (scripts on a replica).
	ReplicaReadOnly atomic.Bool
	// NoActiveExpire is DEBUG SET-ACTIVE-EXPIRE 0: only lazy expiry.
	NoActiveExpire atomic.Bool
	// OnFlushAll, when set before serving, runs on the event loop after
	// every successful FLUSHALL, before its reply is written (the node saves
	// the now empty dataset when save rules exist, as Redis does). It must
	// not block.
	OnFlushAll func()

	// CmdStats, when set before serving, counts shard commands' calls,
	// time and errors (INFO commandstats and errorstats).
	CmdStats *command.Stats
	// SlowLog, when set before serving, logs slow shard commands (SLOWLOG).
	SlowLog *command.SlowLog
	// Latency, when set before serving, receives the shards' latency
	// events past latency-monitor-threshold (command, fast-command,
	// expire-cycle, eviction-cycle) at the end of each batch and turn.
	Latency *command.LatencyMonitor
	// Monitor, when set before serving, shows MONITOR clients a command a
	// script called (db, arguments); it must not block.
	Monitor func(db int, args [][]byte)
	// ACLDenied, when set before serving, records in ACL LOG a command a
	// script called that the caller's user may not run (client is the
	// caller's id); it must not block.
	ACLDenied func(client int64, e acl.Entry)
	// ACLUser, when set before serving, returns the ACL user of the client
	// with the given id (nil: allowed everything, as the AOF and a
	// primary's stream): scripts check their calls against it, SORT its
	// BY/GET patterns. Only those call it.
	ACLUser func(client int64) *acl.User

	// MaxBulkLen mirrors proto-max-bulk-len (0: the 512MB default); string
	// commands that grow values check against it.
	MaxBulkLen atomic.Int64

	// Encoding thresholds mirrored from set-max-intset-entries,
	// zset-max-listpack-entries and zset-max-listpack-value: clients see
	// their effect through OBJECT ENCODING and SMEMBERS/ZSCAN ordering.
	SetMaxIntsetEntries, ZSetMaxListpackEntries, ZSetMaxListpackValue atomic.Int64
	// HashMaxListpackEntries and HashMaxListpackValue mirror
	// hash-max-listpack-entries/-value: when a hash leaves its compact form.
	HashMaxListpackEntries, HashMaxListpackValue atomic.Int64
	// HLLSparseMaxBytes mirrors hll-sparse-max-bytes: the size past which a
	// sparse HyperLogLog turns dense.
	HLLSparseMaxBytes atomic.Int64
	// Tracking is the CLIENT TRACKING hook-up (tracking.go).
	Tracking Tracking
	// Notify is the keyspace notifications hook-up (notify.go).
	Notify Notifications

	// ListMaxListpackSize and RDBCompression mirror list-max-listpack-size
	// and rdbcompression, which shape DUMP payloads (dump.go).
	ListMaxListpackSize, RDBCompression atomic.Int64
	// StreamNodeMaxBytes and StreamNodeMaxEntries mirror
	// stream-node-max-bytes / -entries: where a stream starts a new node.
	StreamNodeMaxBytes, StreamNodeMaxEntries atomic.Int64

	// MaxMemory, MaxMemorySamples, EvictionTenacity, LFULogFactor and
	// LFUDecayTime mirror maxmemory, maxmemory-samples,
	// maxmemory-eviction-tenacity, lfu-log-factor and lfu-decay-time;
	// ReplicaIgnoreMaxMemory replica-ignore-maxmemory (evict.go).
	MaxMemory, MaxMemorySamples, EvictionTenacity, LFULogFactor, LFUDecayTime atomic.Int64
	ReplicaIgnoreMaxMemory                                                    atomic.Bool
	policy                                                                    atomic.Int32 // maxmemory-policy (Policy)
	overhead                                                                  atomic.Int64 // MemOverhead

	// ScriptMemoryLimit is a script's memory budget in bytes (0: none),
	// script-memory-limit resolved by the actor (actors/script/budget.go).
	ScriptMemoryLimit atomic.Int64

	scripts scriptGroup // script cache, lua-time-limit (script_run.go)
}

// Options configure NewGroup.
type Options struct {
	// Rand returns the random source of shard i (randomized replies,
	// sampling): seed it for replayable runs.
	Rand func(i int) *rand.Rand
	// Clock is the wall clock in unix µs and Mono a monotonic clock in ns,
	// for steps that carry no time of their own (snapshots, loads, expiry
	// budgets, a script's TIME). Commands take their time from Run.
	Clock, Mono func() int64
	Log         zerolog.Logger
	// Databases is the number of databases (the databases directive;
	// 0 means Redis's default of 16).
	Databases int
}

// NewGroup builds n shards (at least 1) with Redis's default settings.
// Each shard needs its Host (SetHost) before it runs anything.
func NewGroup(n int, o Options) *Group {
	n = max(n, 1)
	if o.Databases <= 0 {
		o.Databases = DefaultDatabases
	}
	g := &Group{mono: o.Mono, clock: o.Clock, databases: o.Databases}
	g.defaults()
	g.scripts.cache = script.NewCache()
	g.scripts.libs = script.NewLibraries()
	for i := 0; i < n; i++ {
		s := &Shard{ID: i, n: n, group: g, expireSlot: i, index: keyspace.NewIndex(), rng: o.Rand(i),
			log: o.Log.With().Str("actor", "shard").Int("shard", i).Logger()}
		s.dbs = make([]*DBSpaces, o.Databases)
		s.dbKeys = make([]atomic.Int64, o.Databases)
		s.dbs[0] = new(DBSpaces)
		s.spaces = s.dbs[0]
		s.spaceBytes = dbSpacesBytes
		g.shards = append(g.shards, s)
	}
	return g
}

// nowMS is the group's clock in unix ms.
func (g *Group) nowMS() int64 { return g.clock() / 1000 }

// SetHost gives the shard the services of its actor.
func (s *Shard) SetHost(h Host) { s.host = h }

// defaults sets the settings to Redis's defaults.
func (g *Group) defaults() {
	g.SetMaxIntsetEntries.Store(512)
	g.ZSetMaxListpackEntries.Store(128)
	g.ZSetMaxListpackValue.Store(64)
	g.HashMaxListpackEntries.Store(512)
	g.HashMaxListpackValue.Store(64)
	g.HLLSparseMaxBytes.Store(3000)
	g.ListMaxListpackSize.Store(-2)
	g.RDBCompression.Store(1)
	g.StreamNodeMaxBytes.Store(4096)
	g.StreamNodeMaxEntries.Store(100)
	g.MaxMemorySamples.Store(5)
	g.EvictionTenacity.Store(10)
	g.LFULogFactor.Store(10)
	g.LFUDecayTime.Store(1)
	g.ReplicaIgnoreMaxMemory.Store(true)
}

// N is the number of shards.
func (g *Group) N() int { return len(g.shards) }

// Of returns the index of the shard owning slot.
func (g *Group) Of(slot int) int { return slot % len(g.shards) }

// SlotKeys is the number of keys in slot (read lock-free by any goroutine;
// may lag commands still queued in an actor).
func (g *Group) SlotKeys(slot int) int64 { return g.counts[slot].Load() }

// NextNonEmpty returns the first slot ≥ from holding keys, or -1.
func (g *Group) NextNonEmpty(from int) int {
	for s := from; s < slots.NumSlots; s++ {
		if g.counts[s].Load() > 0 {
			return s
		}
	}
	return -1
}

// Shard returns shard i's state.
func (g *Group) Shard(i int) *Shard { return g.shards[i] }
