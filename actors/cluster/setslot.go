package cluster

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/slotd/slotd/bus"
	"github.com/slotd/slotd/netio/resp"
)

// SetSlotReplicator is what a primary needs to run CLUSTER SETSLOT as
// Valkey 8 does; the node's Options.Repl implements it when replication
// is on.
type SetSlotReplicator interface {
	// ReplicateSetSlot streams "CLUSTER SETSLOT args..." to the online
	// replicas and calls done (from any goroutine) once all of them
	// acknowledged it (true) or timeout (0: none) passed first (false). It
	// returns false, and never calls done, when there is no online replica.
	ReplicateSetSlot(args [][]byte, timeout time.Duration, done func(acked bool)) bool
}

// Internal first arguments of requests the actor sends itself (a client's
// is always "cluster"): a SETSLOT's replicas answered, or a replica applies
// its primary's SETSLOT.
var (
	markAcked      = []byte("\x00setslot-acked")
	markTimedOut   = []byte("\x00setslot-timeout")
	markReplicated = []byte("\x00setslot-replicated")
)

// setSlotState lets execSetSlot park the request being served until the
// replicas acknowledged it.
type setSlotState struct {
	ctx    actor.Context
	cur    *request
	parked *request
}

// serving notes the request serve is about to execute.
func (s *setSlotState) serving(ctx actor.Context, r *request) { s.ctx, s.cur, s.parked = ctx, r, nil }

// isParked reports whether execSetSlot kept r for later: serve must not
// complete it.
func (s *setSlotState) isParked(r *request) bool {
	p := s.parked == r
	s.ctx, s.cur, s.parked = nil, nil, nil
	return p
}

// ApplyReplicated applies a CLUSTER SETSLOT streamed by this replica's
// primary (args are SETSLOT's arguments) and calls done once it is saved
// and published.
func (c *Cluster) ApplyReplicated(args [][]byte, done func()) {
	all := append([][]byte{markReplicated, []byte("setslot")}, args...)
	c.root.Send(c.pid, &request{args: all, w: &resp.Writer{}, done: done})
}

// execSetSlot serves CLUSTER SETSLOT slot IMPORTING|MIGRATING|NODE id and
// SETSLOT slot STABLE, [TIMEOUT ms] (bus.State.ParseSetSlot has the rules).
// A primary with online replicas first streams the command to them and
// replies once they acknowledged it, as Valkey 8 (-NOREPLICAS when TIMEOUT
// passes first, the command not run here). The reply goes out after
// nodes.conf is saved and the new routing table is published, so a client
// told +OK sees the open slot (ASK/ASKING) on its next command.
func (a *clusterActor) execSetSlot(w *resp.Writer, args [][]byte) {
	keys := a.slotKeys
	if keys == nil {
		keys = func(int) int64 { return 0 }
	}
	me := a.st.Myself()
	epoch, current, replica := me.ConfigEpoch, a.st.CurrentEpoch(), me.IsReplica()
	defer func() {
		// Redis fsyncs nodes.conf only for epoch changes (a closed import
		// bumps the configEpoch) and role changes; other SETSLOTs are saved
		// without it.
		me := a.st.Myself()
		a.lazySave = epoch == me.ConfigEpoch && current == a.st.CurrentEpoch() && replica == me.IsReplica()
	}()
	now := time.Now().UnixMilli()
	var err error
	switch string(args[0]) {
	case string(markReplicated):
		if err = a.st.ReplicaSetSlot(now, args[2:], keys); err != nil {
			a.log.Warn().Err(err).Msg("SETSLOT from my primary not applied")
		}
	case string(markTimedOut):
		w.Error("NOREPLICAS Not enough good replicas to write.")
		return
	case string(markAcked):
		err = a.st.SetSlot(now, args[2:], keys)
	default:
		var cmd bus.SetSlotCmd
		if cmd, err = a.st.ParseSetSlot(now, args[2:], keys); err == nil && a.replicateSetSlot(args[1], cmd) {
			return
		}
		if err == nil {
			err = a.st.ApplySetSlot(now, cmd, keys)
		}
	}
	if err != nil {
		w.Error(err.Error())
		return
	}
	w.OK()
}

// replicateSetSlot streams a checked SETSLOT to the replicas and parks the
// request until they answered; false when there is none to wait for.
func (a *clusterActor) replicateSetSlot(name []byte, cmd bus.SetSlotCmd) bool {
	rep, ok := a.repl.(SetSlotReplicator)
	r, ctx := a.setSlot.cur, a.setSlot.ctx
	if !ok || r == nil || ctx == nil {
		return false
	}
	self, root := ctx.Self(), ctx.ActorSystem().Root
	args := append([][]byte(nil), cmd.Args...)
	if !rep.ReplicateSetSlot(args, time.Duration(cmd.Timeout)*time.Millisecond, func(acked bool) {
		mark := markAcked
		if !acked {
			mark = markTimedOut
		}
		root.Send(self, &request{args: append([][]byte{mark, name}, args...), w: r.w, done: r.done})
	}) {
		return false
	}
	a.setSlot.parked = r
	return true
}
