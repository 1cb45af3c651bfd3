package netio_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// Small replies wait for the end of the loop's cycle while large ones go out
// at once: a pipeline mixing both must still get every reply whole and in
// order, on several connections at a time.
func TestMixedReplySizesKeepOrder(t *testing.T) {
	n := nodetest.Start(t, "shard-actors", "2", "event-loops", "2")
	ctx := context.Background()
	sizes := []int{3, 20 << 10, 100, 16 << 10, 1 << 20, 1, 16<<10 + 1, 5000}
	c := redis.NewClient(&redis.Options{Addr: n.Addr, PoolSize: 4})
	defer c.Close()
	for i, sz := range sizes {
		require.NoError(t, c.Set(ctx, "v"+strings.Repeat("x", i), strings.Repeat(string(rune('a'+i)), sz), 0).Err())
	}
	errs := make(chan error, 4)
	for w := 0; w < 4; w++ {
		go func() {
			for round := 0; round < 10; round++ {
				p := c.Pipeline()
				var gets []*redis.StringCmd
				for j := 0; j < 40; j++ {
					i := (j*7 + round + w) % len(sizes)
					gets = append(gets, p.Get(ctx, "v"+strings.Repeat("x", i)))
					p.Ping(ctx)
				}
				if _, err := p.Exec(ctx); err != nil {
					errs <- err
					return
				}
				for j, g := range gets {
					i := (j*7 + round + w) % len(sizes)
					if g.Val() != strings.Repeat(string(rune('a'+i)), sizes[i]) {
						errs <- fmt.Errorf("round %d: reply %d is not the value of v%d (out of order or cut)", round, j, i)
						return
					}
				}
			}
			errs <- nil
		}()
	}
	for w := 0; w < 4; w++ {
		require.NoError(t, <-errs)
	}
}
