package netio

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/resp"
)

// LATENCY LATEST / HISTORY / RESET / GRAPH / DOCTOR / HISTOGRAM / HELP, as
// Redis 7.0. The events come from what slotd times: commands (command,
// fast-command) on the loops and in the shard actors, the shards' active
// expiry (expire-cycle) and eviction (eviction-cycle), AOF writes (aof-write),
// fsyncs under appendfsync always (aof-fsync-always), the AOF's fstat when it
// opens a file (aof-fstat) and the removal of a failed save's temp file
// (rdb-unlink-temp-file); HISTOGRAM reads the per-command histograms that
// INFO latencystats summarises.

func registerCmdLatency() {
	tips := []string{"nondeterministic_output", "request_policy:all_nodes", "response_policy:special"}
	adm := []string{"admin", "noscript", "loading", "stale"}
	sub := func(arity int, summary string, h func(*Ctx), flags []string, tips ...string) *command.Spec {
		return Loop(&command.Spec{Arity: arity, Flags: flags, Group: "server", Since: "2.8.13", Summary: summary,
			Tips: tips}, h)
	}
	hist := sub(-2, "Return the cumulative distribution of latencies of a subset of commands or all commands",
		latencyHistogram, adm, tips...)
	hist.Since = "7.0.0"
	command.Register(&command.Spec{Name: "latency", Arity: -2, Group: "server", Since: "2.8.13",
		Summary: "A container for latency diagnostics commands",
		Subcommands: map[string]*command.Spec{
			"latest":    sub(2, "Return the latest latency samples for all events", latencyLatest, adm, tips...),
			"history":   sub(3, "Return timestamp-latency samples for an event", latencyHistory, adm, tips...),
			"reset":     sub(-2, "Reset latency data for one or more events", latencyReset, adm, "request_policy:all_nodes", "response_policy:all_succeeded"),
			"graph":     sub(3, "Return a latency graph for an event", latencyGraph, adm, tips...),
			"doctor":    sub(2, "Return a human readable latency analysis report", latencyDoctor, adm, tips...),
			"histogram": hist,
			"help":      sub(2, "Show helpful text about the different subcommands", latencyHelp, []string{"loading", "stale"}),
		}})
}

// LatencyMonitor is the node's LATENCY store (the shards, the AOF and the
// RDB writer record their events in it too).
func (s *Server) LatencyMonitor() *command.LatencyMonitor { return s.latency }

// loopLatency records a loop command's run of ns: its histogram and, past
// latency-monitor-threshold, a command or fast-command event.
func (s *Server) loopLatency(spec *command.Spec, ns int64) {
	s.cmdStats.Latency(spec, ns)
	if ms := ns / 1e6; s.latency.Wants(ms) {
		event := "command"
		if spec.Is("fast") {
			event = "fast-command"
		}
		s.latency.Add(command.LatencySample{Event: event, Ms: ms, At: time.Now().Unix()})
	}
}

func latencyLatest(x *Ctx) {
	ev := x.S.latency.Latest()
	x.W.Array(len(ev))
	for _, e := range ev {
		x.W.Array(4)
		x.W.BulkString(e.Name)
		x.W.Int(e.At)
		x.W.Int(e.Latest)
		x.W.Int(e.Worst)
	}
}

func latencyHistory(x *Ctx) {
	points, _, _ := x.S.latency.History(string(x.Args[2]))
	x.W.Array(len(points))
	for _, p := range points {
		x.W.Array(2)
		x.W.Int(p[0])
		x.W.Int(p[1])
	}
}

func latencyReset(x *Ctx) {
	events := make([]string, 0, len(x.Args)-2)
	for _, a := range x.Args[2:] {
		events = append(events, string(a))
	}
	if len(events) == 0 {
		x.W.Int(int64(x.S.latency.Reset()))
		return
	}
	n := 0
	for _, e := range events {
		n += x.S.latency.Reset(e)
	}
	x.W.Int(int64(n))
}

func latencyGraph(x *Ctx) {
	g, ok := x.S.latency.Graph(string(x.Args[2]), time.Now().Unix())
	if !ok {
		x.W.Error("ERR No samples available for event '" + string(x.Args[2]) + "'")
		return
	}
	x.W.Verbatim(g)
}

// latencyDoctor writes slotd's own report: each event's spikes with their
// mean, mean deviation, period and worst, then what to look at for the
// kinds of events seen.
func latencyDoctor(x *Ctx) {
	m := x.S.latency
	var b strings.Builder
	ev := m.Latest()
	switch {
	case len(ev) == 0 && m.Threshold.Load() == 0:
		b.WriteString("Latency monitoring is disabled in this slotd node. Enable it with " +
			"\"CONFIG SET latency-monitor-threshold <milliseconds>\" to record the events that take at least " +
			"that long.\n")
	case len(ev) == 0:
		b.WriteString("No latency spike was recorded since latency monitoring was enabled (threshold " +
			strconv.FormatInt(m.Threshold.Load(), 10) + " ms).\n")
	default:
		b.WriteString("Latency spikes recorded by this slotd node (threshold " +
			strconv.FormatInt(m.Threshold.Load(), 10) + " ms):\n\n")
		now := time.Now().Unix()
		hints := map[string]bool{}
		for i, e := range ev {
			st := m.Analyze(e.Name, now)
			period := float64(st.Period) / float64(max(st.Samples, 1))
			b.WriteString(strconv.Itoa(i+1) + ". " + e.Name + ": " + strconv.Itoa(st.Samples) +
				" latency spikes (average " + strconv.FormatInt(st.Avg, 10) + "ms, mean deviation " +
				strconv.FormatInt(st.MAD, 10) + "ms, period " + strconv.FormatFloat(period, 'f', 2, 64) +
				" sec). Worst all time event " + strconv.FormatInt(st.AllTimeWorst, 10) + "ms.\n")
			hints[doctorHint(e.Name)] = true
		}
		b.WriteString("\nWhat to look at:\n\n")
		for _, h := range doctorHints {
			if hints[h] {
				b.WriteString("- " + h + "\n")
			}
		}
	}
	x.W.Verbatim(b.String())
}

var doctorHints = []string{
	"Slow commands: SLOWLOG GET lists them (slowlog-log-slower-than sets what it keeps); deleting large " +
		"values is one of them.",
	"The machine did not give slotd CPU time for a command that should be fast: lower the load on the host.",
	"Disk latency under the append-only file: a local, less contended disk helps; appendfsync everysec " +
		"instead of always trades at most a second of writes for it.",
	"Active expiry or eviction of large values: large keys take long to free, split them into smaller ones.",
	"Persistence file operations were slow: check the disk under dir.",
}

func doctorHint(event string) string {
	switch {
	case event == "command":
		return doctorHints[0]
	case event == "fast-command":
		return doctorHints[1]
	case strings.HasPrefix(event, "aof-"):
		return doctorHints[2]
	case strings.HasPrefix(event, "expire-") || strings.HasPrefix(event, "eviction-"):
		return doctorHints[3]
	}
	return doctorHints[4]
}

// latencyHistogram answers a map of command full name to {calls,
// histogram_usec}: every command with samples, or those named (a
// container names its subcommands); unknown names are skipped.
func latencyHistogram(x *Ctx) {
	var specs []*command.Spec
	if len(x.Args) == 2 {
		for _, c := range command.All() {
			specs = append(specs, c)
			specs = append(specs, sortedSubs(c)...)
		}
	} else {
		for _, a := range x.Args[2:] {
			c := command.LookupFullName(string(a))
			if c == nil {
				continue
			}
			specs = append(specs, c)
			if c.Parent == nil {
				specs = append(specs, sortedSubs(c)...)
			}
		}
	}
	type row struct {
		name string
		h    *command.LatencyHistogram
	}
	var rows []row
	for _, c := range specs {
		if h := x.S.cmdStats.HistogramOf(c); h != nil {
			rows = append(rows, row{c.Name, h})
		}
	}
	x.W.Map(len(rows))
	for _, r := range rows {
		x.W.BulkString(r.name)
		writeHistogram(x.W, r.h)
	}
}

func writeHistogram(w *resp.Writer, h *command.LatencyHistogram) {
	w.Map(2)
	w.BulkString("calls")
	w.Int(h.Calls)
	w.BulkString("histogram_usec")
	b := h.Buckets()
	w.Map(len(b))
	for _, k := range b {
		w.Int(k.Micros)
		w.Int(k.Count)
	}
}

// lookupFullName finds "name" or "parent|sub", case-insensitively.
func sortedSubs(c *command.Spec) []*command.Spec {
	if len(c.Subcommands) == 0 {
		return nil
	}
	names := make([]string, 0, len(c.Subcommands))
	for n := range c.Subcommands {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]*command.Spec, len(names))
	for i, n := range names {
		out[i] = c.Subcommands[n]
	}
	return out
}

func latencyHelp(x *Ctx) {
	WriteHelp(x.W, "LATENCY", []string{
		"DOCTOR",
		"    Return a human readable latency analysis report.",
		"GRAPH <event>",
		"    Return an ASCII latency graph for the <event> class.",
		"HISTORY <event>",
		"    Return time-latency samples for the <event> class.",
		"LATEST",
		"    Return the latest latency samples for all events.",
		"RESET [<event> ...]",
		"    Reset latency data of one or more <event> classes.",
		"    (default: reset all data for all event classes)",
		"HISTOGRAM [COMMAND ...]",
		"    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
		"    If no commands are specified then all histograms are replied.",
	})
}
