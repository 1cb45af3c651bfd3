package netio

import (
	"context"
	"time"
)

// idleCron closes the clients idle for longer than `timeout` seconds, as
// Redis's clientsCronHandleTimeout: no command read from them (a command
// half sent counts as idle: only reads move lastIO) for more than that
// many whole seconds. Replicas, MONITOR and pub/sub clients, blocked
// clients (a blocking command, a client pause) and clients whose commands
// are still running are never closed for it. CONFIG SET timeout applies
// at the next check.
func (s *Server) idleCron() {
	s.every(100*time.Millisecond, func() {
		limit := s.Cfg.Int("timeout")
		if limit <= 0 {
			return
		}
		now := time.Now().UnixMilli() / 1000
		s.clientMu.Lock()
		for _, cl := range s.clients {
			if now-cl.lastIO.Load()/1000 <= limit ||
				cl.hasFlag(clientFlagReplica|clientFlagMaster|clientFlagPubSub|clientFlagBlocked) {
				continue
			}
			_ = cl.loop.Execute(context.Background(), idleCheck{cl: cl, limit: limit})
		}
		s.clientMu.Unlock()
	})
}

// idleCheck closes an idle client on its event loop, where the state of
// its commands can be read.
type idleCheck struct {
	cl    *client
	limit int64
}

func (c idleCheck) Run(context.Context) error {
	cl := c.cl
	if cl.closed || cl.closing || cl.conn == nil {
		return nil
	}
	if time.Now().UnixMilli()/1000-cl.lastIO.Load()/1000 <= c.limit {
		return nil // it sent something meanwhile
	}
	if len(cl.queue) > 0 || cl.paused || cl.blockedBatch != nil || cl.parked || cl.loadHeld ||
		(cl.rs != nil && cl.rs.feed != nil) || cl.srv.isMonitor(cl) {
		return nil
	}
	cl.srv.Log.Debug().Str("client", cl.addr).Msg("Closing idle client")
	cl.closing = true
	_ = cl.conn.Close()
	return nil
}

// isMonitor reports whether cl ran MONITOR.
func (s *Server) isMonitor(cl *client) bool {
	m := &s.mon
	if m.n.Load() == 0 {
		return false
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, c := range m.list {
		if c == cl {
			return true
		}
	}
	return false
}
