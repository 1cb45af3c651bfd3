package repl_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// WhenApplied (a manual failover's catch-up): the replica is told the
// moment it has applied the primary's stream up to an offset, with every
// write before it readable; an offset never reached is never reported.
func TestWhenApplied(t *testing.T) {
	p, r := start(t, 4), start(t, 2)
	replicate(t, r, p)
	pc, rc := p.Client(t), r.Client(t)
	for i := 0; i < 2000; i++ {
		require.NoError(t, pc.Set(ctx, "k"+strconv.Itoa(i), i, 0).Err())
	}
	target := p.Repl.ReplOffset()
	got := make(chan int64, 1)
	began := time.Now()
	r.Repl.WhenApplied(target, time.Now().Add(10*time.Second), func(off int64) { got <- off })
	select {
	case off := <-got:
		assert.GreaterOrEqual(t, off, target)
		t.Logf("caught up %v after the last write", time.Since(began).Round(time.Microsecond))
	case <-time.After(10 * time.Second):
		t.Fatalf("never told it applied offset %d (replica at %d)", target, r.Repl.ReplOffset())
	}
	// Everything up to the offset is applied, and ReplOffset says so.
	assert.Equal(t, "1999", rc.Get(ctx, "k1999").Val())
	assert.GreaterOrEqual(t, r.Repl.ReplOffset(), target)

	never := make(chan int64, 1)
	r.Repl.WhenApplied(target+1<<40, time.Now().Add(300*time.Millisecond), func(off int64) { never <- off })
	require.NoError(t, pc.Set(ctx, "more", 1, 0).Err())
	select {
	case off := <-never:
		t.Fatalf("told of offset %d, never reached", off)
	case <-time.After(600 * time.Millisecond):
	}
}
