package bus

// Replicate is CLUSTER REPLICATE id: make myself a replica of primary id.
// A primary must serve no slots and hold no keys (dbEmpty). The Replicate
// effect tells the replication layer to follow the new primary.
func (s *State) Replicate(now int64, id string, dbEmpty bool) error {
	s.tick(now)
	n := s.nodes[id]
	me := s.myself
	switch {
	case n == nil:
		return Error("ERR Unknown node " + id)
	case n == me:
		return Error("ERR Can't replicate myself")
	case n.IsReplica():
		return Error("ERR I can only replicate a master, not a replica.")
	case me.IsMaster() && (me.numSlots != 0 || !dbEmpty):
		return Error("ERR To set a master the node must be empty and without assigned slots.")
	}
	s.setMyMaster(n)
	return nil
}
