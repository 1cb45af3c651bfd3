package shard

import (
	"bufio"
	"errors"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/netio/resp"
)

// MIGRATE's transfer: the engine parses the command and dumps the keys,
// the actor sends them to the target over a cached connection, on a
// goroutine of its own unless the shard already runs off the event loops
// (the script worker) — then it waits. The actor holds every other message
// until the transfer is done, so the shard's state does not move under the
// MIGRATE (Redis blocks the whole server meanwhile).

// Migrate implements engine.Host.
func (a *Actor) Migrate(job *engine.MigrateJob, wait bool) bool {
	if wait || a.script.offloaded {
		runMigrate(job)
		return false
	}
	root, pid := a.g.root, a.pid
	go func() {
		runMigrate(job)
		root.Send(pid, migrateDone{job: job})
	}()
	return true
}

// holdForMigrate keeps every message while a MIGRATE is in flight and
// completes it when its result arrives. It reports whether it took msg.
func (a *Actor) holdForMigrate(msg any) bool {
	if d, ok := msg.(migrateDone); ok {
		if !a.eng.ResumeMigrate(d.job, now()) {
			return true
		}
		held := a.held
		a.held = nil
		for i, m := range held {
			if a.eng.Migrating() {
				// Another MIGRATE started: keep the rest, in order, ahead
				// of what arrives from now on.
				a.held = append(append([]any(nil), held[i:]...), a.held...)
				return true
			}
			a.handle(m)
		}
		return true
	}
	if !a.eng.Migrating() {
		return false
	}
	if _, ok := msg.(tick); !ok { // no active expiry meanwhile: the next tick does it
		a.held = append(a.held, msg)
	}
	return true
}

// run does the network part on the calling goroutine: one attempt, and a
// second on a fresh connection if a cached one turned out dead before any
// key was restored (not after a timeout), as Redis does.
func runMigrate(job *engine.MigrateJob) {
	job.Restored = make([]bool, len(job.Keys))
	for attempt := 0; ; attempt++ {
		retry := tryMigrate(job)
		if !retry || attempt == 1 {
			return
		}
	}
}

// try sends the pipeline once; it reports whether a retry is allowed.
func tryMigrate(job *engine.MigrateJob) bool {
	mc, err := migratePool.get(job.Addr, job.Timeout)
	if err != nil {
		// Redis connects without blocking and finds a refused connection
		// only when it writes; only a connect timeout is reported as such.
		job.ErrMsg = "IOERR error or timeout writing to target instance"
		if isTimeout(err) {
			job.ErrMsg = "IOERR error or timeout connecting to the client"
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
	if job.Auth != nil {
		cmd(append([][]byte{[]byte("AUTH")}, job.Auth...)...)
	}
	sel := mc.db != job.DB
	if sel {
		cmd([]byte("SELECT"), strconv.AppendInt(nil, job.DB, 10))
	}
	name := []byte("RESTORE")
	if job.Cluster {
		name = []byte("RESTORE-ASKING")
	}
	for i, k := range job.Keys {
		ttl := strconv.AppendInt(nil, job.TTLs[i], 10)
		if job.Replace {
			cmd(name, k, ttl, job.Payloads[i], []byte("REPLACE"))
		} else {
			cmd(name, k, ttl, job.Payloads[i])
		}
	}
	_ = mc.conn.SetWriteDeadline(time.Now().Add(job.Timeout))
	if _, err := mc.conn.Write(w.B); err != nil {
		mc.conn.Close()
		job.ErrMsg = "IOERR error or timeout writing to target instance"
		return !isTimeout(err)
	}
	readLine := func() (string, error) {
		_ = mc.conn.SetReadDeadline(time.Now().Add(job.Timeout))
		return readReply(mc.r)
	}
	failed := false
	fail := func(line string) {
		if !failed {
			failed = true
			job.ErrMsg = "ERR Target instance replied with error: " + line[1:]
		}
	}
	sockErr := func(err error) bool {
		mc.conn.Close()
		job.ErrMsg = "IOERR error or timeout reading to target instance"
		return !isTimeout(err) && !anyTrue(job.Restored)
	}
	authErr := ""
	if job.Auth != nil {
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
			mc.db = job.DB
		}
	}
	for i := range job.Keys {
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
			job.Restored[i] = true
		}
	}
	if failed {
		mc.db = -1 // as Redis: after an error the selected db is not trusted
	}
	if !failed {
		job.ErrMsg = ""
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
