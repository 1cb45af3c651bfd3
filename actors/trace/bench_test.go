package trace

import "testing"

// BenchmarkTracerOff is what a shard actor pays per message while tracing
// and metrics are off: the check in Receive.
func BenchmarkTracerOff(b *testing.B) {
	Configure("")
	tr := NewTracer("shard", "shard-0", &Meter{})
	n := 0
	for b.Loop() {
		if tr.On() {
			n++
		}
	}
	if n != 0 {
		b.Fatal("traced while off")
	}
}

// BenchmarkTracerOn is a traced message's cost: begin (name, clock), end
// (handling time, the ring).
func BenchmarkTracerOn(b *testing.B) {
	Configure("shard")
	defer Configure("")
	SetRingSize(4096)
	SetLogger(nil)
	tr := NewTracer("shard", "shard-0", nil)
	msg := struct{}{}
	for b.Loop() {
		sp := tr.Begin(msg, nil)
		tr.End(sp)
	}
}
