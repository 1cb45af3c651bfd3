package engine

import (
	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/slots"
)

// Databases (SELECT, MOVE, SWAPDB). Each shard keeps one set of per-slot
// keyspaces per database, all looked up through the shard's one index. A
// command carries the database its client selected (batch.Cmd.DB) and the
// shard makes it current before running it, so handlers see only that
// database; work that is not a client command (expiry, snapshots, slot
// drops) visits each database in turn (ForEachDB).

// DefaultDatabases is Redis's default for the databases directive.
const DefaultDatabases = 16

// DBSpaces is one database's keyspaces in one shard, by slot.
type DBSpaces [slots.NumSlots]*keyspace.Keyspace

// noSpaces stands for a database this shard has never written: always
// empty, never written (Keyspace allocates the database's own array
// before adding a keyspace).
var noSpaces DBSpaces

// DBKey names a key of one database (blocked clients, WATCH).
type DBKey struct {
	DB  int
	Key string
}

// Databases is the number of databases.
func (g *Group) Databases() int { return g.databases }

// UseDB makes db the current database of the shard.
func (s *Shard) UseDB(db int) {
	s.db = db
	s.repl.want = db
	if d := s.dbs[db]; d != nil {
		s.spaces = d
	} else {
		s.spaces = &noSpaces
	}
}

// DB is the current database (the executing command's).
func (s *Shard) DB() int { return s.db }

// DB is the database the command runs in.
func (c *Call) DB() int { return c.S.db }

// SwapDBs exchanges the contents of databases a and b in this shard (the
// shard's part of SWAPDB). Blocked clients and WATCHers stay with their
// database number, as in Redis: WATCHers of keys in either are flagged,
// and clients blocked in either get to run again.
func (s *Shard) SwapDBs(a, b int) {
	saved := s.db
	s.dbs[a], s.dbs[b] = s.dbs[b], s.dbs[a]
	na, nb := s.dbKeys[a].Load(), s.dbKeys[b].Load()
	s.dbKeys[a].Store(nb)
	s.dbKeys[b].Store(na)
	for _, db := range []int{a, b} {
		s.UseDB(db)
		// WATCHers of a key that exists in either database (before or
		// after the swap), as Redis's touchAllWatchedKeysInDb.
		for k, recs := range s.watched {
			if k.DB == db && (s.holds(a, k.Key) || s.holds(b, k.Key)) {
				for _, r := range recs {
					r.ws.Dirty()
				}
			}
		}
		// Every client blocked in either database runs again: one whose
		// key arrived is served, a group read whose stream went away
		// fails (Redis's scanDatabaseForDeletedStreams), others block on.
		for k := range s.blocked {
			if k.DB == db {
				s.ready = append(s.ready, k)
			}
		}
	}
	s.UseDB(saved) // the caller's runFrom wakes the ready clients
}

// eachDBOf calls fn for each database with keys in slot, in order.
func (s *Shard) eachDBOf(slot int, fn func(db int, ks *keyspace.Keyspace)) {
	for db, d := range s.dbs {
		if d != nil && d[slot] != nil && d[slot].Len() > 0 {
			fn(db, d[slot])
		}
	}
}

// ClusterMode reports whether the node runs in cluster mode.
func (g *Group) ClusterMode() bool { return g.clusterMode() }

// InDB runs fn with database db current, then makes the command's own
// database current again (MOVE, COPY ... DB).
func (c *Call) InDB(db int, fn func()) {
	s := c.S
	saved := s.db
	s.UseDB(db)
	defer s.UseDB(saved)
	fn()
}

// DBKeys is the number of keys of database db over every shard (read
// lock-free; may lag commands still queued in an actor).
func (g *Group) DBKeys(db int) int64 {
	var n int64
	for _, s := range g.shards {
		n += s.dbKeys[db].Load()
	}
	return n
}

// holds reports whether database db of this shard has key, not past its
// TTL (a stale key counts as missing, as for Redis's SWAPDB).
func (s *Shard) holds(db int, key string) bool {
	d := s.dbs[db]
	if d == nil {
		return false
	}
	e := s.index.Lookup(d[slots.HashSlot([]byte(key))], []byte(key))
	return e != nil && !Expired(e, s.now)
}
