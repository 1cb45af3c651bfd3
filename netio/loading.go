package netio

// While a replica loads a full sync, Redis's main thread is busy loading
// and serves clients only at its events points, once every
// loading-process-events-interval-bytes loaded: a command that arrives
// meanwhile waits, and gets LOADING at the next events point, or runs
// normally if the load ends first (a small load is never seen as loading
// by a client). The loader calls LoadEvents at each such point; a command
// that would get LOADING is left unparsed in its connection's input until
// then (like a client pause), and the connection is woken.

import (
	"github.com/panjf2000/gnet/v2"

	"github.com/slotd/slotd/netio/replproto"
)

// LoadEvents marks an events point of the load in progress: the commands
// held since the previous one get LOADING now.
func (s *Server) LoadEvents() {
	s.loadGen.Add(1)
	s.wakeLoadHeld()
}

// loadHolds reports whether cl's command, refused with LOADING, waits
// for the next events point instead of being answered now.
func (s *Server) loadHolds(cl *client) bool {
	gen := s.loadGen.Load()
	if !cl.loadHeld {
		cl.loadHeld, cl.loadSeen = true, gen
	}
	if gen != cl.loadSeen {
		return false // an events point passed while it waited: LOADING
	}
	cl.loadWait = true
	return true
}

// holdForLoad parks c until the next events point or the end of the load.
func (s *Server) holdForLoad(c gnet.Conn, cl *client) {
	s.loadMu.Lock()
	s.loadHeldConns = append(s.loadHeldConns, c)
	s.loadMu.Unlock()
	// The load may have ended, or an events point passed, meanwhile.
	if s.replGate.Load()&replproto.GateLoading == 0 || s.loadGen.Load() != cl.loadSeen {
		s.wakeLoadHeld()
	}
}

// wakeLoadHeld wakes every parked connection; they dispatch again.
func (s *Server) wakeLoadHeld() { wakeAll(&s.loadMu, &s.loadHeldConns) }
