package netio_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// CLIENT PAUSE postpones commands (writes only with WRITE) until the
// pause ends or CLIENT UNPAUSE; nothing is refused.
func TestClientPause(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	n := nodetest.Start(t)
	admin, c := n.Client(t, 2), n.Client(t, 2)

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

	// ALL holds reads too (and CLIENT UNPAUSE, as in Redis): the pause
	// ends by itself and the postponed GET then runs.
	require.NoError(t, admin.Do(ctx, "client", "pause", 2000, "all").Err())
	got := make(chan string, 1)
	go func() { got <- c.Get(ctx, "k").Val() }()
	select {
	case v := <-got:
		t.Fatalf("read served during CLIENT PAUSE ALL: %q", v)
	case <-time.After(200 * time.Millisecond):
	}
	assert.Equal(t, "v1", <-got)
}
