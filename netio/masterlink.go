package netio

import (
	"sync"
	"time"

	"github.com/slotd/slotd/netio/replproto"
)

// A replica's link to its primary is a connection slotd opens itself (in
// the replication engine), not one gnet accepted; Redis lists it among its
// clients as the master client (flags=M), and CLIENT KILL of its address
// or of TYPE master closes it, after which the replica reconnects. A
// masterLink gives that link a place in CLIENT LIST and CLIENT KILL.

// masterLink is a registered link to the primary (replproto.MasterLink).
type masterLink struct {
	s  *Server
	cl *client
}

// link is a registered link: its client view and how to close it.
type link struct {
	cl    *client
	once  sync.Once
	close func()
}

// AddMasterLink registers the replica's connection to its primary: remote
// and local are its addresses ("ip:port"), closeFn closes it (from any
// goroutine). Remove it when the connection is gone.
func (s *Server) AddMasterLink(remote, local string, closeFn func()) replproto.MasterLink {
	now := time.Now().UnixMilli()
	cl := &client{srv: s, id: s.nextID.Add(1), proto: 2, created: now, addr: remote, laddr: local, fd: -1}
	cl.lastIO.Store(now)
	cl.flags.Store(clientFlagMaster)
	s.clientMu.Lock()
	if s.links == nil {
		s.links = map[int64]*link{}
	}
	s.links[cl.id] = &link{cl: cl, close: closeFn}
	s.clientMu.Unlock()
	return &masterLink{s: s, cl: cl}
}

// Touch records traffic on the link (CLIENT LIST's idle) and the last
// command the primary sent.
func (m *masterLink) Touch(unixMS int64, cmd *string) {
	m.cl.lastIO.Store(unixMS)
	if cmd != nil {
		m.cl.lastCmd.Store(cmd)
	}
}

// Remove takes the link out of CLIENT LIST.
func (m *masterLink) Remove() {
	m.s.clientMu.Lock()
	delete(m.s.links, m.cl.id)
	m.s.clientMu.Unlock()
}

// closeLink closes a link client (CLIENT KILL).
func (s *Server) closeLink(cl *client) {
	s.clientMu.Lock()
	l := s.links[cl.id]
	s.clientMu.Unlock()
	if l != nil {
		l.once.Do(l.close)
	}
}
