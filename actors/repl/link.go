package repl

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/netio/command"
)

// Link states (ROLE names them connect, connecting, handshake, sync,
// connected).
const (
	linkConnect = iota
	linkConnecting
	linkHandshake
	linkSync
	linkConnected
)

// Apply pacing on a replica: at most applyInflight batches queued in the
// shard actors (the link then stops reading, and TCP pushes back on the
// primary), and a batch is sent once it holds applyBatchBytes.
const (
	applyInflight   = 64
	applyBatchBytes = 1 << 20
)

// link is a replica's connection to its primary: it connects, syncs,
// applies the stream, acknowledges, and reconnects after failures with a
// backoff, asking for a partial resync when its data is complete.
type link struct {
	m    *Manager
	host string
	port int

	state   atomic.Int32
	loading atomic.Bool // full sync being applied (clients get LOADING)
	// fullSync: a full sync is in progress or failed half-way (the offset
	// reads 0); asyncLoading: its frames are spooled in memory while the
	// old data is served (repl-diskless-load swapdb).
	fullSync     atomic.Bool
	asyncLoading atomic.Bool
	spooled      atomic.Int64 // bytes spooled to disk by the current full sync
	lastIO       atomic.Int64
	downSince    atomic.Int64
	syncRead     atomic.Int64

	stopc    chan struct{}
	stopOnce sync.Once
	done     chan struct{}
	connMu   sync.Mutex
	conn     net.Conn
	wmu      sync.Mutex // writes (handshake, ACKs)

	// streamDB is the database each of the primary's streams last
	// SELECTed (the stream goroutine's; kept for a partial resync).
	streamDB []int

	mu       sync.Mutex
	masterID string // replication id of the history we hold
	// syncStarts are the primary's offsets a full sync starts from.
	syncStarts []int64
	synced     bool          // the data is complete up to read (partial resync possible)
	read       []int64       // primary offsets of what was handed to the shards
	applied    []int64       // primary offsets known to be applied
	progress   chan struct{} // closed when read advances (applied.go)

	sem       chan struct{}
	batchPool sync.Pool
	ackNow    chan struct{}
	specs     map[string]*command.Spec
}

func newLink(m *Manager, host string, port int, replid string, offs []int64) *link {
	l := &link{m: m, host: host, port: port, stopc: make(chan struct{}), done: make(chan struct{}),
		masterID: replid, synced: true, read: offs, applied: append([]int64(nil), offs...),
		sem: make(chan struct{}, applyInflight), ackNow: make(chan struct{}, 1),
		specs: map[string]*command.Spec{}}
	l.downSince.Store(time.Now().UnixMilli())
	return l
}

// halt stops the link and waits until it no longer touches anything.
func (l *link) halt() {
	l.stopOnce.Do(func() { close(l.stopc) })
	l.connMu.Lock()
	if l.conn != nil {
		_ = l.conn.Close()
	}
	l.connMu.Unlock()
	<-l.done
}

func (l *link) stopped() bool {
	select {
	case <-l.stopc:
		return true
	default:
		return false
	}
}

func (l *link) readVec() []int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]int64(nil), l.read...)
}

func (l *link) appliedVec() []int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]int64(nil), l.applied...)
}

func (l *link) setState(st int32) {
	old := l.state.Swap(st)
	if old == linkConnected && st != linkConnected {
		l.downSince.Store(time.Now().UnixMilli())
	}
	if old != st {
		l.m.updateGate()
		l.mu.Lock()
		l.progressed()
		l.mu.Unlock()
	}
}

// run connects and serves sessions until halted.
func (l *link) run() {
	defer close(l.done)
	backoff := 50 * time.Millisecond
	for !l.stopped() {
		start := time.Now()
		err := l.session()
		if l.stopped() {
			break
		}
		l.setState(linkConnect)
		if err != nil {
			l.m.log.Warn().Err(err).Str("master", l.addr()).Msg("Replication link failed")
		}
		if time.Since(start) > 5*time.Second {
			backoff = 50 * time.Millisecond // the session worked for a while
		}
		// A node frozen by DEBUG SLEEP reconnects after it wakes, as a
		// sleeping redis-server does nothing meanwhile and reconnects
		// from its replication cron: the replies it owes when it wakes
		// (the EXEC that slept) go out first.
		wait := backoff
		if p := l.m.srv.PausedFor(); p > 0 {
			wait = p + backoff
		}
		select {
		case <-l.stopc:
		case <-time.After(wait):
		}
		backoff = min(backoff*2, time.Second)
	}
	// Wait for what was handed to the shards, so a role change that
	// follows sees every record applied.
	for i := 0; i < cap(l.sem); i++ {
		l.sem <- struct{}{}
	}
}

func (l *link) addr() string { return net.JoinHostPort(l.host, strconv.Itoa(l.port)) }

var errHalted = errors.New("link halted")

// session is one connection: handshake, PSYNC, then frames until an error.
func (l *link) session() error {
	l.setState(linkConnecting)
	timeout := time.Duration(l.m.cfg.Int("repl-timeout")) * time.Second
	d := net.Dialer{Timeout: min(timeout, 5*time.Second)}
	if ip := net.ParseIP(l.m.cfg.String("bind-source-addr")); ip != nil {
		d.LocalAddr = &net.TCPAddr{IP: ip} // bind-source-addr
	}
	conn, err := d.Dial("tcp", l.addr())
	if err != nil {
		return err
	}
	l.connMu.Lock()
	if l.stopped() {
		l.connMu.Unlock()
		_ = conn.Close()
		return errHalted
	}
	l.conn = conn
	l.connMu.Unlock()
	defer func() {
		l.connMu.Lock()
		l.conn = nil
		l.connMu.Unlock()
		_ = conn.Close()
	}()
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(!l.m.cfg.Bool("repl-disable-tcp-nodelay"))
	}
	r := bufio.NewReaderSize(conn, 256<<10)
	l.setState(linkHandshake)
	call := func(args ...string) (string, error) {
		_ = conn.SetDeadline(time.Now().Add(timeout))
		if _, err := conn.Write(appendCommand(nil, args...)); err != nil {
			return "", err
		}
		line, err := r.ReadString('\n')
		if err != nil {
			return "", err
		}
		line = strings.TrimRight(line, "\r\n")
		if strings.HasPrefix(line, "-") {
			return "", fmt.Errorf("%s replied %q", args[0], line[1:])
		}
		return line, nil
	}
	if pass := l.m.cfg.String("masterauth"); pass != "" {
		args := []string{"AUTH", pass}
		if user := l.m.cfg.String("masteruser"); user != "" {
			args = []string{"AUTH", user, pass}
		}
		if _, err := call(args...); err != nil {
			return fmt.Errorf("Unable to AUTH to MASTER: %w", err) // Redis's log line
		}
	}
	if _, err := call("PING"); err != nil {
		return err
	}
	port := l.m.cfg.Int("replica-announce-port")
	if port == 0 {
		port = l.m.cfg.Int("port")
	}
	if _, err := call("REPLCONF", "listening-port", strconv.FormatInt(port, 10)); err != nil {
		return err
	}
	if ip := l.m.cfg.String("replica-announce-ip"); ip != "" {
		if _, err := call("REPLCONF", "ip-address", ip); err != nil {
			return err
		}
	}
	if _, err := call("REPLCONF", "capa", "slotd"); err != nil {
		return err
	}
	l.mu.Lock()
	id, vec := "?", "-1"
	if l.synced && l.masterID != "" && len(l.read) > 0 {
		id, vec = l.masterID, formatVec(l.read)
	}
	l.mu.Unlock()
	psync := []string{"PSYNC", id, vec}
	fo := l.m.failoverPSync(l)
	if fo {
		psync = append(psync, "FAILOVER")
	}
	line, err := call(psync...)
	if fo {
		ok := err == nil && (strings.HasPrefix(line, "+FULLRESYNC") || strings.HasPrefix(line, "+CONTINUE"))
		if err == nil && !ok {
			err = fmt.Errorf("unexpected PSYNC reply %q", line)
		}
		l.m.failoverResult(l, err)
	}
	if err != nil {
		return err
	}
	_ = conn.SetDeadline(time.Time{})
	l.lastIO.Store(time.Now().UnixMilli())
	n := 0
	var sp *spool
	f := strings.Fields(line)
	switch {
	case len(f) == 3 && f[0] == "+FULLRESYNC":
		starts, ok := parseVec(f[2])
		if !ok {
			return fmt.Errorf("bad FULLRESYNC reply %q", line)
		}
		n = len(starts)
		if sp, err = l.spoolFor(); err != nil {
			return fmt.Errorf("opening the sync spool: %w", err)
		}
		l.streamDB = nil // the snapshot and stream start in DB 0
		if err := l.m.beginFullSync(l, f[1], starts, sp); err != nil {
			if sp != nil {
				sp.discard()
			}
			return err
		}
		l.m.log.Info().Str("master", l.addr()).Msg("Full resync from master: " + f[1])
	case len(f) == 2 && f[0] == "+CONTINUE":
		l.mu.Lock()
		n = len(l.read)
		l.mu.Unlock()
		if err := l.m.continued(l, f[1]); err != nil {
			return err
		}
		l.m.log.Info().Str("master", l.addr()).Msg("Successful partial resynchronization with master")
	default:
		return fmt.Errorf("unexpected PSYNC reply %q", line)
	}
	stop := make(chan struct{})
	defer close(stop)
	go l.acker(conn, stop)
	ml := l.m.srv.AddMasterLink(conn.RemoteAddr().String(), conn.LocalAddr().String(), func() { _ = conn.Close() })
	defer ml.Remove()
	return l.stream(conn, r, n, ml, sp)
}

// newBatch takes an apply batch from the link's pool: batches come back
// once their shard applied them, with their command slice, so a replica
// does not allocate per batch.
func (l *link) newBatch() *engine.ApplyBatch {
	if b, ok := l.batchPool.Get().(*engine.ApplyBatch); ok {
		return b
	}
	b := &engine.ApplyBatch{Offset: -1}
	b.Done = func() {
		clear(b.Cmds)
		b.Cmds, b.Offset = b.Cmds[:0], -1
		if cap(b.Cmds) > 4096 {
			b.Cmds = nil
		}
		l.batchPool.Put(b)
		<-l.sem
	}
	return b
}

// flushSlots splits a FLUSHSLOTS record by the shard owning each slot
// here; each shard streams its own part.
func (l *link) flushSlots(args [][]byte, stream bool, db int, batchFor func(int) *engine.ApplyBatch) {
	m := l.m.shards.N()
	parts := make([][]int, m)
	for _, a := range args {
		s, err := strconv.Atoi(string(a))
		if err != nil || s < 0 || s >= 16384 {
			continue
		}
		parts[s%m] = append(parts[s%m], s)
	}
	for j, slots := range parts {
		if len(slots) == 0 {
			continue
		}
		rc := engine.Replicated{Flush: slots, Slot: -1, DB: db}
		if stream {
			rec := [][]byte{[]byte(engine.FlushSlots)}
			for _, s := range slots {
				rec = append(rec, []byte(strconv.Itoa(s)))
			}
			rc.Raw = engine.AppendRecord(nil, -1, rec)
		}
		b := batchFor(j)
		b.Cmds = append(b.Cmds, rc)
	}
}

// spec finds the shard command a record names (nil for MULTI/EXEC, which
// only mark a transaction's bounds, and for anything not a shard command).
func (l *link) spec(args [][]byte) *command.Spec {
	if sp, ok := l.specs[string(args[0])]; ok {
		return sp
	}
	name := string(args[0])
	sp := command.Lookup(args[0])
	if sp != nil && sp.Subcommands != nil && len(args) > 1 {
		if sub := sp.Sub(args[1]); sub != nil {
			sp = sub
		}
	}
	if sp != nil && (sp.Exec != command.Shard || !sp.Bound()) {
		sp = nil
	}
	if sp == nil && !strings.EqualFold(name, "multi") && !strings.EqualFold(name, "exec") {
		l.m.log.Warn().Str("command", name).Msg("unknown command in the replication stream")
	}
	if len(l.specs) < 1024 && (sp == nil || sp.Subcommands == nil) {
		l.specs[name] = sp
	}
	return sp
}

// acker acknowledges every second and when the primary asks, reporting
// the offsets of what the shards have applied.
func (l *link) acker(conn net.Conn, stop chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		case <-l.ackNow:
		}
		vec := l.readVec()
		done := make(chan struct{})
		l.m.shards.Barrier(func() { close(done) })
		select {
		case <-stop:
			return
		case <-done:
		}
		l.mu.Lock()
		l.applied = vec
		l.mu.Unlock()
		l.wmu.Lock()
		_ = conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
		_, err := conn.Write(appendCommand(nil, "REPLCONF", "ACK", formatVec(vec)))
		l.wmu.Unlock()
		if err != nil {
			return
		}
	}
}
