package servercmd

import (
	"github.com/slotd/slotd/netio"
	"github.com/slotd/slotd/netio/command"
)

// DEBUG DIGEST and DEBUG DIGEST-VALUE: the digests are computed by the
// shards (the engine's internal specs "debug|digest" and
// "debug|digest-value"). The handler runs them as a
// fanout in its own place in the client's command order, so a digest sees
// every write the client sent before it, even in the same pipeline.
func registerDebugDigest() {
	netio.RegisterDebug("digest", []string{"DIGEST",
		"    Output a hex signature representing the current DB content."}, 2,
		func(x *netio.Ctx) { x.RunFanout(command.Internal("debug|digest")) })
	netio.RegisterDebug("digest-value", []string{"DIGEST-VALUE <key> [<key> ...]",
		"    Output a hex signature of the values of all the specified keys."}, -2,
		func(x *netio.Ctx) { x.RunFanout(command.Internal("debug|digest-value")) })
}
