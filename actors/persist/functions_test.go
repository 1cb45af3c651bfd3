package persist_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

const libCode = "#!lua name=lib\nredis.register_function('hello', function(keys, args) return 'hello ' .. args[1] end)"

// Function libraries are part of the snapshot: they survive a restart,
// and move between redis-server and slotd in dump.rdb both ways.
func TestSnapshotKeepsFunctionLibraries(t *testing.T) {
	n := nodetest.Start(t)
	c := n.Client(t)
	require.Equal(t, "lib", c.FunctionLoad(ctx, libCode).Val())
	require.Equal(t, "OK", c.Save(ctx).Val())
	n.Stop()

	n2 := nodetest.Start(t, "dir", n.Dir)
	c2 := n2.Client(t)
	assert.Equal(t, "hello a", c2.FCall(ctx, "hello", nil, "a").Val())
	require.Equal(t, "OK", c2.Save(ctx).Val())
	n2.Stop()

	r := redisAt(t, n.Dir)
	assert.Equal(t, "hello b", r.FCall(ctx, "hello", nil, "b").Val())
	require.NoError(t, r.FunctionDelete(ctx, "lib").Err())
	require.Equal(t, "lib2", r.FunctionLoad(ctx, "#!lua name=lib2\nredis.register_function('f2', function() return 2 end)").Val())
	require.Equal(t, "OK", r.Save(ctx).Val())

	n3 := nodetest.Start(t, "dir", n.Dir)
	c3 := n3.Client(t)
	assert.Equal(t, int64(2), c3.FCall(ctx, "f2", nil).Val())
	assert.EqualError(t, c3.FCall(ctx, "hello", nil).Err(), "ERR Function not found")
}
