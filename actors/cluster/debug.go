package cluster

// Fault injection for tests and operators: DEBUG DROP-CLUSTER-PACKET-FILTER
// and DEBUG CLOSE-CLUSTER-LINK-ON-PACKET-DROP filter incoming bus frames
// before the state machine sees them, DEBUG CLUSTERLINK KILL closes a
// node's links (they are dialled again), and DEBUG SLEEP freezes the bus side
// of the node: while the node is paused the actor holds every bus message
// (in order) and skips its ticks, so no PING is answered and no timer
// fires, as in a stalled redis-server; a timer message resumes it, and the
// held messages are then handled as if they had just arrived. No goroutine
// blocks.

import (
	"strings"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/slotd/slotd/actors/peer"
	"github.com/slotd/slotd/bus"
)

type debugState struct {
	filter      atomic.Int32 // Redis message type to drop; -1: none, -2: all
	closeOnDrop atomic.Bool
	paused      func() time.Duration

	// Actor-only.
	held  []any
	armed bool
}

func newDebugState(paused func() time.Duration) *debugState {
	d := &debugState{paused: paused}
	d.filter.Store(-1)
	return d
}

func (d *debugState) pausedFor() time.Duration {
	if d.paused == nil {
		return 0
	}
	return d.paused()
}

// resume ends a pause (sent by a timer).
type resume struct{}

// SetDropFilter makes the node drop incoming bus frames of type t (Redis's
// numbering: ping 0, pong 1, meet 2, fail 3, publish 4, auth-req 5,
// auth-ack 6, update 7, mfstart 8, module 9, publishshard 10); -1 drops
// none, -2 all.
func (c *Cluster) SetDropFilter(t int) { c.dbg.filter.Store(int32(t)) }

// SetCloseOnDrop makes a dropped frame also close its link.
func (c *Cluster) SetCloseOnDrop(on bool) { c.dbg.closeOnDrop.Store(on) }

// killLinks is DEBUG CLUSTERLINK KILL: close the links to (outbound),
// from (inbound) or to and from (all) node id. done gets the error reply
// ("" for +OK).
type killLinks struct {
	dir, id string
	done    func(errText string)
}

// KillLinks closes links of node id (dir: "to", "from" or "all", any
// case) as DEBUG CLUSTERLINK KILL does, and calls done, from the actor,
// with Redis's error text or "". It is a bus message like PUBLISH, so an
// SPUBLISH sent after it from the same goroutine no longer goes out on a
// link it closed.
func (c *Cluster) KillLinks(dir, id string, done func(errText string)) {
	c.root.Send(c.pid, killLinks{dir: dir, id: id, done: done})
}

func (a *clusterActor) killLinks(now int64, m killLinks) {
	if _, ok := a.st.Lookup(m.id); !ok {
		m.done("ERR Unknown node " + m.id)
		return
	}
	var to, from bool
	switch strings.ToLower(m.dir) {
	case "to":
		to = true
	case "from":
		from = true
	case "all":
		to, from = true, true
	default:
		m.done("ERR Unknown direction " + m.dir)
		return
	}
	a.st.KillLinks(now, m.id, to, from)
	m.done("")
}

// hold keeps messages while the node is paused, and replays them on
// resume. It reports whether the message was taken care of.
func (a *clusterActor) hold(ctx actor.Context) bool {
	d := a.dbg
	msg := ctx.Message()
	if _, ok := msg.(resume); ok {
		d.armed = false
		if rem := d.pausedFor(); rem > 0 {
			a.arm(ctx, rem)
			return true
		}
		held := d.held
		d.held = nil
		for _, m := range held {
			a.step(ctx, m)
		}
		return true
	}
	rem := d.pausedFor()
	if rem <= 0 && len(d.held) == 0 {
		return false
	}
	if _, ok := msg.(tick); !ok {
		d.held = append(d.held, msg) // ticks of a frozen node never happen
	}
	if !d.armed {
		a.arm(ctx, max(rem, 0))
	}
	return true
}

func (a *clusterActor) arm(ctx actor.Context, d time.Duration) {
	a.dbg.armed = true
	self, root := ctx.Self(), ctx.ActorSystem().Root
	time.AfterFunc(d, func() { root.Send(self, resume{}) })
}

// dropped applies the packet filter to an incoming frame.
func (a *clusterActor) dropped(ctx actor.Context, now int64, m *peer.Received) bool {
	f := a.dbg.filter.Load()
	if f == -1 || (f != -2 && f != int32(bus.MsgTypeOf(m.Frame.GetHeader().GetType()))) {
		return false
	}
	if a.dbg.closeOnDrop.Load() {
		if h := a.links[m.Link]; h != nil {
			delete(a.links, m.Link)
			ctx.Send(h.PID, peer.Close{})
			a.st.LinkClosed(now, m.Link)
			if err := a.apply(ctx); err != nil {
				a.log.Error().Err(err).Msg("Fatal: can't update cluster config file")
			}
		}
	}
	return true
}
