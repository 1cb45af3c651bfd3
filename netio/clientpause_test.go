package netio_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/actors/node/nodetest"
)

// CLIENT PAUSE postpones commands (writes only with WRITE) until the
// pause ends or CLIENT UNPAUSE; nothing is refused.
func TestClientPause(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	n := nodetest.Start(t)
	admin, c := n.Client(t, 2), n.Client(t, 2)

	for _, args := range [][]any{{"client", "pause", "abc"}, {"client", "pause", "-1"}, {"client", "pause", "10", "foo"}} {
		err := admin.Do(ctx, args...).Err()
		require.Error(t, err)
	}
	assert.EqualError(t, admin.Do(ctx, "client", "pause", "abc").Err(), "ERR timeout is not an integer or out of range")
	assert.EqualError(t, admin.Do(ctx, "client", "pause", "-1").Err(), "ERR timeout is negative")
	assert.EqualError(t, admin.Do(ctx, "client", "pause", "10", "foo").Err(), "ERR CLIENT PAUSE mode must be WRITE or ALL")

	require.NoError(t, c.Set(ctx, "k", "v0", 0).Err())
	require.NoError(t, admin.Do(ctx, "client", "pause", 60000, "write").Err())
	// Reads go on; a write waits.
	assert.Equal(t, "v0", c.Get(ctx, "k").Val())
	done := make(chan error, 1)
	w := n.Client(t, 2)
	go func() { done <- w.Set(ctx, "k", "v1", 0).Err() }()
	select {
	case err := <-done:
		t.Fatalf("write served during CLIENT PAUSE WRITE: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	assert.Equal(t, "v0", c.Get(ctx, "k").Val())
	require.NoError(t, admin.Do(ctx, "client", "unpause").Err())
	require.NoError(t, <-done)
	assert.Equal(t, "v1", c.Get(ctx, "k").Val())

	// A short ALL pause ends by itself; the postponed command then runs.
	require.NoError(t, admin.Do(ctx, "client", "pause", 300, "all").Err())
	start := time.Now()
	assert.Equal(t, "v1", c.Get(ctx, "k").Val())
	assert.GreaterOrEqual(t, time.Since(start), 250*time.Millisecond, "GET waited for the ALL pause")
}
