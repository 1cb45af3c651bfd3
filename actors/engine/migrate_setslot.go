package engine

// StreamAdmin puts a slot-less record (a primary's CLUSTER SETSLOT, which
// its replicas apply before the primary does, as in Valkey 8) in shard i's
// replication stream, after everything the shard streamed so far, then
// calls done on the shard's goroutine: true if the record was streamed,
// false if the shard streams nothing (no replica, or a replica itself).
// The record stays out of the AOF: it is cluster configuration, which
// nodes.conf keeps.
func (s *Shard) StreamAdmin(args [][]byte) bool {
	if !s.Streaming() {
		return false
	}
	s.publish()
	r := &s.repl
	r.record(-1, args)
	r.aofMark = len(r.pending)
	s.publish()
	return true
}
