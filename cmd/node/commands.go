package node

// Temporary during the layering work (#14): the keyed command packages
// register their specs at init.
import (
	_ "github.com/slotd/slotd/actors/engine/hashcmd"
	_ "github.com/slotd/slotd/actors/engine/hllcmd"
	_ "github.com/slotd/slotd/actors/engine/keycmd"
	_ "github.com/slotd/slotd/actors/engine/listcmd"
	_ "github.com/slotd/slotd/actors/engine/setcmd"
	_ "github.com/slotd/slotd/actors/engine/strcmd"
	_ "github.com/slotd/slotd/actors/engine/zsetcmd"
)
