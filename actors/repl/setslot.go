package repl

import (
	"strings"
	"sync"
	"time"
)

// CLUSTER SETSLOT through replication (Valkey 8): a primary streams the
// command to its replicas and runs it only once they acknowledged it; a
// replica hands it to its cluster actor. The record is slot-less and rides
// shard 0's stream, so WAIT's machinery (offsets, REPLCONF GETACK) tells
// when every replica has it.

// setSlotAppliers maps a Manager to the function its replica side hands a
// primary's SETSLOT to (the cluster actor's ApplyReplicated).
var setSlotAppliers sync.Map // *Manager → func(args [][]byte, done func())

// OnSetSlot sets the function a replica hands its primary's CLUSTER SETSLOT
// arguments to; it must call done once the change is in effect.
func (m *Manager) OnSetSlot(fn func(args [][]byte, done func())) { setSlotAppliers.Store(m, fn) }

// ReplicateSetSlot streams CLUSTER SETSLOT args... to the online replicas
// and calls done once each of them acknowledged it or is gone (true), or
// when timeout (0: none) passes first (false). A replica that leaves
// meanwhile no longer counts: with redis-cli 7.0, which sets the new
// owner on the importing node first, the migrating node's replicas follow
// that owner as soon as they hear of it, before they could acknowledge
// the migrating node's own SETSLOT. Without an online replica it returns
// false and never calls done.
func (m *Manager) ReplicateSetSlot(args [][]byte, timeout time.Duration, done func(acked bool)) bool {
	if m.IsReplica() {
		return false
	}
	m.mu.Lock()
	feeds := m.feedList()
	m.mu.Unlock()
	online := map[*feed]bool{}
	for _, f := range feeds {
		if f.state.Load() == feedOnline {
			online[f] = true
		}
	}
	if len(online) == 0 {
		return false
	}
	n := int64(len(online))
	rec := append([][]byte{[]byte("CLUSTER"), []byte("SETSLOT")}, args...)
	m.shards.StreamAdmin(0, rec, func(streamed bool) {
		if !streamed {
			done(false)
			return
		}
		m.startWait(&waiter{n: n, of: online, reply: func(k int64) { done(k >= n) }}, timeout, false)
	})
	return true
}

// applySetSlot runs a slot-less CLUSTER SETSLOT record on a replica and
// waits until the cluster actor applied it, so that the acknowledgement
// covering the record reports it in effect. Other records: false.
func (m *Manager) applySetSlot(args [][]byte) bool {
	if len(args) < 2 || !strings.EqualFold(string(args[0]), "cluster") ||
		!strings.EqualFold(string(args[1]), "setslot") {
		return false
	}
	fn, ok := setSlotAppliers.Load(m)
	if !ok {
		return true
	}
	own := make([][]byte, len(args)-2)
	for i, a := range args[2:] {
		own[i] = append([]byte(nil), a...)
	}
	applied := make(chan struct{})
	fn.(func([][]byte, func()))(own, func() { close(applied) })
	select {
	case <-applied:
	case <-time.After(5 * time.Second):
	}
	return true
}
