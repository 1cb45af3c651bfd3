package repl_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReplicateSetSlot: a primary's SETSLOT reaches the replica's applier
// before the primary hears back; a replica that does not apply it in time
// makes the primary give up after the timeout.
func TestReplicateSetSlot(t *testing.T) {
	t.Parallel()
	p, r := start(t, 4), start(t, 4)
	replicate(t, r, p)

	var mu sync.Mutex
	var got [][]string
	hold := make(chan struct{})
	r.Repl.OnSetSlot(func(args [][]byte, done func()) {
		var a []string
		for _, b := range args {
			a = append(a, string(b))
		}
		mu.Lock()
		got = append(got, a)
		mu.Unlock()
		if a[0] == "7" {
			go func() { <-hold; done() }()
			return
		}
		done()
	})
	result := make(chan bool, 1)
	require.True(t, p.Repl.ReplicateSetSlot([][]byte{[]byte("5"), []byte("stable")}, 5*time.Second,
		func(acked bool) { result <- acked }))
	select {
	case acked := <-result:
		assert.True(t, acked)
	case <-time.After(10 * time.Second):
		t.Fatal("no acknowledgement")
	}
	mu.Lock()
	assert.Equal(t, [][]string{{"5", "stable"}}, got, "applied on the replica before the primary heard back")
	mu.Unlock()

	require.True(t, p.Repl.ReplicateSetSlot([][]byte{[]byte("7"), []byte("stable")}, 300*time.Millisecond,
		func(acked bool) { result <- acked }))
	select {
	case acked := <-result:
		assert.False(t, acked, "the replica sits on it past the timeout")
	case <-time.After(10 * time.Second):
		t.Fatal("no answer after the timeout")
	}
	close(hold)

	// Without replicas there is nothing to wait for.
	assert.False(t, r.Repl.ReplicateSetSlot([][]byte{[]byte("1"), []byte("stable")}, time.Second,
		func(bool) { t.Error("called") }), "a replica streams nothing")
	lone := start(t, 2)
	assert.False(t, lone.Repl.ReplicateSetSlot([][]byte{[]byte("1"), []byte("stable")}, time.Second,
		func(bool) { t.Error("called") }))
}

// A replica that leaves its primary while the primary waits for it to
// acknowledge a SETSLOT no longer holds the SETSLOT up (redis-cli 7.0
// closes the import first, and the migrating node's replicas follow the
// new owner before they acknowledge).
func TestReplicateSetSlotReplicaLeaves(t *testing.T) {
	t.Parallel()
	p, r := start(t, 2), start(t, 2)
	replicate(t, r, p)
	other := start(t, 2)
	rc := r.Client(t)
	r.Repl.OnSetSlot(func(args [][]byte, done func()) {
		// The replica moves to another primary instead of applying it
		// (REPLICAOF answers once the old link is gone; the test may be
		// over by then).
		go func() { _ = rc.Do(ctx, "REPLICAOF", "127.0.0.1", other.Port).Err() }()
	})
	result := make(chan bool, 1)
	require.True(t, p.Repl.ReplicateSetSlot([][]byte{[]byte("9"), []byte("stable")}, 20*time.Second,
		func(acked bool) { result <- acked }))
	select {
	case acked := <-result:
		assert.True(t, acked, "done before the timeout, which reports false")
	case <-time.After(15 * time.Second):
		t.Fatal("the SETSLOT waited for a replica that left")
	}
}
