package netio

import "github.com/slotd/slotd/netio/command"

// registerContainers registers the CLUSTER container. Its subcommands come
// from two layers: netio (the configuration subcommands, served by the
// cluster actor) and actors/engine/keycmd (COUNTKEYSINSLOT, GETKEYSINSLOT,
// which read a slot's keys), which adds them after netio's Register.
func registerContainers() {
	command.Register(&command.Spec{Name: "cluster", Arity: -2, Categories: []string{"slow"}, Group: "cluster",
		Since: "3.0.0", Summary: "A container for cluster commands", Subcommands: map[string]*command.Spec{}})
}
