package command

// The CLUSTER container is registered here, in the package every command
// implementation imports, because its subcommands come from two packages:
// netio (the configuration subcommands, served by the cluster actor) and
// actors/shard (COUNTKEYSINSLOT, GETKEYSINSLOT, which read a slot's keys).
// Package initialisation runs this before either, so both can simply call
// AddSubcommand("cluster", ...) from their init functions.
func init() {
	Register(&Spec{Name: "cluster", Arity: -2, Categories: []string{"slow"}, Group: "cluster", Since: "3.0.0",
		Summary: "A container for cluster commands", Subcommands: map[string]*Spec{}})
}
