package netio

import "strconv"

// Keyspace notifications: the shards record the events of their commands
// (actors/engine notify.go) and hand them here, in execution order, on the
// shard's goroutine. They go to this node's subscribers only, never over
// the cluster bus (Redis 7.0 publishes keyspace events locally in cluster
// mode too).

// KeyspaceNotifier is what the shards call to publish keyspace events (the
// wiring hands it to them).
func (s *Server) KeyspaceNotifier() interface {
	KeyspaceEvent(db int, event string, key []byte, keyspace, keyevent bool)
} {
	return (*keyspaceNotifier)(s)
}

type keyspaceNotifier Server

// KeyspaceEvent publishes event on __keyspace@<db>__:<key> (message: the
// event) and __keyevent@<db>__:<event> (message: the key) as enabled.
func (n *keyspaceNotifier) KeyspaceEvent(db int, event string, key []byte, keyspace, keyevent bool) {
	s := (*Server)(n)
	if !s.anySubscriber() {
		return
	}
	var buf [128]byte
	if keyspace {
		ch := append(buf[:0], "__keyspace@"...)
		ch = strconv.AppendInt(ch, int64(db), 10)
		ch = append(ch, "__:"...)
		ch = append(ch, key...)
		s.publishLocal(psChannel, ch, []byte(event), nil)
	}
	if keyevent {
		ch := append(buf[:0], "__keyevent@"...)
		ch = strconv.AppendInt(ch, int64(db), 10)
		ch = append(ch, "__:"...)
		ch = append(ch, event...)
		s.publishLocal(psChannel, ch, key, nil)
	}
}

// anySubscriber reports whether any channel or pattern has a subscriber.
func (s *Server) anySubscriber() bool {
	r := &s.ps
	r.mu.RLock()
	any := len(r.subs[psChannel]) > 0 || len(r.subs[psPattern]) > 0
	r.mu.RUnlock()
	return any
}
