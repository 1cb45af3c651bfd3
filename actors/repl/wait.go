package repl

import (
	"sync/atomic"
	"time"
)

// WAIT: a client's wait for its writes to be acknowledged by replicas.

type waiter struct {
	target []int64
	n      int64
	reply  func(int64)
	timer  *time.Timer
	done   bool
	// of, when set, are the replicas this waiter waits for (a SETSLOT's):
	// each counts once it acknowledged target or is gone.
	of map[*feed]bool
}

// Wait implements replproto.Replication.
func (m *Manager) Wait(n int64, timeout time.Duration, noBlock bool, reply func(int64)) func() {
	return m.startWait(&waiter{n: n, reply: reply}, timeout, noBlock)
}

func (m *Manager) startWait(w *waiter, timeout time.Duration, noBlock bool) func() {
	var cancelled atomic.Bool
	m.shards.OffsetsAfter(func(target []int64) {
		w.target = target
		k := m.progress(w)
		if k >= w.n || noBlock || cancelled.Load() {
			if !cancelled.Load() {
				w.reply(k)
			}
			return
		}
		m.mu.Lock()
		m.waiters[w] = struct{}{}
		feeds := m.feedList()
		m.mu.Unlock()
		if timeout > 0 {
			w.timer = time.AfterFunc(timeout, func() { m.finishWaiter(w) })
		}
		for _, f := range feeds {
			if f.state.Load() == feedOnline {
				f.send(frameGetAck, nil)
			}
		}
		m.checkWaiters()
	})
	return func() {
		cancelled.Store(true)
		m.mu.Lock()
		w.done = true
		delete(m.waiters, w)
		m.mu.Unlock()
		if w.timer != nil {
			w.timer.Stop()
		}
	}
}

// countAcked counts online replicas whose acknowledged offsets cover target.
func (m *Manager) countAcked(target []int64) int64 {
	m.mu.Lock()
	feeds := m.feedList()
	m.mu.Unlock()
	var k int64
	for _, f := range feeds {
		if f.state.Load() == feedOnline && covers(f.ackedVec(), target) {
			k++
		}
	}
	return k
}

func (m *Manager) checkWaiters() {
	m.mu.Lock()
	if len(m.waiters) == 0 {
		m.mu.Unlock()
		return
	}
	ws := make([]*waiter, 0, len(m.waiters))
	for w := range m.waiters {
		ws = append(ws, w)
	}
	m.mu.Unlock()
	for _, w := range ws {
		if m.progress(w) >= w.n {
			m.finishWaiter(w)
		}
	}
}

func (m *Manager) finishWaiter(w *waiter) {
	m.mu.Lock()
	if w.done {
		m.mu.Unlock()
		return
	}
	w.done = true
	delete(m.waiters, w)
	m.mu.Unlock()
	if w.timer != nil {
		w.timer.Stop()
	}
	w.reply(m.progress(w))
}

// progress is how many of the replicas a waiter needs are done: those
// that acknowledged its target, or for a waiter on given replicas, those
// of them that acknowledged or left.
func (m *Manager) progress(w *waiter) int64 {
	if w.of == nil {
		return m.countAcked(w.target)
	}
	m.mu.Lock()
	present := map[*feed]bool{}
	for _, f := range m.feeds {
		present[f] = true
	}
	m.mu.Unlock()
	var k int64
	for f := range w.of {
		if !present[f] || f.state.Load() != feedOnline || covers(f.ackedVec(), w.target) {
			k++
		}
	}
	return k
}

// failWaiters answers every WAIT at once (the node stops being a primary).
func (m *Manager) failWaiters() {
	m.mu.Lock()
	ws := make([]*waiter, 0, len(m.waiters))
	for w := range m.waiters {
		ws = append(ws, w)
	}
	m.mu.Unlock()
	for _, w := range ws {
		m.finishWaiter(w)
	}
}
