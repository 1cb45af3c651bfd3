package cmdtest_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/cmd/node/nodetest"
	"github.com/slotd/slotd/netio"
	"github.com/slotd/slotd/netio/command"
)

// Commands that panic, registered by this test binary only (no slotd build
// has them): PANICAPPEND key value appends value to the string at key and
// panics half-way (a shard command); PANICLOOP panics on the event loop.
var (
	registerPanics sync.Once
	panicCtx       = context.Background()
)

func panicCommands() {
	registerPanics.Do(func() {
		command.Register(
			engine.Handle(&command.Spec{Name: "panicappend", Arity: 3, Flags: []string{"write"}, First: 1, Last: 1,
				Step: 1, Exec: command.Shard}, func(c *engine.Call) {
				e := c.LookupWrite(c.Args[1])
				if e == nil {
					e = c.Create(c.Args[1], keyspace.KindString)
				}
				e.Str = append(e.Str, c.Args[2]...)
				panic("panicappend: half-way")
			}),
			netio.Loop(&command.Spec{Name: "panicloop", Arity: 1, Exec: command.Loop}, func(x *netio.Ctx) {
				x.W.Simple("partial")
				panic("panicloop")
			}),
		)
	})
}

func TestPanicContainedOverTCP(t *testing.T) {
	panicCommands()
	p := nodetest.Start(t, "shard-actors", "2")
	r := nodetest.Start(t, "replicaof", "127.0.0.1 "+strconv.Itoa(p.Port))
	rc := r.Client(t)
	nodetest.Eventually(t, 10*time.Second, func() bool {
		return nodetest.InfoField(t, rc, "replication", "master_link_status") == "up"
	}, "replica in sync")
	c := p.Client(t, 2)
	other := p.Client(t, 2)

	// One pipeline: the panicking command gets the error, the commands
	// around it their replies, in order.
	cmds, _ := c.Pipelined(panicCtx, func(pl redis.Pipeliner) error {
		pl.Set(panicCtx, "k", "a", 0)
		pl.Do(panicCtx, "panicappend", "k", "b")
		pl.Get(panicCtx, "k")
		pl.Do(panicCtx, "panicloop")
		pl.Incr(panicCtx, "n")
		return nil
	})
	require.Len(t, cmds, 5)
	require.Equal(t, "OK", cmds[0].(*redis.StatusCmd).Val())
	require.EqualError(t, cmds[1].Err(), "ERR internal error executing 'panicappend'")
	require.Equal(t, "ab", cmds[2].(*redis.StringCmd).Val())
	require.EqualError(t, cmds[3].Err(), "ERR internal error executing 'panicloop'")
	require.Equal(t, int64(1), cmds[4].(*redis.IntCmd).Val())

	// The node lives, other clients are served, the counter says it.
	require.Equal(t, "PONG", other.Ping(panicCtx).Val())
	require.Equal(t, "2", nodetest.InfoField(t, other, "stats", "contained_panics"))
	require.Equal(t, "ab", other.Get(panicCtx, "k").Val())

	// The replica holds what the primary holds.
	nodetest.Eventually(t, 10*time.Second, func() bool {
		return rc.Get(panicCtx, "k").Val() == "ab" && rc.Get(panicCtx, "n").Val() == "1"
	}, "replica has the primary's value of the key the panic left")
}
