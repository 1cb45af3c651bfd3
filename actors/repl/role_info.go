package repl

import (
	"strconv"
	"time"

	"github.com/slotd/slotd/netio/resp"
)

// ROLE and INFO replication: what a node reports of its replication state.

// Role implements replproto.Replication.
func (m *Manager) Role(w *resp.Writer) {
	m.mu.Lock()
	l := m.link
	m.mu.Unlock()
	if l != nil {
		w.Array(5)
		w.BulkString("slave")
		w.BulkString(l.host)
		w.Int(int64(l.port))
		w.BulkString(l.stateName())
		if l.state.Load() == linkConnected {
			w.Int(sum(l.appliedVec()))
		} else {
			w.Int(-1)
		}
		return
	}
	feeds := m.sortedFeeds()
	w.Array(3)
	w.BulkString("master")
	w.Int(sum(m.shards.Offsets()))
	// Like Redis, ROLE lists the replicas that are online.
	n := 0
	for _, f := range feeds {
		if f.state.Load() == feedOnline {
			n++
		}
	}
	w.Array(n)
	for _, f := range feeds {
		if f.state.Load() != feedOnline {
			continue
		}
		w.Array(3)
		w.BulkString(f.ip)
		w.BulkString(itoa(f.port))
		w.BulkString(strconv.FormatInt(sum(f.ackedVec()), 10))
	}
}

// Info implements replproto.Replication: the fields of INFO replication.
func (m *Manager) Info() [][2]string {
	var out [][2]string
	add := func(k, v string) { out = append(out, [2]string{k, v}) }
	addInt := func(k string, v int64) { add(k, strconv.FormatInt(v, 10)) }
	m.mu.Lock()
	l := m.link
	replid, replid2, second := m.replid, m.replid2, m.second
	m.mu.Unlock()
	now := time.Now().UnixMilli()
	if l == nil {
		add("role", "master")
	} else {
		add("role", "slave")
		add("master_host", l.host)
		addInt("master_port", int64(l.port))
		st := l.state.Load()
		if st == linkConnected {
			add("master_link_status", "up")
		} else {
			add("master_link_status", "down")
		}
		if io := l.lastIO.Load(); io > 0 && st >= linkSync {
			addInt("master_last_io_seconds_ago", (now-io)/1000)
		} else {
			addInt("master_last_io_seconds_ago", -1)
		}
		syncing := st == linkSync
		if syncing {
			addInt("master_sync_in_progress", 1)
		} else {
			addInt("master_sync_in_progress", 0)
		}
		addInt("slave_read_repl_offset", sum(l.readVec()))
		addInt("slave_repl_offset", sum(l.appliedVec()))
		if syncing {
			addInt("master_sync_total_bytes", -1)
			addInt("master_sync_read_bytes", l.syncRead.Load())
			addInt("master_sync_left_bytes", -1)
			add("master_sync_perc", "0.00")
			addInt("master_sync_last_io_seconds_ago", (now-l.lastIO.Load())/1000)
		}
		if st != linkConnected {
			if d := l.downSince.Load(); d > 0 {
				addInt("master_link_down_since_seconds", (now-d)/1000)
			} else {
				addInt("master_link_down_since_seconds", -1)
			}
		}
		addInt("slave_priority", m.cfg.Int("replica-priority"))
		addInt("slave_read_only", boolInt(m.cfg.Bool("replica-read-only")))
		addInt("replica_announced", boolInt(m.cfg.Bool("replica-announced")))
	}
	feeds := m.sortedFeeds()
	addInt("connected_slaves", int64(len(feeds)))
	for i, f := range feeds {
		state := "online"
		if f.state.Load() == feedSync {
			state = "send_bulk"
		}
		lag := (now - f.ackAt.Load()) / 1000
		add("slave"+itoa(i), "ip="+f.ip+",port="+itoa(f.port)+",state="+state+",offset="+
			strconv.FormatInt(sum(f.ackedVec()), 10)+",lag="+strconv.FormatInt(lag, 10))
	}
	add("master_failover_state", m.FailoverState())
	add("master_replid", replid)
	add("master_replid2", replid2)
	offs := m.shards.Offsets()
	addInt("master_repl_offset", sum(offs))
	if second != nil {
		addInt("second_repl_offset", sum(second)+1)
	} else {
		addInt("second_repl_offset", -1)
	}
	on := m.shards.StreamsOn()
	addInt("repl_backlog_active", boolInt(on))
	addInt("repl_backlog_size", m.cfg.Int("repl-backlog-size"))
	first, hist := m.shards.BacklogStats()
	if on {
		addInt("repl_backlog_first_byte_offset", first+1)
	} else {
		addInt("repl_backlog_first_byte_offset", 0)
	}
	addInt("repl_backlog_histlen", hist)
	return out
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// ReplID is the node's replication id.
func (m *Manager) ReplID() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.replid
}

// Role names of the link state (ROLE).
func (l *link) stateName() string {
	switch l.state.Load() {
	case linkConnecting:
		return "connecting"
	case linkHandshake:
		return "handshake"
	case linkSync:
		return "sync"
	case linkConnected:
		return "connected"
	}
	return "connect"
}
