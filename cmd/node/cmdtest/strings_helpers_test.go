package cmdtest_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/cmd/node/nodetest"
)

// strInShard runs fn inside the shard actor owning key's slot and waits for
// it: tests use it to look at TTLs and to plant values of other types
// without depending on other commands.
func strInShard(t *testing.T, n *nodetest.Node, key string, fn func(ks *keyspace.Keyspace)) {
	t.Helper()
	inShard(t, n, key, func(s *engine.Shard, slot int) { fn(s.Keyspace(slot, true)) })
}

// strPTTL is the key's remaining TTL in ms: -2 when missing, -1 without TTL.
func strPTTL(t *testing.T, n *nodetest.Node, key string) int64 {
	t.Helper()
	var ttl int64 = -2
	strInShard(t, n, key, func(ks *keyspace.Keyspace) {
		e := ks.GetString(key)
		now := time.Now().UnixMilli()
		switch {
		case e == nil || (e.Expire != 0 && e.Expire <= now):
		case e.Expire == 0:
			ttl = -1
		default:
			ttl = e.Expire - now
		}
	})
	return ttl
}

// strPlantList turns key into a key of another type (a list) for WRONGTYPE
// tests: it is SET first so the node's key counts stay right.
func strPlantList(t *testing.T, n *nodetest.Node, sc *respConn, key string) {
	t.Helper()
	require.Equal(t, "+OK\r\n", sc.Do("SET", key, "x"))
	strInShard(t, n, key, func(ks *keyspace.Keyspace) {
		e := ks.GetString(key)
		e.Kind = keyspace.KindList
		e.Str = nil
	})
}
