package repl

import (
	"strconv"
	"time"
)

// FAILOVER (standalone): a primary hands its role to one of its replicas
// as Redis 7.0 does. It pauses client writes, waits (waiting-for-sync)
// until the target replica (or, without TO, any replica) has acknowledged
// every write, then (failover-in-progress) becomes a replica of it with a
// PSYNC that carries FAILOVER: the target, seeing its own primary's
// replication id, promotes itself and continues from the old primary's
// offsets. The failover ends when that PSYNC is accepted; it is aborted
// (the node stays or becomes a primary again, writes resume) by FAILOVER
// ABORT, by the timeout without FORCE, or when the target refuses.

const (
	foNone = iota
	foWaitSync
	foInProgress
)

type failover struct {
	state int
	host  string // "" until a replica is chosen (FAILOVER without TO)
	port  int
	force bool
	end   time.Time // zero: no timeout
	stop  chan struct{}
	link  *link // the link to the target, once in progress
}

// FailoverState is INFO's master_failover_state.
func (m *Manager) FailoverState() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch m.fo.state {
	case foWaitSync:
		return "waiting-for-sync"
	case foInProgress:
		return "failover-in-progress"
	}
	return "no-failover"
}

// failingOver reports (under mu) whether a failover is under way.
func (m *Manager) failingOver() bool { return m.fo.state != foNone }

// Failover starts FAILOVER [TO host port [FORCE]] [TIMEOUT ms]; it returns
// Redis's error text, or "" once the failover is under way.
func (m *Manager) Failover(host string, port int, force bool, timeout time.Duration) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.fo.state != foNone:
		return "ERR FAILOVER already in progress."
	case m.link != nil:
		return "ERR FAILOVER is not valid when server is a replica."
	case len(m.feeds) == 0:
		return "ERR FAILOVER requires connected replicas."
	case force && (timeout == 0 || host == ""):
		return "ERR FAILOVER with force option requires both a timeout and target HOST and IP."
	}
	if host != "" {
		f := m.findFeed(host, port)
		if f == nil {
			return "ERR FAILOVER target HOST and PORT is not a replica."
		}
		if f.state.Load() != feedOnline {
			return "ERR FAILOVER target replica is not online."
		}
		m.log.Info().Msg("FAILOVER requested to " + host + ":" + strconv.Itoa(port) + ".")
	} else {
		m.log.Info().Msg("FAILOVER requested to any replica.")
	}
	m.fo = failover{state: foWaitSync, host: host, port: port, force: force, stop: make(chan struct{})}
	if timeout > 0 {
		m.fo.end = time.Now().Add(timeout)
	}
	stop := m.fo.stop
	settled := make(chan struct{})
	if m.pauseWrites != nil {
		m.pauseWrites(func() { close(settled) })
	} else {
		close(settled)
	}
	go m.runFailover(stop, settled)
	return ""
}

// AbortFailover is FAILOVER ABORT.
func (m *Manager) AbortFailover() string {
	m.mu.Lock()
	if m.fo.state == foNone {
		m.mu.Unlock()
		return "ERR No failover in progress."
	}
	m.mu.Unlock()
	m.abortFailover("Failover manually aborted")
	return ""
}

// findFeed is the online or syncing replica announced at host:port (mu
// held).
func (m *Manager) findFeed(host string, port int) *feed {
	for _, f := range m.feeds {
		if f.ip == host && f.port == port {
			return f
		}
	}
	return nil
}

// runFailover drives waiting-for-sync: every 10 ms (after the write pause
// has settled the offsets) it asks the replicas for their offsets and
// starts the hand-off to the first that has them all, or handles the
// timeout.
func (m *Manager) runFailover(stop, settled chan struct{}) {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	select {
	case <-stop:
		return
	case <-settled:
	}
	for {
		own := m.shards.Offsets()
		feeds := m.sortedFeeds()
		m.mu.Lock()
		if m.fo.stop != stop || m.fo.state != foWaitSync {
			m.mu.Unlock()
			return
		}
		fo := &m.fo
		if !fo.end.IsZero() && !time.Now().Before(fo.end) {
			if fo.force {
				m.log.Info().Msg("FAILOVER to " + fo.host + ":" + strconv.Itoa(fo.port) +
					" time out exceeded, failing over.")
				m.mu.Unlock()
				m.handOff(stop)
				return
			}
			m.mu.Unlock()
			m.abortFailover("Replica never caught up before timeout")
			return
		}
		var target *feed
		if fo.host != "" {
			if f := m.findFeed(fo.host, fo.port); f != nil && equalVec(f.ackedVec(), own) {
				target = f
			}
		} else {
			for _, f := range feeds {
				if equalVec(f.ackedVec(), own) {
					target = f
					fo.host, fo.port = f.ip, f.port
					break
				}
			}
		}
		m.mu.Unlock()
		if target != nil {
			m.log.Info().Msg("Failover target " + target.ip + ":" + strconv.Itoa(target.port) +
				" is synced, failing over.")
			m.handOff(stop)
			return
		}
		for _, f := range feeds {
			f.send(frameGetAck, nil)
		}
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

// handOff enters failover-in-progress: the node becomes a replica of the
// target, its PSYNC carrying FAILOVER (link.session).
func (m *Manager) handOff(stop chan struct{}) {
	m.mu.Lock()
	if m.fo.stop != stop {
		m.mu.Unlock()
		return
	}
	m.fo.state = foInProgress
	host, port := m.fo.host, m.fo.port
	m.mu.Unlock()
	m.startReplicaOf(host, port, true)
}

// failoverPSync reports whether l's PSYNC must carry FAILOVER.
func (m *Manager) failoverPSync(l *link) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.fo.state == foInProgress && m.fo.link == l
}

// failoverResult ends the failover after l's PSYNC FAILOVER: accepted
// (the target is the primary now) or refused (abort: primary again).
func (m *Manager) failoverResult(l *link, err error) {
	m.mu.Lock()
	if m.fo.state != foInProgress || m.fo.link != l {
		m.mu.Unlock()
		return
	}
	if err != nil {
		m.mu.Unlock()
		m.abortFailover("Failover target rejected psync request")
		return
	}
	m.clearFailover()
	m.mu.Unlock()
}

// clearFailover resets the state and lifts the write pause (mu held).
func (m *Manager) clearFailover() {
	if m.fo.stop != nil {
		close(m.fo.stop)
	}
	m.fo = failover{}
	if m.unpauseWrites != nil {
		m.unpauseWrites()
	}
}

// abortFailover ends a failover that did not complete: in progress, the
// node stops replicating from the target and is a primary again.
func (m *Manager) abortFailover(why string) {
	m.mu.Lock()
	if m.fo.state == foNone {
		m.mu.Unlock()
		return
	}
	target := "any replica"
	if m.fo.host != "" {
		target = m.fo.host + ":" + strconv.Itoa(m.fo.port)
	}
	m.log.Info().Msg("FAILOVER to " + target + " aborted: " + why)
	inProgress := m.fo.state == foInProgress
	m.clearFailover()
	m.mu.Unlock()
	if inProgress {
		m.BecomePrimary()
	}
}

func equalVec(a, b []int64) bool {
	if len(a) != len(b) || len(a) == 0 {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
