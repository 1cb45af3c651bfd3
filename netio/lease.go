package netio

import "time"

// The write lease of a cluster primary (bus.State.WriteLease): until when
// the node may serve its slots on the evidence that a majority of the
// primaries still answers it. Past it, a command for a slot served here is
// refused as in the fail state (-CLUSTERDOWN), before the cluster actor's
// next Tick publishes that state — in particular at once when a stalled
// process (SIGSTOP, a long pause) resumes.

// SetWriteLease sets the lease (unix ms; 0: none). Safe from any goroutine.
func (s *Server) SetWriteLease(unixMs int64) { s.writeLease.Store(unixMs) }

// leaseExpired reports whether the lease has run out.
func (s *Server) leaseExpired() bool {
	l := s.writeLease.Load()
	return l != 0 && time.Now().UnixMilli() > l
}
