package main

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// The simulated replica follows a primary of either kind to its final
// offset, and verify tells a followed run from a dropped link.
func TestFakeReplicaFollowsPrimary(t *testing.T) {
	for _, kind := range []string{"slotd", "redis"} {
		t.Run(kind, func(t *testing.T) {
			var addr string
			if kind == "slotd" {
				addr = nodetest.Start(t).Addr
			} else {
				addr = nodetest.StartRedis(t)
			}
			_, port, err := net.SplitHostPort(addr)
			require.NoError(t, err)
			p, _ := strconv.Atoi(port)
			prim := &proc{kind: kind, port: p}

			rc := redis.NewClient(&redis.Options{Addr: addr})
			defer rc.Close()
			ctx := context.Background()
			require.NoError(t, rc.Set(ctx, "before", "x", 0).Err())

			f, err := dialFake(kind, addr)
			require.NoError(t, err)
			require.NoError(t, f.waitSynced(10*time.Second))
			nodetest.Eventually(t, 10*time.Second, func() bool {
				m, err := prim.info("replication")
				return err == nil && replicaField(m, "state") == "online"
			}, "replica online")
			before, err := prim.info("stats")
			require.NoError(t, err)

			pipe := rc.Pipeline()
			for i := 0; i < 1000; i++ {
				pipe.Set(ctx, fmt.Sprint("k", i), i, 0)
			}
			_, err = pipe.Exec(ctx)
			require.NoError(t, err)
			assert.Equal(t, "", verify(prim, nil, f, before))
			off, err := prim.infoInt("replication", "master_repl_offset")
			require.NoError(t, err)
			assert.Equal(t, off, f.offset.Load())

			f.close()
			require.NoError(t, rc.Set(ctx, "after", "x", 0).Err())
			assert.NotEqual(t, "", verify(prim, nil, f, before), "a closed link is not a valid run")
		})
	}
}
