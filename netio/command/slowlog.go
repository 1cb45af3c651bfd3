package command

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// SlowLog is SLOWLOG's log, shared by the event loops (loop commands) and
// the shard actors (keyed commands): the commands whose execution took at
// least SlowerThan µs (slowlog-log-slower-than; negative: none), the newest
// MaxLen of them (slowlog-max-len). Arguments are kept as Redis keeps them:
// at most 32, the last saying how many more there were, each at most 128
// bytes with how many more bytes it had.
type SlowLog struct {
	SlowerThan atomic.Int64
	MaxLen     atomic.Int64

	mu      sync.Mutex
	next    int64
	entries []SlowEntry // oldest first
}

// SlowEntry is one SLOWLOG GET entry.
type SlowEntry struct {
	ID, Time, Duration int64 // Time: unix seconds; Duration: µs
	Args               []string
	Addr, Name         string
}

const (
	slowMaxArgs  = 32
	slowMaxBytes = 128
)

// NewSlowLog is an empty log with Redis's defaults (10000 µs, 128 entries).
func NewSlowLog() *SlowLog {
	l := &SlowLog{}
	l.SlowerThan.Store(10000)
	l.MaxLen.Store(128)
	return l
}

// Wants reports whether a command that took us µs is logged (l may be nil).
func (l *SlowLog) Wants(us int64) bool {
	if l == nil {
		return false
	}
	t := l.SlowerThan.Load()
	return t >= 0 && us >= t
}

// Add logs a command that took us µs, run at unix second at by the client
// at addr named name, if Wants says so.
func (l *SlowLog) Add(args [][]byte, us, at int64, addr, name string) {
	if !l.Wants(us) {
		return
	}
	args = Redacted(args)
	n := min(len(args), slowMaxArgs)
	e := SlowEntry{Time: at, Duration: us, Args: make([]string, n), Addr: addr, Name: name}
	for j := 0; j < n; j++ {
		a := args[j]
		switch {
		case n != len(args) && j == n-1:
			e.Args[j] = "... (" + strconv.Itoa(len(args)-n+1) + " more arguments)"
		case len(a) > slowMaxBytes:
			e.Args[j] = string(a[:slowMaxBytes]) + "... (" + strconv.Itoa(len(a)-slowMaxBytes) + " more bytes)"
		default:
			e.Args[j] = string(a)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e.ID = l.next
	l.next++
	l.entries = append(l.entries, e)
	if over := len(l.entries) - int(max(l.MaxLen.Load(), 0)); over > 0 {
		l.entries = append(l.entries[:0], l.entries[over:]...)
	}
}

// Get returns the newest n entries (all when n is larger), newest first.
func (l *SlowLog) Get(n int64) []SlowEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := int(min(n, int64(len(l.entries))))
	out := make([]SlowEntry, k)
	for i := 0; i < k; i++ {
		out[i] = l.entries[len(l.entries)-1-i]
	}
	return out
}

// Len is the number of entries.
func (l *SlowLog) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entries)
}

// Reset empties the log (ids go on from where they were).
func (l *SlowLog) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = nil
}

var redactedArg = []byte("(redacted)")

// sensitiveConfigs are the directives whose values CONFIG SET hides from
// the slow log, as Redis's SENSITIVE_CONFIG ones.
var sensitiveConfigs = map[string]bool{"masterauth": true, "requirepass": true}

// Redacted replaces the secrets Redis keeps out of the slow log and MONITOR:
// AUTH's arguments, ACL SETUSER's, HELLO's AUTH credentials, MIGRATE's AUTH/AUTH2 ones,
// CONFIG SET's sensitive values.
func Redacted(args [][]byte) [][]byte {
	if len(args) < 2 {
		return args
	}
	name := strings.ToLower(string(args[0]))
	var hide []int
	switch name {
	case "auth":
		for j := 1; j < len(args); j++ {
			hide = append(hide, j)
		}
	case "acl":
		// ACL SETUSER: the user name and every rule (passwords).
		if strings.EqualFold(string(args[1]), "setuser") {
			for j := 2; j < len(args); j++ {
				hide = append(hide, j)
			}
		}
	case "hello":
		for j := 2; j < len(args); j++ {
			if strings.EqualFold(string(args[j]), "auth") && j+2 < len(args) {
				hide = append(hide, j+1, j+2)
				j += 2
			}
		}
	case "migrate":
		for j := 6; j < len(args); j++ {
			a := string(args[j])
			switch {
			case strings.EqualFold(a, "auth") && j+1 < len(args):
				hide = append(hide, j+1)
				j++
			case strings.EqualFold(a, "auth2") && j+2 < len(args):
				hide = append(hide, j+1, j+2)
				j += 2
			case strings.EqualFold(a, "keys"):
				j = len(args)
			}
		}
	case "config":
		if strings.EqualFold(string(args[1]), "set") {
			for j := 2; j+1 < len(args); j += 2 {
				if sensitiveConfigs[strings.ToLower(string(args[j]))] {
					hide = append(hide, j+1)
				}
			}
		}
	}
	if len(hide) == 0 {
		return args
	}
	out := append([][]byte(nil), args...)
	for _, j := range hide {
		out[j] = redactedArg
	}
	return out
}
