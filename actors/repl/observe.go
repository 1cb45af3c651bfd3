package repl

import "time"

// Replica is one connected replica as the primary sees it (INFO
// replication's slaveN lines, for the metrics endpoint).
type Replica struct {
	IP   string
	Port int
	// Online is false while the replica still receives its snapshot.
	Online bool
	// Offset is the sum of the shard offsets the replica acknowledged.
	Offset int64
	// AckAge is the time since its last acknowledgement.
	AckAge time.Duration
}

// Replicas lists the replicas connected to this node, in INFO order.
func (m *Manager) Replicas() []Replica {
	now := time.Now().UnixMilli()
	feeds := m.sortedFeeds()
	out := make([]Replica, 0, len(feeds))
	for _, f := range feeds {
		out = append(out, Replica{IP: f.ip, Port: f.port, Online: f.state.Load() != feedSync,
			Offset: sum(f.ackedVec()), AckAge: time.Duration(now-f.ackAt.Load()) * time.Millisecond})
	}
	return out
}
