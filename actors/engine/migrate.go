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
	"bufio"
	"errors"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/slotd/slotd/netio/batch"
	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/resp"
)

func init() {
	command.Register(KeySpec(command.Spec{Name: "migrate", Arity: -6, Flags: []string{"write"},
		First: 3, Last: 3, Step: 1, Keys: migrateKeys,
		Categories: []string{"keyspace", "write", "slow", "dangerous"},
		Tips:       []string{"nondeterministic_output"}, Since: "2.6.0",
		Summary: "Atomically transfer a key from a Redis instance to another one.", Handler: Handler(cmdMigrate)}))
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

// migrateJob is one MIGRATE's network work and its outcome.
type migrateJob struct {
	addr     string
	timeout  time.Duration
	db       int64
	auth     [][]byte // AUTH arguments (pw, or user pw), nil for none
	cluster  bool     // RESTORE-ASKING rather than RESTORE
	replace  bool
	copy     bool
	keys     [][]byte
	ttls     []int64
	payloads [][]byte

	restored []bool // per key: the target replied +OK
	errMsg   string // the reply when not +OK
}

// migrateWait is the MIGRATE a shard is waiting on.
type migrateWait struct {
	b    *batch.Batch
	cmd  *batch.Cmd
	next int // index of the batch's next command (-1 until run() parks)
	job  *migrateJob
	held []any // messages received meanwhile
}

type migrateDone struct{ job *migrateJob }

func cmdMigrate(c *Call) {
	c.NoPropagate() // never replayed: finishMigrate streams DEL of what moved
	args := c.Args
	job := &migrateJob{addr: net.JoinHostPort(string(args[1]), string(args[2]))}
	first, num := 3, 1
	for j := 6; j < len(args); j++ {
		a, more := Cstr(args[j]), len(args)-1-j
		switch {
		case EqFold(a, "copy"):
			job.copy = true
		case EqFold(a, "replace"):
			job.replace = true
		case EqFold(a, "auth"):
			if more < 1 {
				c.W.Error(ErrSyntax)
				return
			}
			job.auth = [][]byte{args[j+1]}
			j++
		case EqFold(a, "auth2"):
			if more < 2 {
				c.W.Error(ErrSyntax)
				return
			}
			job.auth = [][]byte{args[j+1], args[j+2]}
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
	if job.db, ok = ParseInt(args[4]); !ok {
		c.W.Error(ErrNotInt)
		return
	}
	if timeout <= 0 {
		timeout = 1000
	}
	job.timeout = time.Duration(timeout) * time.Millisecond
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
		job.keys = append(job.keys, append([]byte(nil), args[j]...))
		job.ttls = append(job.ttls, ttl)
		job.payloads = append(job.payloads, p)
	}
	if len(job.keys) == 0 {
		c.W.Simple("NOKEY")
		return
	}
	job.cluster = c.S.group.clusterMode()
	s := c.S
	if s.script.offloaded || s.cur == nil {
		// On the script worker goroutine (or outside a batch): waiting
		// here blocks no event loop, and the shard holds its messages.
		job.run()
		s.finishMigrate(c, job)
		return
	}
	s.parked = true
	s.migr = &migrateWait{b: s.cur, cmd: c.Cmd, next: -1, job: job}
	root, pid := s.group.root, s.group.pids[s.ID]
	go func() {
		job.run()
		root.Send(pid, migrateDone{job: job})
	}()
}

// holdForMigrate keeps every message while a MIGRATE is in flight and
// completes it when its result arrives. It reports whether it took msg.
func (s *Shard) holdForMigrate(msg any) bool {
	w := s.migr
	if d, ok := msg.(migrateDone); ok {
		if w == nil || w.job != d.job {
			return true
		}
		s.resumeMigrate(w)
		return true
	}
	if w == nil {
		return false
	}
	if _, ok := msg.(tick); !ok { // no active expiry meanwhile: the next tick does it
		w.held = append(w.held, msg)
	}
	return true
}

// resumeMigrate writes the MIGRATE reply, deletes what moved, finishes the
// rest of the batch and replays the messages held meanwhile.
func (s *Shard) resumeMigrate(w *migrateWait) {
	s.migr = nil
	s.now = time.Now().UnixMilli()
	s.cur = w.b
	b := w.b
	b.Out.Proto = int(w.cmd.Proto)
	c := &s.call
	*c = Call{Args: w.cmd.Args, W: &b.Out, Slot: int(w.cmd.Slot), Now: s.now, S: s, Cmd: w.cmd}
	s.finishMigrate(c, w.job)
	b.Ends = append(b.Ends, len(b.Out.B))
	if len(s.ready) > 0 {
		s.wake()
	}
	s.cur = b
	s.runFrom(b, w.next)
	held := w.held
	for i, m := range held {
		if s.migr != nil {
			// Another MIGRATE started: keep the rest, in order, ahead of
			// what arrives from now on.
			s.migr.held = append(append([]any(nil), held[i:]...), s.migr.held...)
			return
		}
		s.handle(m)
	}
}

// finishMigrate deletes the keys the target accepted (unless COPY) and
// writes the reply.
func (s *Shard) finishMigrate(c *Call, job *migrateJob) {
	c.NoPropagate() // replicas only see the keys that moved go away
	for i, ok := range job.restored {
		if ok && !job.copy && c.Delete(job.keys[i]) {
			s.signal(job.keys[i])
			if s.Streaming() {
				s.repl.record(c.Slot, [][]byte{CmdDEL, job.keys[i]})
			}
		}
	}
	if job.errMsg != "" {
		c.W.Error(job.errMsg)
		return
	}
	c.W.OK()
}

// run does the network part on the calling goroutine: one attempt, and a
// second on a fresh connection if a cached one turned out dead before any
// key was restored (not after a timeout), as Redis does.
func (job *migrateJob) run() {
	job.restored = make([]bool, len(job.keys))
	for attempt := 0; ; attempt++ {
		retry := job.try()
		if !retry || attempt == 1 {
			return
		}
	}
}

// try sends the pipeline once; it reports whether a retry is allowed.
func (job *migrateJob) try() bool {
	mc, err := migratePool.get(job.addr, job.timeout)
	if err != nil {
		// Redis connects without blocking and finds a refused connection
		// only when it writes; only a connect timeout is reported as such.
		job.errMsg = "IOERR error or timeout writing to target instance"
		if isTimeout(err) {
			job.errMsg = "IOERR error or timeout connecting to the client"
		}
		return false
	}
	var w resp.Writer
	cmd := func(parts ...[]byte) {
		w.Array(len(parts))
		for _, p := range parts {
			w.Bulk(p)
		}
	}
	if job.auth != nil {
		cmd(append([][]byte{[]byte("AUTH")}, job.auth...)...)
	}
	sel := mc.db != job.db
	if sel {
		cmd([]byte("SELECT"), strconv.AppendInt(nil, job.db, 10))
	}
	name := []byte("RESTORE")
	if job.cluster {
		name = []byte("RESTORE-ASKING")
	}
	for i, k := range job.keys {
		ttl := strconv.AppendInt(nil, job.ttls[i], 10)
		if job.replace {
			cmd(name, k, ttl, job.payloads[i], []byte("REPLACE"))
		} else {
			cmd(name, k, ttl, job.payloads[i])
		}
	}
	_ = mc.conn.SetWriteDeadline(time.Now().Add(job.timeout))
	if _, err := mc.conn.Write(w.B); err != nil {
		mc.conn.Close()
		job.errMsg = "IOERR error or timeout writing to target instance"
		return !isTimeout(err)
	}
	readLine := func() (string, error) {
		_ = mc.conn.SetReadDeadline(time.Now().Add(job.timeout))
		return readReply(mc.r)
	}
	failed := false
	fail := func(line string) {
		if !failed {
			failed = true
			job.errMsg = "ERR Target instance replied with error: " + line[1:]
		}
	}
	sockErr := func(err error) bool {
		mc.conn.Close()
		job.errMsg = "IOERR error or timeout reading to target instance"
		return !isTimeout(err) && !anyTrue(job.restored)
	}
	authErr := ""
	if job.auth != nil {
		line, err := readLine()
		if err != nil {
			return sockErr(err)
		}
		if line[0] == '-' {
			authErr = line
		}
	}
	selErr := ""
	if sel {
		line, err := readLine()
		if err != nil {
			return sockErr(err)
		}
		if line[0] == '-' {
			selErr = line
		} else {
			mc.db = job.db
		}
	}
	for i := range job.keys {
		line, err := readLine()
		if err != nil {
			return sockErr(err)
		}
		switch {
		case authErr != "":
			fail(authErr)
		case selErr != "":
			fail(selErr)
		case line[0] == '-':
			fail(line)
		default:
			job.restored[i] = true
		}
	}
	if failed {
		mc.db = -1 // as Redis: after an error the selected db is not trusted
	}
	if !failed {
		job.errMsg = ""
	}
	migratePool.put(mc)
	return false
}

// readReply reads one reply line ("+OK", "-ERR ..."); a bulk or other
// multi-line reply (not sent by RESTORE/AUTH/SELECT) is read through and
// reported as its first line.
func readReply(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return "", errors.New("protocol error")
	}
	line = line[:len(line)-2]
	if line[0] == '$' {
		n, err := strconv.Atoi(line[1:])
		if err == nil && n >= 0 {
			if _, err := r.Discard(n + 2); err != nil {
				return "", err
			}
		}
	}
	return line, nil
}

func anyTrue(v []bool) bool {
	for _, b := range v {
		if b {
			return true
		}
	}
	return false
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// Connection cache: idle connections per target, closed after 10 s without
// use (Redis's MIGRATE_SOCKET_CACHE_TTL). A connection serves one MIGRATE at
// a time; concurrent MIGRATEs to one target (from several shards) open
// more.
const migrateIdleTTL = 10 * time.Second

type migrateConn struct {
	addr string
	conn net.Conn
	r    *bufio.Reader
	db   int64 // last SELECTed db, -1 unknown
	used time.Time
}

type connPool struct {
	mu     sync.Mutex
	idle   map[string][]*migrateConn
	reaper bool
}

var migratePool = &connPool{idle: map[string][]*migrateConn{}}

func (p *connPool) get(addr string, timeout time.Duration) (*migrateConn, error) {
	p.mu.Lock()
	if l := p.idle[addr]; len(l) > 0 {
		mc := l[len(l)-1]
		p.idle[addr] = l[:len(l)-1]
		p.mu.Unlock()
		return mc, nil
	}
	p.mu.Unlock()
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	return &migrateConn{addr: addr, conn: conn, r: bufio.NewReaderSize(conn, 4096), db: -1}, nil
}

func (p *connPool) put(mc *migrateConn) {
	mc.used = time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.idle[mc.addr] = append(p.idle[mc.addr], mc)
	if !p.reaper {
		p.reaper = true
		go p.reap()
	}
}

// reap closes connections idle for migrateIdleTTL; it ends when none is
// left.
func (p *connPool) reap() {
	for {
		time.Sleep(time.Second)
		p.mu.Lock()
		now := time.Now()
		for addr, l := range p.idle {
			kept := l[:0]
			for _, mc := range l {
				if now.Sub(mc.used) >= migrateIdleTTL {
					mc.conn.Close()
				} else {
					kept = append(kept, mc)
				}
			}
			if len(kept) == 0 {
				delete(p.idle, addr)
			} else {
				p.idle[addr] = kept
			}
		}
		if len(p.idle) == 0 {
			p.reaper = false
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
	}
}
