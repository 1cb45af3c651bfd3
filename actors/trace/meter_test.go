package trace

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type countObs struct{ n atomic.Int64 }

func (c *countObs) Observe(float64) { c.n.Add(1) }

// An actor spawned with Props shows its waiting messages in Depths, is
// timed while timing is on, and leaves Depths when it stops.
func TestMeterDepthTimingAndStop(t *testing.T) {
	sys := actor.NewActorSystem()
	defer sys.Shutdown()
	m := NewMeter(sys)
	require.Same(t, m, MeterOf(sys))
	obs := &countObs{}
	m.SetTiming(func(kind, id string) Observer {
		assert.Equal(t, ActorKey{"test", "a"}, ActorKey{kind, id})
		return obs
	})
	gate, entered := make(chan struct{}), make(chan struct{}, 1)
	handled := make(chan struct{}, 16)
	props := actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case string:
			select {
			case entered <- struct{}{}:
			default:
			}
			<-gate
			handled <- struct{}{}
		}
	}, Props(sys, "test", "a")...)
	pid := sys.Root.Spawn(props)
	for i := 0; i < 5; i++ {
		sys.Root.Send(pid, "m")
	}
	<-entered // the first message is being handled, four wait
	assert.Equal(t, []MailboxDepth{{ActorKey{"test", "a"}, 4}}, m.Depths())
	close(gate)
	for i := 0; i < 5; i++ {
		<-handled
	}
	deadline := time.Now().Add(5 * time.Second)
	for obs.n.Load() < 5 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	assert.GreaterOrEqual(t, obs.n.Load(), int64(5), "every message timed")
	m.SetTiming(nil)
	require.NoError(t, sys.Root.StopFuture(pid).Wait())
	for len(m.Depths()) > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	assert.Empty(t, m.Depths(), "a stopped actor leaves the meter")
}
