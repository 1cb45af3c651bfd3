package netio

// Client pauses: CLIENT PAUSE / UNPAUSE and the write pause a primary
// takes during a manual failover (Server.PauseWrites). A paused command is
// postponed, not refused: the loop stops parsing that client's input at
// the command and wakes the connection when the pause ends, exactly like
// a barrier (Redis's blockPostponeClient). Replicas are never paused.
//
// A write pause must also account for commands that passed the check just
// before the pause began and are still on their way to a shard: each
// OnTraffic call counts itself in a striped counter while it parses and
// dispatches, and PauseWrites waits until every stripe has been seen at
// zero before it runs a no-op through every shard actor. After that no
// write of a client can change the dataset until the pause ends, so the
// replication offset read then is final — the offset a manual failover's
// replica must reach.

import (
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/resp"
)

// Pause purposes: each keeps its own deadline, the strictest wins.
const (
	PauseByCommand  = iota // CLIENT PAUSE
	PauseByFailover        // manual failover (primary side)
	PauseByShutdown        // a shutdown waiting for lagging replicas (shutdown.go)
	numPausePurposes
)

type pauseReq struct {
	until int64 // unix ns; 0: none
	all   bool
}

// pauseStripes is the number of in-dispatch counters.
const pauseStripes = 64

type pauseState struct {
	mu       sync.Mutex
	reqs     [numPausePurposes]pauseReq
	waiting  []gnet.Conn // connections holding a postponed command
	timer    *time.Timer
	writeEnd atomic.Int64 // effective: writes postponed until (unix ns)
	allEnd   atomic.Int64 // effective: every command postponed until
	stripes  [pauseStripes]struct {
		n atomic.Int32
		_ [60]byte
	}
}

// mayReplicate are the commands without the write flag that Redis still
// postpones in a write pause (its may-replicate flag).
var mayReplicate = map[string]bool{"eval": true, "evalsha": true, "publish": true, "spublish": true,
	"pfcount": true, "script|load": true, "script|flush": true, "fcall": true}

// postpones reports whether spec must wait for the pause to end.
func (s *Server) postpones(cl *client, spec *command.Spec) bool {
	p := &s.pause
	we, ae := p.writeEnd.Load(), p.allEnd.Load()
	if we == 0 && ae == 0 || cl.rs != nil && cl.rs.feed != nil {
		return false
	}
	now := time.Now().UnixNano()
	if now < ae {
		return true
	}
	if now >= we {
		return false
	}
	if spec.Write() || mayReplicate[spec.FullName()] {
		return true
	}
	if spec.TxControl && spec.Name == "exec" && cl.multi {
		for _, q := range cl.txq {
			if q.spec.Write() || mayReplicate[q.spec.FullName()] {
				return true
			}
		}
	}
	return false
}

// postpone parks c until the pause ends (or is lifted).
func (s *Server) postpone(c gnet.Conn) {
	p := &s.pause
	p.mu.Lock()
	p.waiting = append(p.waiting, c)
	p.mu.Unlock()
	// The pause may have ended between the check and the append.
	if end := max(p.writeEnd.Load(), p.allEnd.Load()); end == 0 || time.Now().UnixNano() >= end {
		s.wakePostponed()
	}
}

// wakePostponed wakes every parked connection; they re-check the pause.
func (s *Server) wakePostponed() { wakeAll(&s.pause.mu, &s.pause.waiting) }

// wakeAll wakes and forgets the connections parked in *list (guarded by
// mu).
func wakeAll(mu *sync.Mutex, list *[]gnet.Conn) {
	mu.Lock()
	w := *list
	*list = nil
	mu.Unlock()
	for _, c := range w {
		_ = c.Wake(nil)
	}
}

// Pause postpones every command (all) or every write of clients until
// until, for purpose; a later call for the same purpose replaces it.
func (s *Server) Pause(purpose int, until time.Time, all bool) {
	p := &s.pause
	p.mu.Lock()
	p.reqs[purpose] = pauseReq{until: until.UnixNano(), all: all}
	s.recomputePause()
	p.mu.Unlock()
}

// Unpause lifts purpose's pause and wakes the clients it held.
func (s *Server) Unpause(purpose int) {
	p := &s.pause
	p.mu.Lock()
	p.reqs[purpose] = pauseReq{}
	s.recomputePause()
	p.mu.Unlock()
	s.wakePostponed()
}

// recomputePause derives the effective deadlines and arms the timer that
// wakes parked clients at the latest one. Called with p.mu held.
func (s *Server) recomputePause() {
	p := &s.pause
	var we, ae int64
	for _, r := range p.reqs {
		if r.until == 0 {
			continue
		}
		we = max(we, r.until)
		if r.all {
			ae = max(ae, r.until)
		}
	}
	p.writeEnd.Store(we)
	p.allEnd.Store(ae)
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	if end := max(we, ae); end != 0 {
		p.timer = time.AfterFunc(time.Until(time.Unix(0, end)), func() {
			p.mu.Lock()
			now := time.Now().UnixNano()
			for i, r := range p.reqs {
				if r.until != 0 && r.until <= now {
					p.reqs[i] = pauseReq{}
				}
			}
			s.recomputePause()
			p.mu.Unlock()
			s.wakePostponed()
		})
	}
}

// enterDispatch / leaveDispatch bracket an OnTraffic call's parsing and
// dispatching (see the file comment).
func (s *Server) enterDispatch(cl *client) *atomic.Int32 {
	n := &s.pause.stripes[cl.id&(pauseStripes-1)].n
	n.Add(1)
	return n
}

// WritesPaused reports whether client writes are paused now (CLIENT PAUSE,
// a manual failover).
func (s *Server) WritesPaused() bool { return s.pause.writeEnd.Load() > time.Now().UnixNano() }

// PauseWrites pauses client writes until until (a manual failover's
// primary side) and calls done, on another goroutine, once every write
// dispatched before the pause has finished in its shard: the replication
// offset is then final. done is not called if the pause is lifted or
// expires first.
func (s *Server) PauseWrites(until time.Time, done func()) {
	s.pauseWritesFor(PauseByFailover, until, done)
}

// pauseWritesFor is PauseWrites for a purpose.
func (s *Server) pauseWritesFor(purpose int, until time.Time, done func()) {
	s.Pause(purpose, until, false)
	go func() {
		p := &s.pause
		for i := range p.stripes {
			for p.stripes[i].n.Load() != 0 {
				if time.Now().After(until) {
					return
				}
				runtime.Gosched()
			}
		}
		s.shards.Barrier(func() {
			if p.writeEnd.Load() != 0 {
				done()
			}
		})
	}()
}

// clientPause is CLIENT PAUSE timeout [WRITE|ALL].
func clientPause(x *Ctx) {
	ms, errMsg := parseTimeoutMS(x.Args[2])
	if errMsg != "" {
		x.W.Error(errMsg)
		return
	}
	all := true
	if len(x.Args) == 4 {
		switch strings.ToLower(string(x.Args[3])) {
		case "write":
			all = false
		case "all":
		default:
			x.W.Error("ERR CLIENT PAUSE mode must be WRITE or ALL")
			return
		}
	}
	// A new CLIENT PAUSE never shortens or weakens the one in effect.
	p := &x.S.pause
	p.mu.Lock()
	cur := p.reqs[PauseByCommand]
	p.mu.Unlock()
	until := time.Now().Add(time.Duration(ms) * time.Millisecond)
	if cur.until > until.UnixNano() {
		until = time.Unix(0, cur.until)
	}
	x.S.Pause(PauseByCommand, until, all || cur.all && cur.until > time.Now().UnixNano())
	x.W.OK()
}

// clientUnpause is CLIENT UNPAUSE.
func clientUnpause(x *Ctx) {
	x.S.Unpause(PauseByCommand)
	x.W.OK()
}

// parseTimeoutMS parses a millisecond timeout argument the way Redis's
// getTimeoutFromObjectOrReply does.
func parseTimeoutMS(b []byte) (int64, string) {
	v, ok := resp.ParseInt(b)
	if !ok {
		return 0, "ERR timeout is not an integer or out of range"
	}
	if v < 0 {
		return 0, "ERR timeout is negative"
	}
	return min(v, int64(time.Duration(1<<62)/time.Millisecond)), ""
}

func registerCmdClientpause() {
	adm := []string{"admin", "noscript", "loading", "stale"}
	cats := []string{"admin", "slow", "dangerous", "connection"}
	command.AddSubcommand("client", "pause", Loop(&command.Spec{Arity: -3, Flags: adm, Categories: cats,
		Group: "connection", Since: "2.9.50", Summary: "Stop processing commands from clients for some time"}, clientPause))
	command.AddSubcommand("client", "unpause", Loop(&command.Spec{Arity: 2, Flags: adm, Categories: cats,
		Group: "connection", Since: "6.2.0", Summary: "Resume processing of clients that were paused"}, clientUnpause))
}
