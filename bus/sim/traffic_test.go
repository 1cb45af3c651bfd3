package sim

import (
	"math"
	"testing"

	busv1 "github.com/slotd/slotd/proto/slotd/bus/v1"
)

// TestTrafficAtRest measures the bus traffic of a healthy 10-node cluster
// with the default node timeout and checks it against the spec's
// arithmetic: each node pings about one node a second (the oldest PONG of 5
// random samples), plus any node it has not heard from for half the node
// timeout — so at most max(1, (N-1)/(timeout/2)) pings a second — and
// every PING is answered by one PONG.
func TestTrafficAtRest(t *testing.T) {
	t.Parallel()
	const nodes, timeout, window = 10, 15000, 300_000
	n := New(Config{Seed: 42, Nodes: nodes, NodeTimeout: timeout, CheckSave: true, CountBytes: true})
	if _, err := assignSlots(n, nodes, false); err != nil {
		t.Fatal(err)
	}
	if err := meshOf(n, 60000); err != nil {
		t.Fatal(err)
	}
	if !n.RunUntil(60000, func() bool { return n.SlotsAgree() == nil && n.UniqueEpochs(0) == nil }) {
		t.Fatalf("no agreement: %v", n.SlotsAgree())
	}
	n.Run(2 * timeout) // past any start-up burst

	before := make([]map[busv1.Type]int, nodes)
	bytesBefore := 0
	for i, nd := range n.Nodes {
		bytesBefore += nd.SentBytes
		before[i] = map[busv1.Type]int{}
		for k, v := range nd.Sent {
			before[i][k] = v
		}
	}
	n.Run(window)
	if n.Err() != nil {
		t.Fatal(n.Err())
	}
	secs := float64(window) / 1000
	var pings, pongs, other float64
	minPing, maxPing := math.Inf(1), 0.0
	for i, nd := range n.Nodes {
		p := float64(nd.Sent[busv1.Type_TYPE_PING]-before[i][busv1.Type_TYPE_PING]) / secs
		pings += p
		pongs += float64(nd.Sent[busv1.Type_TYPE_PONG]-before[i][busv1.Type_TYPE_PONG]) / secs
		for k, v := range nd.Sent {
			if k != busv1.Type_TYPE_PING && k != busv1.Type_TYPE_PONG {
				other += float64(v - before[i][k])
			}
		}
		minPing, maxPing = min(minPing, p), max(maxPing, p)
	}
	pings /= nodes
	pongs /= nodes
	bytes := -bytesBefore
	for _, nd := range n.Nodes {
		bytes += nd.SentBytes
	}
	perFrame := float64(bytes) / ((pings + pongs) * nodes * secs)
	bound := math.Max(1, float64(nodes-1)/(timeout/2/1000.0))
	t.Logf("bus traffic at rest, %d nodes, cluster-node-timeout %d ms, over %d s: per node %.2f frames/s sent "+
		"(%.2f PING + %.2f PONG; per-node PING range %.2f..%.2f), %.0f bytes/frame, %.1f KB/s per node; "+
		"spec bound for PINGs: max(1, (N-1)/(timeout/2)) = %.2f/s",
		nodes, timeout, window/1000, pings+pongs, pings, pongs, minPing, maxPing, perFrame,
		float64(bytes)/nodes/secs/1024, bound)
	if other != 0 {
		t.Errorf("%v frames other than PING/PONG at rest", other)
	}
	if pings < 0.9 || pings > bound*1.15 {
		t.Errorf("%.2f PINGs/s per node, want about 1..%.2f", pings, bound)
	}
	if math.Abs(pongs-pings) > 0.02*pings {
		t.Errorf("%.2f PONGs/s for %.2f PINGs/s", pongs, pings)
	}
}
