package shard

import (
	"github.com/slotd/slotd/netio/batch"
)

// Joint steps: batches for several shards that run as one atomic step.
//
// A standalone node's multi-key command, transaction or keyless write whose
// keys live in several shard actors must look atomic to every other
// client, as in Redis. The read's batches for those shards travel together
// as a joint; its involved shards are taken one after the other in
// ascending index order, each in its own turn: a taken shard holds every
// later message, in arrival order, and passes the joint on to the next
// one. The last one, holding its own turn, runs every batch of the joint
// (no other goroutine touches a taken shard's state) and hands the others
// back, which replay what they held.
//
// Shards are always taken lowest index first and a shard waits for nothing
// while it is taken (it only queues), so two joints can never wait for each
// other in a cycle: no deadlock by construction. Batches for one shard
// still go to that actor alone, with no extra hop or lock.

// joint is one read's batches for several shards.
type joint struct {
	shards  []int // ascending
	batches []*batch.Batch
	next    int // position in shards of the shard to take next
}

type (
	// jointTake asks a shard to join a joint.
	jointTake struct{ j *joint }
	// jointRelease hands a taken shard back.
	jointRelease struct{}
)

// jointState is an actor's part in a joint.
type jointState struct {
	taken   bool  // the actor's state is lent to a joint
	pending []any // messages held meanwhile
}

// SendJoint hands bs[k] to shard shards[k] for every k, as one atomic step
// (shards ascending, at least two). The batches must not be touched until
// their Completers are called.
func (g *Group) SendJoint(shards []int, bs []*batch.Batch) {
	for _, b := range bs {
		b.Seal()
	}
	j := &joint{shards: shards, batches: bs}
	g.root.Send(g.actors[shards[0]].pid, jointTake{j: j})
}

// holdWhileTaken keeps every message while the actor is part of a joint,
// a MIGRATE's completion included (the joint's last shard may still be
// ending this shard's turn), and replays them when it is handed back. It
// reports whether it took msg.
func (a *Actor) holdWhileTaken(msg any) bool {
	js := &a.joint
	if !js.taken {
		return false
	}
	if _, ok := msg.(jointRelease); !ok {
		js.pending = append(js.pending, msg)
		return true
	}
	js.taken = false
	held := js.pending
	js.pending = nil
	for _, p := range held {
		// A joint taken again meanwhile keeps the rest, in order.
		a.handle(p)
	}
	return true
}

// holdForJoint runs a joint's step; it reports whether msg was one. It
// comes after the MIGRATE and script holds: a shard joins a joint only
// between them.
func (a *Actor) holdForJoint(msg any) bool {
	if m, ok := msg.(jointTake); ok {
		a.takeJoint(m.j)
		return true
	}
	return false
}

// takeJoint makes this shard part of j: it passes j on, or runs it when
// this shard is the last one to take.
func (a *Actor) takeJoint(j *joint) {
	j.next++
	if j.next < len(j.shards) {
		a.joint.taken = true
		a.g.root.Send(a.g.actors[j.shards[j.next]].pid, jointTake{j: j})
		return
	}
	t := now()
	for k, i := range j.shards {
		a.g.actors[i].eng.Run(j.batches[k], t)
	}
	// A spread command of a later batch may have written an earlier
	// shard's keys (engine/spread.go): its turn ends after every batch.
	for _, i := range j.shards {
		if i != a.id {
			a.g.actors[i].eng.EndTurn()
		}
	}
	for _, i := range j.shards {
		if i != a.id {
			a.g.root.Send(a.g.actors[i].pid, jointRelease{})
		}
	}
}
