package cluster

import (
	"net"
	"strconv"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/slotd/slotd/actors/peer"
	"github.com/slotd/slotd/bus"
)

// apply carries out the pending effects of the last step with bus.Apply
// (the order is bus.Apply's), then reconciles the replication role with
// the state, finishes a failover on shutdown that the step completed and
// hands the event loops a new write lease. When nodes.conf cannot be
// written nothing else is done: the node must not act on a configuration
// (an epoch, a vote) it could lose.
func (a *clusterActor) apply(ctx actor.Context) error {
	fx := a.st.TakeEffects()
	if a.btr.on || traceOn() {
		a.traceStep(time.Now().UnixMilli())
	}
	if id := a.st.MyID(); id != *a.myID.Load() { // CLUSTER RESET HARD
		a.myID.Store(&id)
	}
	x := &stepExecutor{a: a, ctx: ctx, lazy: a.lazySave}
	if err := bus.Apply(fx, x); err != nil {
		return err
	}
	a.lazySave = false
	a.replicate = x.replicate
	a.reconcileRole(ctx, x.promote)
	a.checkHandOff()
	if a.onLease != nil {
		if l := a.st.WriteLease(); l != a.lease {
			a.lease = l
			a.onLease(l)
		}
	}
	return nil
}

// stepExecutor is the production bus.Executor: the effects of one step of
// the cluster actor.
type stepExecutor struct {
	a   *clusterActor
	ctx actor.Context
	// lazy: the step changed no epoch (clusterActor.lazySave): a save is
	// written without fsync at all, as Redis does for SETSLOT.
	lazy bool
	// syncLater: SaveConfig wrote without fsync; SyncConfig completes it.
	syncLater bool
	// promote: the step had a Promote effect; replicate: its Replicate
	// effect ("" if none).
	promote   bool
	replicate string
}

// SaveConfig rewrites nodes.conf: fsync'd now when durable (unless lazy),
// else written now and fsync'd by SyncConfig after the step's other
// effects, so a failover's old primary lifts its write pause without
// waiting for the disk.
func (x *stepExecutor) SaveConfig(durable bool) error {
	a := x.a
	if x.lazy || !durable {
		x.syncLater = !x.lazy
		return a.saver.saveNoSync(a.st.Config())
	}
	return a.saver.save(a.st.Config())
}

func (x *stepExecutor) SyncConfig() {
	if !x.syncLater {
		return
	}
	if err := x.a.saver.sync(); err != nil {
		x.a.die(err)
	}
}

func (x *stepExecutor) Log(line string) {
	x.a.log.Warn().Msg(line)
	if x.a.btr.on {
		x.a.traceEvent("log " + line)
	}
}

// Promote holds the routing tables published from now on until the
// replication layer serves as a primary (promoted).
func (x *stepExecutor) Promote() {
	x.promote = true
	if x.a.repl != nil {
		x.a.promoting = true
	}
}

func (x *stepExecutor) Publish() {
	if x.a.promoting {
		x.a.heldTable = true
		return
	}
	x.a.publish()
}

func (x *stepExecutor) Dial(d bus.Dial) {
	x.a.links[d.Link] = peer.Spawn(x.ctx, x.a.peerOptions(x.ctx, d.Link, nil, d.Addr))
}

func (x *stepExecutor) Send(s bus.Send) {
	if h := x.a.links[s.Link]; h != nil {
		f := s.Frame
		if x.a.btr.on {
			f = x.a.traceSend(s.Link, f)
		}
		x.ctx.Send(h.PID, &peer.Write{Frame: f})
	}
}

func (x *stepExecutor) Close(id bus.LinkID) {
	if h := x.a.links[id]; h != nil {
		delete(x.a.links, id)
		x.ctx.Send(h.PID, peer.Close{})
	}
}

func (x *stepExecutor) Deliver(d bus.Delivery) {
	if x.a.deliver != nil {
		x.a.deliver(d)
	}
}

func (x *stepExecutor) DropSlots(slots []int) {
	if x.a.dropSlots == nil {
		return
	}
	x.a.log.Warn().Ints("slots", slots).Msg("Deleting the keys of slots this node no longer serves")
	x.a.dropSlots(slots)
}

// Replicate logs the reconfiguration once per run of steps that ask for
// it; reconcileRole follows the new primary.
func (x *stepExecutor) Replicate(primary string) {
	x.replicate = primary
	if primary != x.a.replicate {
		x.a.log.Warn().Str("master", primary).Msg("Configuration change detected. Reconfiguring myself as a replica")
	}
}

func (x *stepExecutor) UnpauseWrites() {
	if x.a.repl != nil {
		x.a.repl.UnpauseWrites()
	}
}

// PauseWrites asks replication for the manual failover's write pause; the
// offset it paused at comes back as writesPaused.
func (x *stepExecutor) PauseWrites(untilMs int64) {
	if x.a.repl == nil {
		return
	}
	self, root := x.ctx.Self(), x.ctx.ActorSystem().Root
	x.a.repl.PauseWrites(time.UnixMilli(untilMs), func(off int64) {
		root.Send(self, writesPaused{offset: off})
	})
}

// AwaitOffset asks replication to report, as replApplied, when this
// replica has applied its primary's stream up to offset.
func (x *stepExecutor) AwaitOffset(offset uint64) {
	if x.a.repl == nil {
		return
	}
	self, root := x.ctx.Self(), x.ctx.ActorSystem().Root
	until := time.Now().Add(bus.MFTimeout * time.Millisecond)
	x.a.repl.WhenApplied(int64(offset), until, func(off int64) {
		root.Send(self, replApplied{offset: off})
	})
}

// reconcileRole makes replication follow whichever primary the state says
// myself replicates (or none: promotion). It runs after every step, so a
// restart as a replica, a Replicate effect, CLUSTER REPLICATE and a
// primary that changed its address are all one case.
func (a *clusterActor) reconcileRole(ctx actor.Context, promote bool) {
	if a.repl == nil {
		return
	}
	self, root := ctx.Self(), ctx.ActorSystem().Root
	me := a.st.Myself()
	if me.IsMaster() {
		if a.following != "" || promote {
			a.log.Warn().Msg("Promoted to primary: stop replicating and serve the slots")
			a.following = ""
			a.promoting = true
			a.repl.Promote(func() { root.Send(self, promoted{}) })
		}
		return
	}
	m, ok := a.st.Lookup(me.MasterID)
	if !ok || m.IP == "" || m.Port == 0 {
		return
	}
	if addr := net.JoinHostPort(m.IP, strconv.Itoa(m.Port)); addr != a.following {
		a.following = addr
		a.log.Info().Str("master", m.ID).Str("addr", addr).Msg("Following primary")
		a.repl.Follow(m.IP, m.Port)
	}
}
