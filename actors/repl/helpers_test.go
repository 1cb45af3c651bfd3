package repl_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

var ctx = context.Background()

// start starts a node with DEBUG enabled (digests) and the given shard
// actor count.
func start(t *testing.T, shards int, directives ...string) *nodetest.Node {
	t.Helper()
	d := append([]string{"enable-debug-command", "yes", "shard-actors", strconv.Itoa(shards)}, directives...)
	return nodetest.Start(t, d...)
}

// info returns one field of INFO section.
func info(t *testing.T, c *redis.Client, section, field string) string {
	t.Helper()
	return nodetest.InfoField(t, c, section, field)
}

// replicate makes r a replica of p and waits until the link is up.
func replicate(t *testing.T, r, p *nodetest.Node) {
	t.Helper()
	rc := r.Client(t)
	require.NoError(t, rc.Do(ctx, "REPLICAOF", "127.0.0.1", p.Port).Err())
	waitUp(t, r)
}

func waitUp(t *testing.T, r *nodetest.Node) {
	t.Helper()
	rc := r.Client(t, 2)
	nodetest.Eventually(t, 10*time.Second, func() bool {
		return info(t, rc, "replication", "master_link_status") == "up"
	}, "replica link up")
}

func digest(t *testing.T, c *redis.Client) string {
	t.Helper()
	d, err := c.Do(ctx, "DEBUG", "DIGEST").Text()
	require.NoError(t, err)
	return d
}

// waitConverged waits until the replica's dataset digest equals the
// primary's (the primary must be quiet).
func waitConverged(t *testing.T, p, r *nodetest.Node) {
	t.Helper()
	pc, rc := p.Client(t, 2), r.Client(t, 2)
	var pd, rd string
	nodetest.Eventually(t, 10*time.Second, func() bool {
		pd, rd = digest(t, pc), digest(t, rc)
		return pd == rd
	}, "replica digest equals primary digest")
	require.NotEqual(t, strings.Repeat("0", 40), pd, "dataset should not be empty")
}

// dump reads a whole dataset type-aware (for failure messages and for
// comparing what users read).
func dump(t *testing.T, c *redis.Client) map[string]string {
	t.Helper()
	out := map[string]string{}
	var cursor uint64
	for {
		keys, next, err := c.Scan(ctx, cursor, "*", 1000).Result()
		require.NoError(t, err)
		for _, k := range keys {
			typ := c.Type(ctx, k).Val()
			var v string
			switch typ {
			case "string":
				v = c.Get(ctx, k).Val()
			case "list":
				v = strings.Join(c.LRange(ctx, k, 0, -1).Val(), ",")
			case "hash":
				v = strings.Join(sortedPairs(c.HGetAll(ctx, k).Val()), ",")
			case "set":
				m := c.SMembers(ctx, k).Val()
				sortStrings(m)
				v = strings.Join(m, ",")
			case "zset":
				for _, z := range c.ZRangeWithScores(ctx, k, 0, -1).Val() {
					v += z.Member.(string) + "=" + strconv.FormatFloat(z.Score, 'g', -1, 64) + ","
				}
			case "stream":
				// Entries, groups (last IDs, consumer and pending counts) and
				// who has what pending. Not compared: consumers' seen times
				// (each server's clock), and a group's entries-read and lag,
				// which group reads do not replicate (their XCLAIM records
				// carry no read counter, as in Redis).
				v = fmt.Sprint(c.XRange(ctx, k, "-", "+").Val(), c.Do(ctx, "XINFO", "STREAM", k).Val())
				for _, g := range c.XInfoGroups(ctx, k).Val() {
					v += fmt.Sprintf(" group %s %d %d %s", g.Name, g.Consumers, g.Pending, g.LastDeliveredID)
					for _, p := range c.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: k, Group: g.Name, Start: "-", End: "+", Count: 1000}).Val() {
						v += fmt.Sprintf(" %s:%s:%s:%d", g.Name, p.ID, p.Consumer, p.RetryCount)
					}
				}
			}
			out[k] = typ + ":" + v + " ttl:" + strconv.FormatInt(c.PExpireTime(ctx, k).Val().Milliseconds(), 10)
		}
		cursor = next
		if cursor == 0 {
			return out
		}
	}
}

func sortedPairs(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sortStrings(out)
	return out
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
