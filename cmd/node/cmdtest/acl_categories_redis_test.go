package cmdtest

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// categoriesByName reads COMMAND's ACL categories of every command and
// subcommand a server lists.
func categoriesByName(t *testing.T, c *redis.Client) map[string]string {
	t.Helper()
	raw, err := c.Do(context.Background(), "COMMAND").Slice()
	require.NoError(t, err)
	out := map[string]string{}
	var walk func(entries []any)
	walk = func(entries []any) {
		for _, e := range entries {
			f := e.([]any)
			var cats []string
			for _, c := range f[6].([]any) {
				cats = append(cats, c.(string))
			}
			out[f[0].(string)] = strings.Join(cats, " ")
			if len(f) > 9 {
				if subs, ok := f[9].([]any); ok {
					walk(subs)
				}
			}
		}
	}
	walk(raw)
	return out
}

// Every command and subcommand both servers have is in the same ACL
// categories as in redis-server 7.0.15 (ACL rules such as -@dangerous
// cover the same commands), and ACL CAT lists the same categories.
func TestACLCategoriesSameAsRedis(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ref := redis.NewClient(&redis.Options{Addr: nodetest.StartRedis(t), Protocol: 2})
	t.Cleanup(func() { _ = ref.Close() })
	n := nodetest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: n.Addr, Protocol: 2})
	t.Cleanup(func() { _ = c.Close() })
	want, got := categoriesByName(t, ref), categoriesByName(t, c)
	var diff []string
	common := 0
	for name, cats := range got {
		w, ok := want[name]
		if ok {
			common++
		}
		if ok && w != cats {
			diff = append(diff, name+": slotd "+cats+" / redis "+w)
		}
	}
	sort.Strings(diff)
	require.Empty(t, diff)
	require.Greater(t, common, 300, "commands and subcommands compared")
	require.Equal(t, ref.Do(ctx, "ACL", "CAT").Val(), c.Do(ctx, "ACL", "CAT").Val())
}
