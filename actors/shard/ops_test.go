package shard

import (
	"slices"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/trace"
)

// markStep is another component's step run in a shard's turn.
type markStep struct{ ran chan struct{} }

func (s markStep) RunInTurn() { close(s.ran) }

// DEBUG TRACE names every message a shard handles by what it is: a step
// with a completion callback by the step, another component's step by its
// own type, the test-only hook by its name.
func TestTraceNamesEveryMessage(t *testing.T) {
	sys := actor.NewActorSystem()
	g := NewGroup(sys, 2, zerolog.Nop())
	t.Cleanup(g.Stop)
	trace.Configure("shard")
	t.Cleanup(func() { trace.Configure("") })
	trace.Reset()

	done := make(chan struct{}, 4)
	signal := func() { done <- struct{}{} }
	g.Barrier(signal)                  // Broadcast with a callback: then{Barrier}
	g.TellThen(0, DetachAOF{}, signal) // then{DetachAOF}
	g.InTurn(1, markStep{ran: make(chan struct{})})
	g.Inspect(0, func(*engine.Shard) { signal() })
	g.DropAll(signal)
	for range 4 {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("shard messages not handled")
		}
	}
	want := []string{"shard.Barrier", "shard.DetachAOF", "shard.markStep", "shard.Inspect", "shard.DropAll"}
	var names []string
	require.Eventually(t, func() bool {
		names = names[:0]
		for _, r := range trace.Recent(0) {
			if r.Message != "shard.tick" {
				names = append(names, r.Message)
			}
		}
		for _, w := range want {
			if !slices.Contains(names, w) {
				return false
			}
		}
		return true
	}, 10*time.Second, 5*time.Millisecond)
	for _, n := range names {
		assert.Contains(t, want, n, "every record names its message")
	}
}
