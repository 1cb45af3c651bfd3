package netio

// Extensions are the per-node services that loop commands implemented
// outside this package need (netio/scriptcmd's script cache, netio/funccmd's
// function libraries): the wiring sets them before serving, each command
// package gets its own back by its private key. Set before Serve only.
func (s *Server) SetExt(key, value any) {
	if s.ext.vals == nil {
		s.ext.vals = map[any]any{}
	}
	s.ext.vals[key] = value
}

// Ext returns the extension set under key (nil if none).
func (s *Server) Ext(key any) any { return s.ext.vals[key] }
