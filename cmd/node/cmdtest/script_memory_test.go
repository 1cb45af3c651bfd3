package cmdtest_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/actors/script"
	"github.com/slotd/slotd/cmd/node/nodetest"
)

// A script that asks for more memory than script-memory-limit fails with
// Lua's "not enough memory", as a Redis script whose allocation fails, and
// the node serves on: string.rep is refused before it allocates, a table
// or a string grown step by step is stopped once the heap has grown past
// the budget (written or not: the writes it made stay, as in Redis).
func TestScriptMemoryBudget(t *testing.T) {
	n := nodetest.Start(t, "script-memory-limit", "16mb")
	// A script is stopped when the heap has grown past the budget, which
	// on a loaded machine takes longer than a client's usual read timeout.
	c := redis.NewClient(&redis.Options{Addr: n.Addr, Protocol: 3, ReadTimeout: time.Minute, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	got, err := c.ConfigGet(scrCtx, "script-memory-limit").Result()
	require.NoError(t, err)
	assert.Equal(t, "16777216", got["script-memory-limit"])

	oom := func(body string) string {
		return "ERR Error running script " + script.SHA1Hex([]byte(body)) + ", not enough memory"
	}
	for _, body := range []string{
		"return string.rep('x', 2^40)",
		"return string.rep('abc', 6 * 1024 * 1024)",
		"local t = {} for i = 1, 1e9 do t[i] = i end return #t",
		"local s = 'x' for i = 1, 60 do s = s .. s end return #s",
		"local t = {} for i = 1, 1e9 do t[#t + 1] = 'v' .. i end return #t",
		"local co = coroutine.wrap(function() local t = {} for i = 1, 1e9 do t[i] = {} end end) co() return 1",
		// pcall catches the error, but the script cannot go on.
		"local t = {} pcall(function() for i = 1, 1e9 do t[i] = i end end) for i = 1, 1e9 do t[i] = i end return 1",
	} {
		err := c.Eval(scrCtx, body, nil).Err()
		require.Error(t, err, body)
		assert.Equal(t, oom(body), err.Error(), body)
		require.Equal(t, "PONG", c.Ping(scrCtx).Val())
	}

	// string.rep's refusal is a Lua error pcall can catch.
	v, err := c.Eval(scrCtx, "local ok, e = pcall(string.rep, 'x', 2^40) return {tostring(ok), e}", nil).Result()
	require.NoError(t, err)
	assert.Equal(t, []any{"false", "not enough memory"}, v)

	// A script that wrote first is stopped too; its write stays.
	body := "redis.call('set', KEYS[1], 'before') local t = {} for i = 1, 1e9 do t[i] = i end"
	err = c.Eval(scrCtx, body, []string{"k"}).Err()
	require.Error(t, err)
	assert.Equal(t, oom(body), err.Error())
	assert.Equal(t, "before", c.Get(scrCtx, "k").Val())

	// Within the budget scripts run as before.
	v, err = c.Eval(scrCtx, "local t = {} for i = 1, 100000 do t[i] = i end return #string.rep('ab', 1000) + #t", nil).Result()
	require.NoError(t, err)
	assert.Equal(t, int64(102000), v)
}
