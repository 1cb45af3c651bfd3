package engine

import (
	"sync"

	"github.com/slotd/slotd/netio/command"
)

// Handler executes a shard command. It writes exactly one reply to c.W
// (fanout handlers leave c.Cmd.Result instead).
type Handler func(c *Call)

// The engine's command implementations, by spec ID. The command packages
// fill it through Handle from their Register functions, which the wiring
// calls before a node runs; it is read-only from then on.
var (
	handlersMu sync.Mutex
	handlers   []Handler
)

// Handle binds h as the implementation of the shard or fanout command s
// and returns s (for registering it with command.Register).
func Handle(s *command.Spec, h Handler) *command.Spec {
	id := command.Bind(s)
	handlersMu.Lock()
	defer handlersMu.Unlock()
	if id >= len(handlers) {
		handlers = append(handlers, make([]Handler, id+1-len(handlers))...)
	}
	handlers[id] = h
	return s
}

// handlerOf is spec's implementation (nil if it has none).
func handlerOf(s *command.Spec) Handler {
	if s.ID < len(handlers) {
		return handlers[s.ID]
	}
	return nil
}
