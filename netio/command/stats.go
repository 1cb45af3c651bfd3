package command

import (
	"sort"
	"sync"
	"sync/atomic"
)

// Stats are one node's INFO commandstats and errorstats: for each command
// (by Spec.ID) its calls, the microseconds they took, the calls refused
// before running (rejected: a redirect, wrong arity, LOADING ...) and those
// that ran and replied with an error (failed); for each error code (the
// first word of an error reply, MOVED, ERR, WRONGTYPE ...) how many error
// replies carried it. Counters are atomics: the event loops and the shard
// actors count concurrently.
type Stats struct {
	cmds  []CmdCounters
	total atomic.Int64 // every error reply

	mu   sync.RWMutex
	errs map[string]*atomic.Int64

	tracking atomic.Bool  // latency-tracking
	lat      []*Latencies // every writer's histograms (latency.go)
	loopLat  *Latencies   // the event loops' (and fan-outs')
}

// CmdCounters are one command's counters.
type CmdCounters struct {
	Calls, USec, Rejected, Failed atomic.Int64
}

// maxErrorCodes bounds the error codes tracked, as Redis does (an error
// code is client-controlled through scripts): later codes count only in
// the total.
const maxErrorCodes = 128

// NewStats returns empty statistics for every registered command.
func NewStats() *Stats {
	mu.Lock()
	n := len(all)
	mu.Unlock()
	t := &Stats{cmds: make([]CmdCounters, n), errs: map[string]*atomic.Int64{}}
	t.tracking.Store(true)
	t.loopLat = t.NewLatencies()
	return t
}

// Of returns spec's counters (nil for a spec registered after NewStats).
func (t *Stats) Of(spec *Spec) *CmdCounters {
	if t == nil || spec == nil || spec.ID >= len(t.cmds) {
		return nil
	}
	return &t.cmds[spec.ID]
}

// Rejected counts an error reply ("-CODE message" or "CODE message")
// given instead of running spec (nil for an unknown command).
func Rejected[T string | []byte](t *Stats, spec *Spec, reply T) {
	if c := t.Of(spec); c != nil {
		c.Rejected.Add(1)
	}
	CountError(t, reply)
}

// Called counts one run of spec that took usec microseconds and replied
// reply: an error reply makes it a failed call.
func (t *Stats) Called(spec *Spec, usec int64, reply []byte) {
	c := t.Of(spec)
	if c == nil {
		return
	}
	t.Add(spec, 1, usec)
	if len(reply) > 0 && reply[0] == '-' {
		c.Failed.Add(1)
		CountError(t, reply)
	}
}

// Add counts calls successful runs of spec that took usec microseconds in
// all (a shard adds a batch's runs at once).
func (t *Stats) Add(spec *Spec, calls, usec int64) {
	if c := t.Of(spec); c != nil {
		c.Calls.Add(calls)
		c.USec.Add(usec)
	}
}

// CountError counts an error reply ("-CODE message\r\n" or "CODE message").
func CountError[T string | []byte](t *Stats, reply T) {
	if t == nil {
		return
	}
	t.total.Add(1)
	code := errorCode(reply)
	if code == "" {
		return
	}
	t.mu.RLock()
	n := t.errs[code]
	t.mu.RUnlock()
	if n == nil {
		t.mu.Lock()
		if n = t.errs[code]; n == nil && len(t.errs) < maxErrorCodes {
			n = new(atomic.Int64)
			t.errs[code] = n
		}
		t.mu.Unlock()
		if n == nil {
			return
		}
	}
	n.Add(1)
}

// errorCode is the first word of an error reply.
func errorCode[T string | []byte](reply T) string {
	if len(reply) > 0 && reply[0] == '-' {
		reply = reply[1:]
	}
	for i := 0; i < len(reply); i++ {
		if c := reply[i]; c == ' ' || c == '\r' || c == '\n' {
			return string(reply[:i])
		}
	}
	return string(reply)
}

// TotalErrors is INFO's total_error_replies.
func (t *Stats) TotalErrors() int64 { return t.total.Load() }

// Reset zeroes everything (CONFIG RESETSTAT).
func (t *Stats) Reset() {
	for i := range t.cmds {
		c := &t.cmds[i]
		c.Calls.Store(0)
		c.USec.Store(0)
		c.Rejected.Store(0)
		c.Failed.Store(0)
	}
	t.total.Store(0)
	t.mu.Lock()
	t.errs = map[string]*atomic.Int64{}
	t.mu.Unlock()
	t.resetLatency()
}

// CommandStat is one INFO commandstats line.
type CommandStat struct {
	Name                          string
	Calls, USec, Rejected, Failed int64
}

// Commands lists the commands that were called or refused, by name.
func (t *Stats) Commands() []CommandStat {
	mu.Lock()
	specs := append([]*Spec(nil), all...)
	mu.Unlock()
	var out []CommandStat
	for _, s := range specs {
		c := t.Of(s)
		if c == nil {
			continue
		}
		cs := CommandStat{Name: s.Name, Calls: c.Calls.Load(), USec: c.USec.Load(), Rejected: c.Rejected.Load(),
			Failed: c.Failed.Load()}
		if cs.Calls != 0 || cs.Rejected != 0 || cs.Failed != 0 {
			out = append(out, cs)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ErrorStat is one INFO errorstats line.
type ErrorStat struct {
	Code  string
	Count int64
}

// Errors lists the error codes seen and their counts, by code.
func (t *Stats) Errors() []ErrorStat {
	t.mu.RLock()
	out := make([]ErrorStat, 0, len(t.errs))
	for code, n := range t.errs {
		out = append(out, ErrorStat{code, n.Load()})
	}
	t.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return out
}
