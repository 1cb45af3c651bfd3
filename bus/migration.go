package bus

// Replica migration ("Replica migration" in the specification): when a
// primary serving slots is left without a working replica (an orphan) and
// it is supposed to have some (it had replicas, or took over from a primary
// that had), one replica moves to it from a primary with the most working
// replicas — the replica with the smallest id among those primaries'
// replicas — provided its own primary keeps more than
// cluster-migration-barrier working replicas and the cluster is ok. The
// target must be orphaned for migrationDelay first, so that the replicas of
// a failed-over primary have time to announce their new primary. Two
// replicas migrating at once is possible but harmless.

// migrationDelay is how long a primary must be orphaned before a replica
// migrates to it (ms).
const migrationDelay = 5000

// workingReplicas counts m's replicas that are not FAIL.
func (s *State) workingReplicas(m *Node) int {
	c := 0
	for _, n := range s.replicas(m) {
		if !n.Failed() {
			c++
		}
	}
	return c
}

// checkReplicaMigration is the part of Redis's clusterCron that looks for
// orphaned primaries, then clusterHandleSlaveMigration.
func (s *State) checkReplicaMigration(now int64) {
	me := s.myself
	if !me.IsReplica() {
		return
	}
	orphans, most, mine := 0, 0, 0
	for _, n := range s.sorted {
		if n == me || n.Flags&(FlagNoAddr|FlagHandshake) != 0 || !n.IsMaster() || n.Failed() {
			continue
		}
		ok := s.workingReplicas(n)
		if ok == 0 && n.numSlots > 0 && n.migrateTo {
			orphans++
		}
		most = max(most, ok)
		if me.MasterID == n.ID {
			mine = ok
		}
	}
	if orphans > 0 && most >= 2 && mine == most && s.opts.AllowReplicaMigration {
		s.migrateReplica(now, most)
	}
}

// migrateReplica moves myself to an orphaned primary if I am the acting
// replica.
func (s *State) migrateReplica(now int64, most int) {
	me := s.myself
	mine := s.master(me)
	if !s.ok || mine == nil {
		return
	}
	ok := 0
	for _, n := range s.replicas(mine) {
		if n.Flags&(FlagFail|FlagPFail) == 0 {
			ok++
		}
	}
	if ok <= s.opts.MigrationBarrier {
		return
	}
	var target *Node
	candidate := me
	for _, n := range s.sorted {
		working := 0
		if n.IsMaster() {
			working = s.workingReplicas(n)
		}
		orphaned := n.IsMaster() && !n.Failed() && n.migrateTo && working == 0
		if orphaned {
			if target == nil && n.numSlots > 0 {
				target = n
			}
			if n.orphanedTime == 0 {
				n.orphanedTime = now
			}
		} else {
			n.orphanedTime = 0
		}
		if working == most {
			for _, r := range s.replicas(n) {
				if r.ID < candidate.ID {
					candidate = r
				}
			}
		}
	}
	if target != nil && candidate == me && now-target.orphanedTime > migrationDelay {
		s.setMyMaster(target)
	}
}
