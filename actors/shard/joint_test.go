package shard

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/netio/batch"
)

// doneFunc is a batch.Completer calling a function.
type doneFunc func()

func (f doneFunc) BatchDone(*batch.Batch) { f() }

func emptyBatch(done func()) *batch.Batch {
	b := batch.NewBatch()
	b.Done = doneFunc(done)
	return b
}

func wait(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal(what)
	}
}

// A shard taken by a joint holds what arrives after it until the joint
// has run in every shard: a joint over shards 1 and 2 waits for a busy
// shard 2, and a step sent to shard 1 meanwhile runs after the joint.
func TestJointHoldsTakenShards(t *testing.T) {
	g := NewGroup(actor.NewActorSystem(), 3, zerolog.Nop())
	t.Cleanup(g.Stop)
	var mu sync.Mutex
	var events []string
	note := func(e string) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}
	busy, unblock := make(chan struct{}), make(chan struct{})
	go g.Inspect(2, func(*engine.Shard) { close(busy); <-unblock })
	wait(t, busy, "shard 2 never got busy")

	jointDone := make(chan struct{})
	var parts sync.WaitGroup
	parts.Add(2)
	go func() { parts.Wait(); close(jointDone) }()
	g.SendJoint([]int{1, 2}, []*batch.Batch{
		emptyBatch(func() { note("joint shard 1"); parts.Done() }),
		emptyBatch(func() { note("joint shard 2"); parts.Done() }),
	})
	after := make(chan struct{})
	g.Inspect(1, func(*engine.Shard) { note("step in shard 1"); close(after) })
	free := make(chan struct{})
	g.Inspect(0, func(*engine.Shard) { close(free) }) // shard 0 is not taken
	wait(t, free, "shard 0 held by a joint it is not part of")
	close(unblock)
	wait(t, jointDone, "joint never ran")
	wait(t, after, "held step never replayed")
	require.Equal(t, []string{"joint shard 1", "joint shard 2", "step in shard 1"}, events)
}

// Joints over overlapping sets of shards, sent concurrently with plain
// batches from several goroutines, all complete: shards are taken lowest
// first, so none waits for another in a cycle.
func TestJointsNeverDeadlock(t *testing.T) {
	g := NewGroup(actor.NewActorSystem(), 4, zerolog.Nop())
	t.Cleanup(g.Stop)
	var pending sync.WaitGroup
	all := make(chan struct{})
	var senders sync.WaitGroup
	for s := range 6 {
		senders.Add(1)
		go func() {
			defer senders.Done()
			r := rand.New(rand.NewPCG(uint64(s), 1))
			for range 500 {
				var idx []int
				for i := range 4 {
					if r.IntN(2) == 0 {
						idx = append(idx, i)
					}
				}
				if len(idx) < 2 {
					pending.Add(1)
					g.Send(r.IntN(4), emptyBatch(pending.Done))
					continue
				}
				bs := make([]*batch.Batch, len(idx))
				pending.Add(len(idx))
				for k := range bs {
					bs[k] = emptyBatch(pending.Done)
				}
				g.SendJoint(idx, bs)
			}
		}()
	}
	go func() { senders.Wait(); pending.Wait(); close(all) }()
	wait(t, all, "joints deadlocked")
}
