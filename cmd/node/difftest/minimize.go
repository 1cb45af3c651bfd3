package difftest

import (
	"fmt"
	"strings"
	"time"
)

// Minimize shrinks seq while fails keeps reporting the failure, by delta
// debugging: it first removes halves, quarters, ... (complements of
// chunks), then single commands. fails replays a candidate from an empty
// database. It stops early (keeping the shortest sequence found so far)
// after budget replays or when the deadline passes.
func Minimize(seq []Cmd, fails func([]Cmd) bool, budget int, deadline time.Time) []Cmd {
	tries := 0
	try := func(cand []Cmd) bool {
		if tries >= budget || time.Now().After(deadline) {
			return false
		}
		tries++
		return fails(cand)
	}
	without := func(s []Cmd, from, to int) []Cmd {
		out := make([]Cmd, 0, len(s)-(to-from))
		return append(append(out, s[:from]...), s[to:]...)
	}
	n := 2
	for len(seq) >= 2 && n <= len(seq) {
		size := (len(seq) + n - 1) / n
		removed := false
		for from := 0; from < len(seq); from += size {
			cand := without(seq, from, min(from+size, len(seq)))
			if try(cand) {
				seq, removed = cand, true
				n = max(n-1, 2)
				break
			}
		}
		if !removed {
			if n == len(seq) {
				break
			}
			n = min(2*n, len(seq))
		}
	}
	for i := len(seq) - 1; i >= 0 && len(seq) > 1; i-- {
		if cand := without(seq, i, i+1); try(cand) {
			seq = cand
		}
	}
	return seq
}

// MinimizeMismatch shrinks seq to a shortest sequence that still fails with
// the same kind of mismatch as m, and returns it with its mismatch.
func (r *Runner) MinimizeMismatch(seq []Cmd, m *Mismatch, budget int, deadline time.Time) ([]Cmd, *Mismatch) {
	sig := m.signature(len(seq))
	last := m
	runs := 1
	fails := func(cand []Cmd) bool {
		for i := 0; i < runs; i++ {
			mm, err := r.Run(cand)
			if err == nil && mm != nil && mm.signature(len(cand)) == sig {
				last = mm
				return true
			}
		}
		return false
	}
	// Commands after a mismatching reply can still matter: they share its
	// pipeline. Start from the cut sequence if it fails, else from the
	// whole; a failure that shows only some of the time gets three tries
	// per candidate.
	start := [][]Cmd{seq}
	if m.Index < len(seq) {
		start = [][]Cmd{seq[:m.Index+1], seq}
	}
	found := false
	for _, runs = range []int{1, 3} {
		for _, cand := range start {
			if fails(cand) {
				seq, found = cand, true
				break
			}
		}
		if found {
			break
		}
	}
	if !found {
		return seq, nil // did not reproduce
	}
	min := Minimize(seq, fails, budget, deadline)
	if mm, err := r.Run(min); err == nil && mm != nil {
		last = mm
	}
	return min, last
}

// quoteArg quotes an argument the way redis-cli reads it back.
func quoteArg(s string) string {
	plain := s != ""
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || c == '"' || c == '\'' || c == '\\' {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < ' ' || c >= 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// quoteCmd renders c as one redis-cli input line.
func quoteCmd(c Cmd) string {
	parts := make([]string, len(c))
	for i, a := range c {
		parts[i] = quoteArg(a)
	}
	return strings.Join(parts, " ")
}

// Report renders a mismatch and the sequence that shows it, as redis-cli
// input: `redis-cli [-3] < file` on an empty server replays it.
func (r *Runner) Report(seed uint64, full int, m *Mismatch, minSeq []Cmd, minM *Mismatch) string {
	var b strings.Builder
	proto := r.Proto
	cli := "redis-cli"
	if proto == 3 {
		cli = "redis-cli -3"
	}
	fmt.Fprintf(&b, "seed %d (RESP%d), %d commands: ", seed, proto, full)
	if m.Index >= full {
		fmt.Fprintf(&b, "the final dataset differs at %s\n", m)
	} else {
		fmt.Fprintf(&b, "command %d differs: %s\n", m.Index+1, m)
	}
	if minM == nil {
		b.WriteString("The failure did not reproduce when replayed (it depends on timing): below is the whole sequence.\n")
	}
	fmt.Fprintf(&b, "Shortest failing sequence, %d commands. On an empty server: %s < file; the runner pipelines up "+
		"to %d commands per write, so if one at a time does not show it: (cat file; sleep 1) | nc host port\n",
		len(minSeq), cli, r.Chunk)
	b.WriteString(ReproBegin)
	b.WriteString("FLUSHALL\n")
	if r.Scripting {
		b.WriteString("SCRIPT FLUSH\n")
	}
	spop := false
	for _, c := range minSeq {
		b.WriteString(quoteCmd(c))
		b.WriteByte('\n')
		spop = spop || c.Name() == "SPOP"
	}
	b.WriteString(ReproEnd)
	if spop {
		b.WriteString("(after each SPOP the runner re-adds the popped members, on each server its own)\n")
	}
	if minM != nil {
		where := fmt.Sprintf("command %d", minM.Index+1)
		if minM.Index >= len(minSeq) {
			where = "the dataset read-back " + quoteCmd(minM.Cmd)
		}
		fmt.Fprintf(&b, "There %s: %s\n", where, minM.Reason)
		fmt.Fprintf(&b, "  slotd: %s\n  redis: %s\n", minM.A, minM.B)
	}
	return b.String()
}

// The lines between these markers of a Report are redis-cli input.
const (
	ReproBegin = "----- 8< -----\n"
	ReproEnd   = "----- >8 -----\n"
)
