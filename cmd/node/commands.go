package node

import (
	"github.com/slotd/slotd/actors/cluster"
	"github.com/slotd/slotd/actors/engine/commands"
	"github.com/slotd/slotd/netio"
	"github.com/slotd/slotd/netio/funccmd"
	"github.com/slotd/slotd/netio/infocmd"
	"github.com/slotd/slotd/netio/replcmd"
	"github.com/slotd/slotd/netio/scriptcmd"
	"github.com/slotd/slotd/netio/servercmd"
)

// RegisterCommands fills the command table with every command a node
// serves, in this order: the loop commands, netio/servercmd's and
// netio/replcmd's before
// netio's own (DEBUG HELP lists subcommands in registration order) and
// netio's before the rest (they own the CLUSTER and DEBUG containers that
// others add subcommands to), then INFO, the cluster actor's CLUSTER
// subcommands (one table: actors/cluster), then the engine's shard
// commands (actors/engine/commands), then SCRIPT and FUNCTION. Start
// calls it; calling it again does nothing.
func RegisterCommands() {
	servercmd.Register()
	replcmd.Register()
	netio.Register()
	infocmd.Register()
	cluster.Register(netio.AddClusterSubcommand)
	commands.Register()
	scriptcmd.Register()
	funccmd.Register()
}
