package netio

import "github.com/slotd/slotd/netio/command"

// registerContainers registers the CLUSTER container. Its subcommands come
// from two layers, added after netio's Register: the cluster actor's table
// (actors/cluster, through AddClusterSubcommand) and actors/engine/keycmd
// (COUNTKEYSINSLOT, GETKEYSINSLOT, which read a slot's keys).
func registerContainers() {
	command.Register(&command.Spec{Name: "cluster", Arity: -2, Categories: []string{"slow"}, Group: "cluster",
		Since: "3.0.0", Summary: "A container for cluster commands", Subcommands: map[string]*command.Spec{}})
}
