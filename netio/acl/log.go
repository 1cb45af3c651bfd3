package acl

import "sync"

// Context is where a refused command ran (ACL LOG "context").
type Context uint8

const (
	CtxToplevel Context = iota
	CtxMulti
	CtxLua
)

func (c Context) String() string {
	switch c {
	case CtxMulti:
		return "multi"
	case CtxLua:
		return "lua"
	}
	return "toplevel"
}

// Entry is one ACL LOG entry.
type Entry struct {
	Count      int64
	Reason     Denied
	Context    Context
	Object     string
	Username   string
	CreatedMs  int64 // when it was last updated
	ClientInfo string
}

// groupMs: a refusal like a recent entry (same reason, context, object
// and user) within this long bumps that entry's count instead.
const groupMs = 60000

// Log is the ACL log, newest first. Callers pass the time.
type Log struct {
	mu      sync.Mutex
	entries []Entry
}

// Add records e at nowMs, keeping at most max entries: an entry matching
// one of the 10 newest moves it to the front with its count bumped.
func (l *Log) Add(e Entry, nowMs int64, max int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e.CreatedMs, e.Count = nowMs, 1
	for i := 0; i < len(l.entries) && i < 10; i++ {
		c := l.entries[i]
		d := c.CreatedMs - nowMs
		if d < 0 {
			d = -d
		}
		if c.Reason == e.Reason && c.Context == e.Context && d <= groupMs && c.Object == e.Object && c.Username == e.Username {
			c.Count++
			c.CreatedMs, c.ClientInfo = nowMs, e.ClientInfo
			copy(l.entries[1:i+1], l.entries[:i])
			l.entries[0] = c
			return
		}
	}
	l.entries = append(l.entries, Entry{})
	copy(l.entries[1:], l.entries)
	l.entries[0] = e
	l.trim(max)
}

func (l *Log) trim(max int) {
	if max >= 0 && len(l.entries) > max {
		l.entries = l.entries[:max]
	}
}

// Trim drops the oldest entries beyond max (acllog-max-len lowered).
func (l *Log) Trim(max int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.trim(max)
}

// Newest returns up to n entries, newest first.
func (l *Log) Newest(n int) []Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	n = min(max(n, 0), len(l.entries))
	return append([]Entry(nil), l.entries[:n]...)
}

// Reset empties the log.
func (l *Log) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = nil
}
