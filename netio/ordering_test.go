package netio_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// Pipelined commands from many connections, spread over all shard actors
// and event loops, must come back in request order on each connection.
func TestPipelinedRepliesKeepRequestOrder(t *testing.T) {
	n := nodetest.Start(t, "shard-actors", "4", "event-loops", "2")
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			c := redis.NewClient(&redis.Options{Addr: n.Addr, Protocol: 2, PoolSize: 1})
			defer c.Close()
			for round := 0; round < 30; round++ {
				p := c.Pipeline()
				var gets []*redis.StringCmd
				for i := 0; i < 50; i++ {
					k := fmt.Sprintf("w%d:r%d:k%d", w, round, i)
					p.Set(ctx, k, k+"-v", 0)
					p.Ping(ctx)
					gets = append(gets, p.Get(ctx, k))
				}
				if _, err := p.Exec(ctx); err != nil {
					errs <- err
					return
				}
				for i, g := range gets {
					want := fmt.Sprintf("w%d:r%d:k%d-v", w, round, i)
					if g.Val() != want {
						errs <- fmt.Errorf("worker %d round %d: got %q want %q", w, round, g.Val(), want)
						return
					}
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}
