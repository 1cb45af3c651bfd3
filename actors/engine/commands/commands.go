// Package commands owns the order in which the data engine's command
// packages register: the engine's own commands first, then one package per
// concern, each after the containers it adds subcommands to. The node's
// wiring (cmd/node) and the in-process driver (actors/engine/enginetest)
// both register through it.
package commands

import (
	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/hashcmd"
	"github.com/slotd/slotd/actors/engine/hllcmd"
	"github.com/slotd/slotd/actors/engine/keycmd"
	"github.com/slotd/slotd/actors/engine/listcmd"
	"github.com/slotd/slotd/actors/engine/setcmd"
	"github.com/slotd/slotd/actors/engine/sortcmd"
	"github.com/slotd/slotd/actors/engine/strcmd"
	"github.com/slotd/slotd/actors/engine/streamcmd"
	"github.com/slotd/slotd/actors/engine/zsetcmd"
)

// Register adds every engine command to the command table and binds its
// implementation. The CLUSTER container must be registered before (keycmd
// adds COUNTKEYSINSLOT and GETKEYSINSLOT to it). Calling it again does
// nothing.
func Register() {
	engine.Register()
	strcmd.Register()
	hllcmd.Register()
	keycmd.Register()
	listcmd.Register()
	hashcmd.Register()
	setcmd.Register()
	zsetcmd.Register()
	streamcmd.Register()
	sortcmd.Register()
}
