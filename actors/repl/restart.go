package repl

// Restart with data. A replica that shuts down cleanly first freezes its
// link (Freeze: nothing more is applied), so its final snapshot is exactly
// the dataset at its replication id and per-shard offsets (FrozenState),
// which the snapshot records. Loaded back (Restore), they are what the
// node offers in its first PSYNC, so it continues with a partial resync
// when the primary's backlog still covers the gap — Redis keeps repl-id
// and repl-offset in the RDB for the same purpose.

// frozenState is what Freeze captured.
type frozenState struct {
	host string
	port int
	ok   bool // the link was in sync: the offsets describe the data
}

// Freeze stops applying the primary's stream before a replica's final
// snapshot and waits until everything received so far is applied. It
// does nothing on a primary. Resume undoes it (the shutdown was aborted).
func (m *Manager) Freeze() {
	m.mu.Lock()
	l := m.link
	m.mu.Unlock()
	if l == nil {
		return
	}
	l.halt()
	wait(m.shards.Barrier)
	l.mu.Lock()
	ok := l.synced && len(l.applied) == m.shards.N()
	l.mu.Unlock()
	m.mu.Lock()
	if m.link == l {
		m.frozen = &frozenState{host: l.host, port: l.port, ok: ok}
	}
	m.mu.Unlock()
}

// Resume restarts the link Freeze stopped.
func (m *Manager) Resume() {
	m.mu.Lock()
	f := m.frozen
	m.frozen = nil
	if f != nil {
		m.link = nil
	}
	m.mu.Unlock()
	if f != nil {
		m.StartReplicaOf(f.host, f.port)
	}
}

// FrozenState is the replication id and per-shard offsets a snapshot
// taken now matches: only after Freeze, on a replica that was in sync.
func (m *Manager) FrozenState() (id string, offsets []int64, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.frozen == nil || !m.frozen.ok {
		return "", nil, false
	}
	return m.replid, m.shards.Offsets(), true
}

// Restore takes over the replication id and offsets a loaded snapshot
// recorded; the next StartReplicaOf offers them to the primary. It must
// run before the node replicates anything, and is ignored when the shard
// count changed (the offsets are per shard).
func (m *Manager) Restore(id string, offsets []int64) bool {
	if len(id) != 40 || len(offsets) != m.shards.N() {
		return false
	}
	m.mu.Lock()
	if m.link != nil {
		m.mu.Unlock()
		return false
	}
	m.replid, m.replid2, m.second = id, zeroID, nil
	m.mu.Unlock()
	wait(func(done func()) { m.shards.ResetStreams(offsets, done) })
	return true
}
