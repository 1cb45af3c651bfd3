package repl

import (
	"time"
)

// Pushed offsets for a manual failover: the replica must know the moment
// it has applied everything its paused primary produced. The link tells
// waiters each time it hands records to the shards (progress), and a
// waiter that sees the target reached runs a barrier through the shards,
// so the offset it reports is applied, not merely read. Nothing polls.

// WhenApplied calls done, from another goroutine, with the replica's
// applied offset as soon as it has applied its primary's stream up to
// target (the sum of the per-shard offsets, as ReplOffset), while the link
// is in sync. It gives up silently at until, when the link is replaced or
// on a primary.
func (m *Manager) WhenApplied(target int64, until time.Time, done func(offset int64)) {
	m.mu.Lock()
	l := m.link
	m.mu.Unlock()
	if l == nil {
		return
	}
	go l.whenApplied(target, until, done)
}

func (l *link) whenApplied(target int64, until time.Time, done func(int64)) {
	timer := time.NewTimer(time.Until(until))
	defer timer.Stop()
	for {
		l.mu.Lock()
		vec := append([]int64(nil), l.read...)
		synced := l.synced
		ch := l.progress
		if ch == nil {
			ch = make(chan struct{})
			l.progress = ch
		}
		l.mu.Unlock()
		if synced && l.state.Load() == linkConnected && sum(vec) >= target {
			applied := make(chan struct{})
			l.m.shards.Barrier(func() { close(applied) })
			select {
			case <-applied:
			case <-l.stopc:
				return
			}
			l.mu.Lock()
			if sum(vec) > sum(l.applied) {
				l.applied = vec
			}
			l.mu.Unlock()
			done(sum(vec))
			return
		}
		select {
		case <-ch:
		case <-timer.C:
			return
		case <-l.stopc:
			return
		}
	}
}

// progressed wakes the waiters of WhenApplied (called with l.mu held,
// after read advanced or the link's state changed).
func (l *link) progressed() {
	if l.progress != nil {
		close(l.progress)
		l.progress = nil
	}
}
