package cmdtest_test

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// COMMAND COUNT and the top-level command names equal redis-server
// 7.0.15's; COMMAND DOCS gives every command Redis's group and since, at
// least Redis's subcommands, and arguments derived from arity and key
// positions (keys point at COMMAND INFO's key spec; the last required
// argument of a variadic command is "multiple").
func TestCommandDocsAgainstRedis(t *testing.T) {
	ctx := context.Background()
	ref := redis.NewClient(&redis.Options{Addr: nodetest.StartRedis(t), Protocol: 3})
	t.Cleanup(func() { _ = ref.Close() })
	c := shardsNode(t).Client(t)

	assert.Equal(t, ref.Do(ctx, "COMMAND", "COUNT").Val(), c.Do(ctx, "COMMAND", "COUNT").Val())
	topLevel := func(cl *redis.Client) []string {
		var out []string
		for _, n := range cl.Do(ctx, "COMMAND", "LIST").Val().([]any) {
			if s := n.(string); !strings.Contains(s, "|") {
				out = append(out, s)
			}
		}
		sort.Strings(out)
		return out
	}
	assert.Equal(t, topLevel(ref), topLevel(c))

	want := ref.Do(ctx, "COMMAND", "DOCS").Val().(map[any]any)
	got := c.Do(ctx, "COMMAND", "DOCS").Val().(map[any]any)
	subs := func(docs map[any]any) (n int) {
		for _, d := range docs {
			if s, ok := d.(map[any]any)["subcommands"].(map[any]any); ok {
				n += len(s)
			}
		}
		return n
	}
	assert.GreaterOrEqual(t, subs(got), subs(want))
	for name, d := range want {
		w := d.(map[any]any)
		g, ok := got[name].(map[any]any)
		if !assert.True(t, ok, "COMMAND DOCS has %s", name) {
			continue
		}
		assert.Equal(t, w["group"], g["group"], "%s group", name)
		assert.Equal(t, w["since"], g["since"], "%s since", name)
		assert.NotEmpty(t, g["summary"], "%s summary", name)
		if ws, ok := w["subcommands"].(map[any]any); ok {
			gs, _ := g["subcommands"].(map[any]any)
			for sub := range ws {
				assert.Contains(t, gs, sub, "%s has subcommand %s", name, sub)
			}
		}
	}

	del := got["del"].(map[any]any)["arguments"].([]any)
	require.Len(t, del, 1)
	assert.Equal(t, map[any]any{"name": "key", "type": "key", "key_spec_index": int64(0),
		"flags": []any{"multiple"}}, del[0])
	rename := got["rename"].(map[any]any)["arguments"].([]any)
	assert.Len(t, rename, 2)
	info := got["info"].(map[any]any)["arguments"].([]any)
	assert.Equal(t, map[any]any{"name": "arg", "type": "string",
		"flags": []any{"optional", "multiple"}}, info[0])
}
