package netio

import (
	"runtime/debug"

	"github.com/panjf2000/gnet/v2"
)

// Crash containment on the event loops (the shards' is actors/engine's
// contain.go). A loop command's handler runs under a recover (callLoop):
// a panic replaces the command's partial reply with
// "-ERR internal error executing '<name>'" and the connection goes on with
// its next command. A panic anywhere else in a read's handling (parsing,
// dispatch, writing replies) closes that connection only: its state is not
// known any more, the node and the other clients go on. Each panic is
// logged once with its stack and counted in INFO stats contained_panics
// (with the shards').

// callLoop runs a loop command's handler, containing a panic.
func (s *Server) callLoop(h LoopHandler, x *Ctx) (ok bool) {
	mark := len(x.W.B)
	defer func() {
		if ok {
			return
		}
		if p := recover(); p != nil {
			s.stats.panics.Add(1)
			s.Log.Error().Str("command", x.Spec.Name).Str("client", x.C.addr).Interface("panic", p).
				Str("stack", string(debug.Stack())).Msg("command panicked: contained, the client got an error")
			if !x.deferred && !x.noReply {
				// A handler that deferred its reply or wrote its own order
				// entry (EXEC) answers through them.
				x.W.B = x.W.B[:mark]
				x.W.Error("ERR internal error executing '" + x.Spec.Name + "'")
			}
		}
	}()
	h(x)
	return true
}

// trafficPanicked handles a panic of OnTraffic outside a loop command: the
// connection is closed.
func (s *Server) trafficPanicked(c gnet.Conn, p any, stack []byte) gnet.Action {
	s.stats.panics.Add(1)
	addr := ""
	if cl, ok := c.Context().(*client); ok {
		addr = cl.addr
		if cl.inDispatch != nil {
			cl.inDispatch.Add(-1)
			cl.inDispatch = nil
		}
		cl.closing = true
	}
	s.Log.Error().Str("client", addr).Interface("panic", p).Str("stack", string(stack)).
		Msg("client I/O panicked: contained, the connection is closed")
	return gnet.Close
}

// Panics is the number of panics contained on the event loops and in the
// shards (INFO stats contained_panics).
func (s *Server) Panics() int64 { return s.stats.panics.Load() + s.shards.Panics() }
