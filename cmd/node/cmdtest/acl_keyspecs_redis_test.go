package cmdtest

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
	"github.com/slotd/slotd/netio/acl"
	"github.com/slotd/slotd/netio/command"
)

// specNeed is one key spec of a redis-server command: the argument index
// where it begins and the access ACL demands of its keys (read for ACCESS,
// write for INSERT/DELETE/UPDATE).
type specNeed struct {
	index int
	need  acl.Perm
}

// keySpecNeeds reads the key specs of fixed flags that begin at a fixed
// index, for every command of redis-server.
func keySpecNeeds(t *testing.T, c *redis.Client) map[string][]specNeed {
	t.Helper()
	raw, err := c.Do(context.Background(), "COMMAND").Slice()
	require.NoError(t, err)
	out := map[string][]specNeed{}
	var walk func(entries []any)
	walk = func(entries []any) {
		for _, e := range entries {
			f := e.([]any)
			specs, _ := f[8].([]any)
			for _, sp := range specs {
				m := sp.(map[any]any)
				var need acl.Perm
				fixed := true
				for _, fl := range m["flags"].([]any) {
					switch fl.(string) {
					case "access":
						need |= acl.PermRead
					case "insert", "delete", "update":
						need |= acl.PermWrite
					case "variable_flags", "not_key":
						fixed = false
					}
				}
				bs := m["begin_search"].(map[any]any)
				if bs["type"] != "index" || !fixed {
					continue
				}
				idx := int(bs["spec"].(map[any]any)["index"].(int64))
				out[f[0].(string)] = append(out[f[0].(string)], specNeed{idx, need})
			}
			if subs, ok := f[9].([]any); ok {
				walk(subs)
			}
		}
	}
	walk(raw)
	return out
}

// The access ACL demands of a command's keys (%R~ / %W~ patterns) is the
// one redis-server 7.0.15's key specs give, for every command with a
// key spec of fixed flags that begins at a fixed argument.
func TestACLKeyAccessSameAsRedis(t *testing.T) {
	t.Parallel()
	ref := redis.NewClient(&redis.Options{Addr: nodetest.StartRedis(t), Protocol: 3})
	t.Cleanup(func() { _ = ref.Close() })
	nodetest.Start(t) // registers the command table
	want := keySpecNeeds(t, ref)
	var diff []string
	compared := 0
	for name, needs := range want {
		parent, sub, _ := strings.Cut(name, "|")
		spec := command.Lookup([]byte(parent))
		if spec != nil && sub != "" {
			spec = spec.Sub([]byte(sub))
		}
		if spec == nil {
			continue
		}
		args := [][]byte{[]byte(parent)}
		if sub != "" {
			args = append(args, []byte(sub))
		}
		for len(args) < 8 {
			args = append(args, []byte("1"))
		}
		keys, err := spec.KeyIndexes(nil, args)
		if err != nil {
			continue
		}
		for _, sn := range needs {
			for j, pos := range keys {
				if pos != sn.index {
					continue
				}
				compared++
				if got := acl.KeyNeed(spec, args, j, pos); got != sn.need {
					diff = append(diff, name+"@"+strconv.Itoa(pos)+": slotd "+permName(got)+" redis "+permName(sn.need))
				}
			}
		}
	}
	sort.Strings(diff)
	require.Empty(t, diff)
	require.Greater(t, compared, 150)
}

func permName(p acl.Perm) string {
	return [...]string{"none", "R", "W", "RW"}[p]
}
