package cluster

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/slotd/slotd/bus"
)

// Failover on shutdown, the shell's side (bus/handoff.go): the shutdown
// sequence asks for it with HandOff and waits for done, which the actor
// calls once myself replicates the replica that took over, or with false
// when no replica can take over or it did not within the manual-failover
// timeout (plus a second).

// handOffReq asks the actor for a failover on shutdown.
type handOffReq struct{ done func(ok bool) }

// handOff is the failover on shutdown in progress.
type handOff struct {
	done     func(ok bool)
	deadline time.Time
}

// HandOff starts a failover on shutdown: done(true) once this node has
// handed its slots to a replica and follows it, done(false) if it cannot
// (no slots, no reachable replica, or the replica did not take over in
// time). done is called once, from the actor: it must not block.
func (c *Cluster) HandOff(done func(ok bool)) { c.root.Send(c.pid, handOffReq{done: done}) }

// startHandOff runs on the actor.
func (a *clusterActor) startHandOff(ctx actor.Context, m handOffReq) {
	if a.handOff != nil {
		a.handOff.done(false)
	}
	a.handOff = nil
	if a.st.HandOff(time.Now().UnixMilli()) == "" {
		_ = a.apply(ctx)
		m.done(false)
		return
	}
	a.handOff = &handOff{done: m.done, deadline: time.Now().Add((bus.MFTimeout + 1000) * time.Millisecond)}
}

// checkHandOff ends the failover on shutdown in progress, after every step.
func (a *clusterActor) checkHandOff() {
	h := a.handOff
	if h == nil {
		return
	}
	if me := a.st.Myself(); me.IsReplica() {
		a.handOff = nil
		a.log.Warn().Str("master", me.MasterID).Msg("Failover on shutdown done: my slots are served by my former replica")
		h.done(true)
		return
	}
	if time.Now().After(h.deadline) {
		a.handOff = nil
		a.log.Warn().Msg("Failover on shutdown did not complete in time: shutting down without it")
		h.done(false)
	}
}
