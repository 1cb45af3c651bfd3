package netio

import (
	"github.com/slotd/slotd/netio/command"
)

// DEBUG DIGEST and DEBUG DIGEST-VALUE: the digests are computed by the
// shards (the engine's internal specs "debug|digest" and
// "debug|digest-value"). The handler runs them as a
// fanout in its own place in the client's command order, so a digest sees
// every write the client sent before it, even in the same pipeline.
func registerCmdDebugDigest() {
	RegisterDebug("digest", []string{"DIGEST",
		"    Output a hex signature representing the current DB content."}, 2,
		func(x *Ctx) { x.runFanout(command.Internal("debug|digest")) })
	RegisterDebug("digest-value", []string{"DIGEST-VALUE <key> [<key> ...]",
		"    Output a hex signature of the values of all the specified keys."}, -2,
		func(x *Ctx) { x.runFanout(command.Internal("debug|digest-value")) })
}

// runFanout executes spec with this command's arguments across the shards;
// its merged reply takes this command's place.
func (x *Ctx) runFanout(spec *command.Spec) {
	x.noReply = true
	x.S.execute(x.C, x.g, spec, x.Args, x.InTx)
}
