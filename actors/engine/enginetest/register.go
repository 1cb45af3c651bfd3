package enginetest

import (
	"sync"

	"github.com/slotd/slotd/actors/engine/commands"
	"github.com/slotd/slotd/netio/command"
)

var registerOnce sync.Once

// Register fills the command table with the engine's commands
// (actors/engine/commands), plus what the event loop would have registered
// that they and a Client need: the CLUSTER container and the event-loop
// commands a Client answers, each only where the table does not have it
// yet. A process that also runs
// nodes calls the node's registration first; Register then adds nothing.
func Register() {
	registerOnce.Do(func() {
		for _, s := range []*command.Spec{
			{Name: "cluster", Arity: -2, Subcommands: map[string]*command.Spec{}},
			{Name: "ping", Arity: -1},
			{Name: "echo", Arity: 2},
			{Name: "select", Arity: 2},
			{Name: "multi", Arity: 1, TxControl: true},
			{Name: "exec", Arity: 1, TxControl: true},
			{Name: "discard", Arity: 1, TxControl: true},
			{Name: "unwatch", Arity: 1},
		} {
			if command.Lookup([]byte(s.Name)) == nil {
				command.Register(s)
			}
		}
		commands.Register()
	})
}

// Serves reports whether a Client executes the command name (any case):
// one of the engine's, a container whose subcommands include one, or an
// event-loop command answered here. Others are resolved and checked as a
// node does, then refused with an error saying the engine does not serve
// them.
func Serves(name string) bool {
	s := command.Lookup([]byte(name))
	return s != nil && served(s)
}

func served(s *command.Spec) bool {
	if s.Exec == command.Loop {
		if loopCmd(s.Name) != nil {
			return true
		}
		for _, sub := range s.Subcommands {
			if sub.Exec != command.Loop && sub.Parent.Name != "cluster" {
				return true
			}
		}
		return false
	}
	return s.Bound()
}
