package node

import (
	"github.com/slotd/slotd/actors/cluster"
	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/hashcmd"
	"github.com/slotd/slotd/actors/engine/hllcmd"
	"github.com/slotd/slotd/actors/engine/keycmd"
	"github.com/slotd/slotd/actors/engine/listcmd"
	"github.com/slotd/slotd/actors/engine/setcmd"
	"github.com/slotd/slotd/actors/engine/strcmd"
	"github.com/slotd/slotd/actors/engine/streamcmd"
	"github.com/slotd/slotd/actors/engine/zsetcmd"
	"github.com/slotd/slotd/netio"
	"github.com/slotd/slotd/netio/funccmd"
	"github.com/slotd/slotd/netio/scriptcmd"
)

// RegisterCommands fills the command table with every command a node
// serves, in this order: netio's loop commands first (they own the CLUSTER
// and DEBUG containers that others add subcommands to), the cluster
// actor's CLUSTER subcommands (one table: actors/cluster), then the engine's
// shard commands, one package per concern, then SCRIPT and FUNCTION. Start
// calls it; calling it again does nothing.
func RegisterCommands() {
	netio.Register()
	cluster.Register(netio.AddClusterSubcommand)
	engine.Register()
	strcmd.Register()
	hllcmd.Register()
	keycmd.Register()
	listcmd.Register()
	hashcmd.Register()
	setcmd.Register()
	zsetcmd.Register()
	streamcmd.Register()
	scriptcmd.Register()
	funccmd.Register()
}
