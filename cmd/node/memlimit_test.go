package node_test

import (
	"context"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node"
	"github.com/slotd/slotd/cmd/node/nodetest"
)

// The Go runtime's memory limit follows maxmemory (and go-memory-limit)
// through CONFIG SET, and the process's own limit comes back when neither
// asks for one and when the node stops.
func TestGoMemoryLimitFollowsMaxmemory(t *testing.T) {
	base := debug.SetMemoryLimit(-1)
	n := nodetest.Start(t, "maxmemory", "100mb")
	c := n.Client(t)
	ctx := context.Background()
	const mb = 1 << 20
	require.Equal(t, node.GoMemoryLimit(100*mb, 0), debug.SetMemoryLimit(-1))
	require.Equal(t, int64(100*mb+25*mb+16*mb), node.GoMemoryLimit(100*mb, 0))

	require.NoError(t, c.ConfigSet(ctx, "maxmemory", "1gb").Err())
	require.Equal(t, node.GoMemoryLimit(1024*mb, 0), debug.SetMemoryLimit(-1))

	require.NoError(t, c.ConfigSet(ctx, "go-memory-limit", "3gb").Err())
	require.Equal(t, int64(3*1024*mb), debug.SetMemoryLimit(-1))

	require.NoError(t, c.ConfigSet(ctx, "go-memory-limit", "0").Err())
	require.NoError(t, c.ConfigSet(ctx, "maxmemory", "0").Err())
	require.Equal(t, base, debug.SetMemoryLimit(-1))

	require.NoError(t, c.ConfigSet(ctx, "maxmemory", "200mb").Err())
	require.Equal(t, node.GoMemoryLimit(200*mb, 0), debug.SetMemoryLimit(-1))
	n.Stop()
	require.Equal(t, base, debug.SetMemoryLimit(-1))
}
