package netio

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/resp"
)

// MONITOR, as Redis 7.0: once a client sent it, every command any client
// runs (but admin and skip_monitor ones, and those refused before running)
// reaches it as a line `+<unix s>.<µs> [<db> <ip:port>] "arg" ...`, secrets
// redacted as in SLOWLOG; commands a script calls show as `[<db> lua]`.
// Commands are shown as their connection's event loop executes them (a
// keyed one as it is handed to its shard actor), so lines of different
// clients are in the order the loops saw them.

// monitors is the set of MONITOR clients.
type monitors struct {
	n    atomic.Int32
	mu   sync.RWMutex
	list []*client
}

func registerCmdMonitor() {
	command.Register(Loop(&command.Spec{Name: "monitor", Arity: 1,
		Flags: []string{"admin", "noscript", "loading", "stale"}, Group: "server", Since: "1.0.0",
		Summary: "Listen for all requests received by the server in real time"}, cmdMonitor))
}

func cmdMonitor(x *Ctx) {
	if x.InTx || x.C.multi {
		x.W.Error("ERR MONITOR isn't allowed for DENY BLOCKING client")
		return
	}
	m := &x.S.mon
	m.mu.Lock()
	for _, c := range m.list {
		if c == x.C {
			m.mu.Unlock()
			return // already monitoring: no reply, as Redis
		}
	}
	m.list = append(m.list, x.C)
	m.n.Store(int32(len(m.list)))
	m.mu.Unlock()
	x.W.OK()
}

// dropMonitor forgets a closed client.
func (s *Server) dropMonitor(cl *client) {
	m := &s.mon
	if m.n.Load() == 0 {
		return
	}
	m.mu.Lock()
	for i, c := range m.list {
		if c == cl {
			m.list = append(m.list[:i:i], m.list[i+1:]...)
			break
		}
	}
	m.n.Store(int32(len(m.list)))
	m.mu.Unlock()
}

// feedMonitors shows cl's command to the MONITOR clients.
func (s *Server) feedMonitors(cl *client, spec *command.Spec, args [][]byte) {
	if spec.Admin() || spec.Is("skip_monitor") && !scriptRunner[spec.Name] {
		return
	}
	s.feed(int(cl.db.Load()), cl.addr, args)
}

// scriptRunner: skip_monitor commands that Redis still shows, before the
// commands their script calls.
var scriptRunner = map[string]bool{"eval": true, "evalsha": true, "eval_ro": true, "evalsha_ro": true,
	"fcall": true, "fcall_ro": true}

// FeedScriptMonitors shows a command a script called (engine.Group.Monitor).
func (s *Server) FeedScriptMonitors(db int, args [][]byte) {
	if s.mon.n.Load() > 0 {
		s.feed(db, "lua", args)
	}
}

func (s *Server) feed(db int, who string, args [][]byte) {
	now := time.Now()
	line := make([]byte, 0, 64)
	line = strconv.AppendInt(line, now.Unix(), 10)
	line = append(line, '.')
	us := strconv.Itoa(now.Nanosecond() / 1000)
	for i := len(us); i < 6; i++ {
		line = append(line, '0')
	}
	line = append(line, us...)
	line = append(line, " ["...)
	line = strconv.AppendInt(line, int64(db), 10)
	line = append(line, ' ')
	line = append(line, who...)
	line = append(line, "] "...)
	for j, a := range command.Redacted(args) {
		if j > 0 {
			line = append(line, ' ')
		}
		line = appendRepr(line, a)
	}
	text := string(line)
	s.mon.mu.RLock()
	for _, m := range s.mon.list {
		m.queuePush(func(w *resp.Writer) { w.Simple(text) })
	}
	s.mon.mu.RUnlock()
}

// appendRepr quotes a as Redis's sdscatrepr does.
func appendRepr(b, a []byte) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for _, c := range a {
		switch c {
		case '\\', '"':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\a':
			b = append(b, '\\', 'a')
		case '\b':
			b = append(b, '\\', 'b')
		default:
			if c >= 0x20 && c < 0x7f {
				b = append(b, c)
			} else {
				b = append(b, '\\', 'x', hex[c>>4], hex[c&15])
			}
		}
	}
	return append(b, '"')
}
