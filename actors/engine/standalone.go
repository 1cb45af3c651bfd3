package engine

import (
	"math/rand/v2"

	"github.com/slotd/slotd/netio/batch"
	"github.com/slotd/slotd/netio/resp"
)

// NewShard builds the state of a node's only shard outside any actor: it
// owns every slot, has the default settings, draws from rng, reads clock
// (unix µs; it also serves as the monotonic clock) and asks host for
// timers and the network. Tests and in-process drivers use it to call
// commands directly.
func NewShard(rng *rand.Rand, clock func() int64, host Host) *Shard {
	g := NewGroup(1, Options{Rand: func(int) *rand.Rand { return rng }, Clock: clock,
		Mono: func() int64 { return clock() * 1000 }})
	s := g.shards[0]
	s.SetHost(host)
	return s
}

// NewCall builds the context of one command run in s: the reply goes to w,
// the keys hash to slot, and now is the command's clock (unix ms).
func NewCall(s *Shard, w *resp.Writer, slot int, now int64, args ...string) *Call {
	a := make([][]byte, len(args))
	for i, x := range args {
		a[i] = []byte(x)
	}
	return &Call{Args: a, W: w, Slot: slot, Now: now, S: s, Cmd: &batch.Cmd{}}
}
