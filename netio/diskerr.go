package netio

import (
	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/replproto"
)

// SetDiskError makes a primary refuse write commands (and PING, as Redis
// does) with msg, a MISCONF error; "" lifts it.
func (s *Server) SetDiskError(msg string) {
	if msg == "" {
		s.diskErr.Store(nil)
		return
	}
	s.diskErr.Store(&msg)
}

// diskCheck is the MISCONF refusal for spec while persisting fails: write
// commands, PING, and EXEC of a transaction with a write.
func (s *Server) diskCheck(cl *client, spec *command.Spec) string {
	p := s.diskErr.Load()
	if p == nil || s.replGate.Load()&replproto.GateReplica != 0 {
		return ""
	}
	if spec.Write() || spec.Name == "ping" || (spec.Name == "exec" && cl.multi && cl.txWrites()) {
		return *p
	}
	return ""
}
