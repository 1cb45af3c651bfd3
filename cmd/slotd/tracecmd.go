package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/slotd/slotd/actors/trace"
	"github.com/slotd/slotd/netio/resp"
)

// slotd trace --cluster host:port [--since 30s] [--format text|chrome]
// [--out file] collects the actor trace ring of every node of a cluster
// (DEBUG TRACE, with trace-actors on) and prints one timeline, ordered by
// the records' clocks (hybrid logical clocks): a frame's handling on one
// node comes after its sending on another, and each node's own records
// keep their order.
// --format chrome writes Chrome trace-event JSON (Perfetto,
// chrome://tracing): one process per node, one thread per actor.

// traceRec is one DEBUG TRACE record of one node.
type traceRec struct {
	Node     int // index in traceNodes
	Seq      uint64
	At       time.Time
	Clock    uint64
	Kind, ID string
	Sender   string
	Handling time.Duration
	Trace    string
	Msg      string
}

// traceNode is one node the records came from.
type traceNode struct {
	Addr, ID, Role string
}

func runTrace(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("slotd trace", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seed := fs.String("cluster", "", "host:port of any node of the cluster")
	since := fs.Duration("since", 0, "only records of the last duration (0: the whole rings)")
	format := fs.String("format", "text", "text or chrome (Chrome trace-event JSON)")
	outPath := fs.String("out", "", "write to this file instead of stdout")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *seed == "" || (*format != "text" && *format != "chrome") {
		fmt.Fprintln(stderr, "usage: slotd trace --cluster host:port [--since 30s] [--format text|chrome] [--out file]")
		return 2
	}
	nodes, err := clusterNodes(*seed)
	if err != nil {
		fmt.Fprintln(stderr, "slotd trace:", err)
		return 1
	}
	var recs []traceRec
	for i, n := range nodes {
		lines, err := debugTraceLines(n.Addr)
		if err != nil {
			fmt.Fprintf(stderr, "slotd trace: %s: %v (skipped)\n", n.Addr, err)
			continue
		}
		for _, l := range lines {
			if r, ok := parseTraceLine(l); ok {
				r.Node = i
				recs = append(recs, r)
			}
		}
	}
	if *since > 0 {
		from := time.Now().Add(-*since)
		kept := recs[:0]
		for _, r := range recs {
			if !r.At.Before(from) {
				kept = append(kept, r)
			}
		}
		recs = kept
	}
	sortCausal(recs)
	w := stdout
	if *outPath != "" {
		f, err := os.Create(*outPath)
		if err != nil {
			fmt.Fprintln(stderr, "slotd trace:", err)
			return 1
		}
		defer f.Close()
		w = f
	}
	if *format == "chrome" {
		err = writeChrome(w, nodes, recs)
	} else {
		err = writeTimeline(w, nodes, recs)
	}
	if err != nil {
		fmt.Fprintln(stderr, "slotd trace:", err)
		return 1
	}
	return 0
}

// clusterNodes lists the nodes of the seed's CLUSTER NODES (the seed alone
// when it is not in cluster mode).
func clusterNodes(seed string) ([]traceNode, error) {
	c := &resp.Client{Addr: seed, Timeout: 3 * time.Second}
	defer c.Close()
	text, err := c.Text("cluster", "nodes")
	if err != nil {
		if _, err := c.Text("ping"); err != nil {
			return nil, err
		}
		return []traceNode{{Addr: seed, Role: "standalone"}}, nil
	}
	var out []traceNode
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		addr := f[1]
		if i := strings.IndexAny(addr, "@,"); i >= 0 {
			addr = addr[:i]
		}
		role := "primary"
		if strings.Contains(f[2], "slave") {
			role = "replica"
		}
		if strings.HasPrefix(addr, ":") || strings.Contains(f[2], "noaddr") {
			continue
		}
		out = append(out, traceNode{Addr: addr, ID: f[0], Role: role})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Addr < out[j].Addr })
	return out, nil
}

// debugTraceLines reads a node's whole trace ring.
func debugTraceLines(addr string) ([]string, error) {
	c := &resp.Client{Addr: addr, Timeout: 2 * time.Second}
	defer c.Close()
	rep, err := c.Do("debug", "trace", "0")
	if err != nil {
		return nil, err
	}
	if err := rep.Err(); err != nil {
		return nil, err
	}
	v := make([]string, 0, len(rep.Elems))
	for _, e := range rep.Elems {
		v = append(v, e.Str)
	}
	return v, nil
}

// parseTraceLine reads one DEBUG TRACE line (trace.Record.String).
func parseTraceLine(line string) (traceRec, bool) {
	head, msg, ok := strings.Cut(line, " msg=")
	if !ok {
		return traceRec{}, false
	}
	r := traceRec{Msg: msg}
	for _, kv := range strings.Fields(head) {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "seq":
			r.Seq, _ = strconv.ParseUint(v, 10, 64)
		case "time":
			t, err := time.Parse(trace.TimeFormat, v)
			if err != nil {
				return traceRec{}, false
			}
			r.At = t
		case "clock":
			r.Clock, _ = strconv.ParseUint(v, 10, 64)
		case "kind":
			r.Kind = v
		case "id":
			r.ID = v
		case "sender":
			r.Sender = v
		case "handling":
			r.Handling, _ = time.ParseDuration(v)
		case "trace":
			r.Trace = v
		}
	}
	return r, !r.At.IsZero()
}

// sortCausal orders records by clock, then time, node and
// sequence: a causal order (a receive's clock exceeds its send's).
func sortCausal(recs []traceRec) {
	sort.SliceStable(recs, func(i, j int) bool {
		a, b := recs[i], recs[j]
		switch {
		case a.Clock != b.Clock:
			return a.Clock < b.Clock
		case !a.At.Equal(b.At):
			return a.At.Before(b.At)
		case a.Node != b.Node:
			return a.Node < b.Node
		}
		return a.Seq < b.Seq
	})
}

func nodeLabel(n traceNode) string {
	id := n.ID
	if len(id) > 8 {
		id = id[:8]
	}
	if id == "" {
		return n.Addr
	}
	return n.Addr + " " + id
}

func writeTimeline(w io.Writer, nodes []traceNode, recs []traceRec) error {
	for _, r := range recs {
		tr := ""
		if r.Trace != "" && r.Trace != "0" {
			tr = " trace=" + r.Trace
		}
		if _, err := fmt.Fprintf(w, "%s %-24s %-10s %s%s\n", r.At.Format("15:04:05.000000"),
			nodeLabel(nodes[r.Node]), r.ID, r.Msg, tr); err != nil {
			return err
		}
	}
	return nil
}

// chromeEvent is one Chrome trace-event (the JSON Object Format).
type chromeEvent struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	Ts   float64        `json:"ts"`
	Dur  float64        `json:"dur,omitempty"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	Args map[string]any `json:"args,omitempty"`
}

// writeChrome writes the records as complete events ("X"), one process
// per node and one thread per actor, named by metadata events.
func writeChrome(w io.Writer, nodes []traceNode, recs []traceRec) error {
	events := []chromeEvent{}
	for i, n := range nodes {
		events = append(events, chromeEvent{Name: "process_name", Ph: "M", Pid: i + 1,
			Args: map[string]any{"name": nodeLabel(n) + " (" + n.Role + ")"}})
	}
	type actorKey struct {
		node int
		id   string
	}
	tids := map[actorKey]int{}
	var t0 time.Time
	if len(recs) > 0 {
		t0 = recs[0].At
		for _, r := range recs {
			if r.At.Before(t0) {
				t0 = r.At
			}
		}
	}
	for _, r := range recs {
		k := actorKey{r.Node, r.ID}
		tid, ok := tids[k]
		if !ok {
			tid = len(tids) + 1
			tids[k] = tid
			events = append(events, chromeEvent{Name: "thread_name", Ph: "M", Pid: r.Node + 1, Tid: tid,
				Args: map[string]any{"name": r.Kind + "/" + r.ID}})
		}
		name := r.Msg
		if f := strings.Fields(r.Msg); len(f) >= 2 {
			name = f[0] + " " + f[1]
		}
		events = append(events, chromeEvent{Name: name, Cat: r.Kind, Ph: "X", Pid: r.Node + 1, Tid: tid,
			Ts:   float64(r.At.Sub(t0).Nanoseconds()) / 1e3,
			Dur:  max(float64(r.Handling.Nanoseconds())/1e3, 1),
			Args: map[string]any{"msg": r.Msg, "clock": r.Clock, "trace": r.Trace}})
	}
	enc := json.NewEncoder(w)
	return enc.Encode(map[string]any{"traceEvents": events, "displayTimeUnit": "ms"})
}
