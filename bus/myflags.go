package bus

// updateMyselfFlags keeps myself's nofailover flag equal to
// cluster-replica-no-failover (Redis's clusterUpdateMyselfFlags): the flag
// travels in every frame's header, so peers show it in CLUSTER NODES, and
// it is saved with the node table.
func (s *State) updateMyselfFlags() {
	me := s.myself
	if me == nil {
		return
	}
	want := Flags(0)
	if s.opts.ReplicaNoFailover {
		want = FlagNoFailover
	}
	if me.Flags&FlagNoFailover != want {
		me.Flags = me.Flags&^FlagNoFailover | want
		s.fx.Save = true
		s.fx.Publish = true
	}
}
