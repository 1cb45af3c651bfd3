package netio

import (
	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/resp"
)

// CLUSTER's subcommands come from the layers that serve them: the wiring
// adds the cluster actor's table (actors/cluster, through
// AddClusterSubcommand), actors/engine/keycmd adds COUNTKEYSINSLOT and
// GETKEYSINSLOT. The CLUSTER container is registered in containers.go;
// dispatch answers every CLUSTER subcommand with errClusterDisabled when
// cluster mode is off. This file has ASKING and the hook.

const errClusterDisabled = "ERR This instance has cluster support disabled"

func registerCmdCluster() {
	command.Register(Loop(&command.Spec{Name: "asking", Arity: 1, Flags: []string{"fast"},
		Categories: []string{"fast", "connection"}, Group: "cluster", Since: "3.0.0",
		Summary: "Sent by cluster clients after an -ASK redirect"}, cmdAsking))
}

// AddClusterSubcommand adds the CLUSTER subcommand name with the table
// entry spec. local, when not nil, runs it on the event loop (it needs no
// cluster state: KEYSLOT, HELP); otherwise the command is handed to the
// cluster actor (Server.Cluster) and its reply completes when the actor is
// done. Call it after Register.
func AddClusterSubcommand(name string, spec *command.Spec, local func(w *resp.Writer, args [][]byte)) {
	h := clusterSubmit
	if local != nil {
		h = func(x *Ctx) { local(x.W, x.Args) }
	}
	command.AddSubcommand("cluster", name, Loop(spec, h))
}

// ASKING lets the next command into a slot this node is importing (the
// dispatcher clears the flag after any other command, as Redis does outside
// MULTI).
func cmdAsking(x *Ctx) {
	if !x.S.clusterMode() {
		x.W.Error(errClusterDisabled)
		return
	}
	x.C.asking = true
	x.W.OK()
}

// clusterSubmit hands the command to the cluster actor; the reply is
// completed when the actor is done (after nodes.conf is saved, if needed).
func clusterSubmit(x *Ctx) {
	args := copyArgs(x.Args)
	cl := x.S.Cluster
	x.Defer(func(d *Deferred) { cl.Submit(args, &d.W, d.Done) })
}
