package engine

// MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE]
// [AUTH pw] [AUTH2 user pw] [KEYS key...]
//
// The keys (all in one slot, dispatch checked it) are serialized as DUMP
// payloads inside the actor, then a goroutine sends AUTH/SELECT and one
// RESTORE-ASKING (RESTORE outside cluster mode) per key, pipelined in one
// write, over a pooled connection to the target, and reads the replies.
// Neither the actor nor an event loop waits on the network.
//
// Atomicity: while a MIGRATE is in flight its shard actor holds every
// message it receives (batches, timers, admin work) and replays them, in
// arrival order, once the reply is in and the migrated keys are deleted.
// So no client sees a key both here and on the target, or writes a key
// between its serialization and its deletion. Redis blocks the whole server
// for the same round trip; here only the slots of one shard actor wait.
// The rest of the batch that carried MIGRATE resumes after it.

import (
	"strings"
	"time"

	"github.com/slotd/slotd/netio/batch"
	"github.com/slotd/slotd/netio/command"
)

func registerMigrate() {
	command.Register(KeySpec(Handle(&command.Spec{Name: "migrate", Arity: -6, Flags: []string{"write"},
		First: 3, Last: 3, Step: 1, Keys: migrateKeys,
		Categories: []string{"keyspace", "write", "slow", "dangerous"},
		Tips:       []string{"nondeterministic_output"}, Since: "2.6.0",
		Summary: "Atomically transfer a key from a Redis instance to another one."}, cmdMigrate)))
}

// migrateKeys: argument 3, or every argument after KEYS (Redis's
// migrateGetKeys: the options before KEYS are skipped with their values).
func migrateKeys(args [][]byte) ([]int, error) {
	for i := 6; i < len(args); i++ {
		a := Cstr(args[i])
		switch {
		case EqFold(a, "keys"):
			if len(args[3]) > 0 {
				return []int{3}, nil
			}
			idx := make([]int, 0, len(args)-i-1)
			for j := i + 1; j < len(args); j++ {
				idx = append(idx, j)
			}
			return idx, nil
		case EqFold(a, "auth"):
			i++
		case EqFold(a, "auth2"):
			i += 2
		}
	}
	return []int{3}, nil
}

// MigrateJob is one MIGRATE's network work (the Host performs it) and its
// outcome.
type MigrateJob struct {
	Addr     string
	Timeout  time.Duration
	DB       int64
	Auth     [][]byte // AUTH arguments (pw, or user pw), nil for none
	Cluster  bool     // RESTORE-ASKING rather than RESTORE
	Replace  bool
	Copy     bool
	Keys     [][]byte
	TTLs     []int64
	Payloads [][]byte

	Restored []bool // per key: the target replied +OK
	ErrMsg   string // the reply when not +OK
}

// migrateWait is the MIGRATE a shard is waiting on.
type migrateWait struct {
	b    *batch.Batch
	cmd  *batch.Cmd
	next int // index of the batch's next command (-1 until run() parks)
	job  *MigrateJob
}

func cmdMigrate(c *Call) {
	c.NoPropagate() // never replayed: finishMigrate streams DEL of what moved
	args := c.Args
	job := &MigrateJob{Addr: joinHostPort(string(args[1]), string(args[2]))}
	first, num := 3, 1
	for j := 6; j < len(args); j++ {
		a, more := Cstr(args[j]), len(args)-1-j
		switch {
		case EqFold(a, "copy"):
			job.Copy = true
		case EqFold(a, "replace"):
			job.Replace = true
		case EqFold(a, "auth"):
			if more < 1 {
				c.W.Error(ErrSyntax)
				return
			}
			job.Auth = [][]byte{args[j+1]}
			j++
		case EqFold(a, "auth2"):
			if more < 2 {
				c.W.Error(ErrSyntax)
				return
			}
			job.Auth = [][]byte{args[j+1], args[j+2]}
			j += 2
		case EqFold(a, "keys"):
			if len(args[3]) != 0 {
				c.W.Error("ERR When using MIGRATE KEYS option, the key argument must be set to the empty string")
				return
			}
			first, num = j+1, len(args)-j-1
			j = len(args)
		default:
			c.W.Error(ErrSyntax)
			return
		}
	}
	timeout, ok := c.IntArg(args[5])
	if !ok {
		return
	}
	if job.DB, ok = ParseInt(args[4]); !ok {
		c.W.Error(ErrNotInt)
		return
	}
	if timeout <= 0 {
		timeout = 1000
	}
	job.Timeout = time.Duration(timeout) * time.Millisecond
	for j := first; j < first+num; j++ {
		e := c.Lookup(args[j])
		if e == nil {
			continue
		}
		p, ok := c.Dump(e)
		if !ok {
			c.W.Error("ERR DUMP of a " + e.Kind.String() + " value is not supported")
			return
		}
		ttl := int64(0)
		if e.Expire != 0 {
			ttl = max(e.Expire-c.Now, 1)
		}
		job.Keys = append(job.Keys, append([]byte(nil), args[j]...))
		job.TTLs = append(job.TTLs, ttl)
		job.Payloads = append(job.Payloads, p)
	}
	if len(job.Keys) == 0 {
		c.W.Simple("NOKEY")
		return
	}
	job.Cluster = c.S.group.clusterMode()
	s := c.S
	// Outside a batch nothing can be parked: the transfer runs here.
	if !s.host.Migrate(job, s.cur == nil) {
		s.finishMigrate(c, job)
		return
	}
	s.parked = true
	s.migr = &migrateWait{b: s.cur, cmd: c.Cmd, next: -1, job: job}
}

// Migrating reports whether a MIGRATE waits for its transfer; the actor
// holds its other messages meanwhile.
func (s *Shard) Migrating() bool { return s.migr != nil }

// ResumeMigrate completes the MIGRATE parked for job at now (unix ms):
// its reply, the deletion of what moved, and the rest of its batch. It
// reports false when the shard was not waiting for job.
func (s *Shard) ResumeMigrate(job *MigrateJob, now int64) bool {
	w := s.migr
	if w == nil || w.job != job {
		return false
	}
	s.migr = nil
	s.now = now
	s.cur = w.b
	b := w.b
	b.Out.Proto = int(w.cmd.Proto)
	s.UseDB(int(w.cmd.DB)) // the keys go from the client's database
	c := &s.call
	*c = Call{Args: w.cmd.Args, W: &b.Out, Slot: int(w.cmd.Slot), Now: s.now, S: s, Cmd: w.cmd}
	mark := len(b.Out.B)
	s.finishMigrate(c, w.job)
	s.countServed(w.cmd, b.Out.B[mark:])
	b.Ends = append(b.Ends, len(b.Out.B))
	if len(s.ready) > 0 {
		s.wake()
	}
	s.cur = b
	s.runSafe(b, w.next)
	return true
}

// finishMigrate deletes the keys the target accepted (unless COPY) and
// writes the reply.
func (s *Shard) finishMigrate(c *Call, job *MigrateJob) {
	c.NoPropagate() // replicas only see the keys that moved go away
	for i, ok := range job.Restored {
		if ok && !job.Copy && c.Delete(job.Keys[i]) {
			s.signal(job.Keys[i])
			if s.Streaming() {
				s.repl.record(c.Slot, [][]byte{CmdDEL, job.Keys[i]})
			}
			c.Notify(NotifyGeneric, "del", job.Keys[i])
		}
	}
	if job.ErrMsg != "" {
		c.W.Error(job.ErrMsg)
		return
	}
	c.W.OK()
}

// joinHostPort is net.JoinHostPort: host:port, an IPv6 host in brackets.
func joinHostPort(host, port string) string {
	if strings.IndexByte(host, ':') >= 0 {
		return "[" + host + "]:" + port
	}
	return host + ":" + port
}
