package bus

// Executor carries out the side effects of a step (Effects) for one owner
// of a State: the cluster actor in production, the simulated network in
// bus/sim. Apply calls its methods in one fixed order; each method does
// one effect and must not call back into the State.
type Executor interface {
	// SaveConfig writes nodes.conf (State.Config). With durable the file
	// must be fsync'd before SaveConfig returns; without, SyncConfig
	// follows once the step's other effects are out. An error stops
	// Apply: the node must not act on a configuration it could lose.
	SaveConfig(durable bool) error
	// Log writes one line to the server log.
	Log(line string)
	// Promote: myself just became a primary (Effects.Promote).
	Promote()
	// Publish swaps in the routing table (State.Table).
	Publish()
	// Dial opens an outbound link, Send writes a frame on a link (a link
	// that is gone drops it), Close closes a link once the frames queued
	// on it are flushed.
	Dial(d Dial)
	Send(s Send)
	Close(link LinkID)
	// Deliver hands a pub/sub message from another node to the local
	// subscribers.
	Deliver(d Delivery)
	// DropSlots deletes the keys of slots this node lost.
	DropSlots(slots []int)
	// Replicate: myself must now replicate primary (Effects.Replicate).
	Replicate(primary string)
	// UnpauseWrites, PauseWrites and AwaitOffset are the manual
	// failover's requests to the replication layer (Effects).
	UnpauseWrites()
	PauseWrites(untilMs int64)
	AwaitOffset(offset uint64)
	// SyncConfig fsyncs the nodes.conf that SaveConfig(false) wrote in
	// this step.
	SyncConfig()
}

// Apply carries out fx with x, in this order, which every owner of a State
// follows:
//
//  1. SaveConfig, durable when fx.Sync: nothing of the step — no frame
//     announcing a new epoch, no vote, no claim, no reply — goes out
//     before the configuration that allows it is on disk. If it fails,
//     Apply returns the error and does nothing else.
//  2. Log, each line in order: the log tells what happened before its
//     consequences.
//  3. Promote, before Publish: the owner holds a table naming myself as
//     primary until replication serves as one.
//  4. Publish.
//  5. Dial, then Send (in slice order: each link's frames in the order
//     emitted), then Close (a closed link flushes the frames sent before).
//  6. Deliver, in arrival order.
//  7. DropSlots.
//  8. Replicate.
//  9. UnpauseWrites, PauseWrites, AwaitOffset.
//  10. SyncConfig, when step 1 was not durable: a save of what the node
//     only learned from its peers never delays the step's messages or
//     the end of a write pause.
func Apply(fx Effects, x Executor) error {
	if fx.Save {
		if err := x.SaveConfig(fx.Sync); err != nil {
			return err
		}
	}
	for _, line := range fx.Log {
		x.Log(line)
	}
	if fx.Promote {
		x.Promote()
	}
	if fx.Publish {
		x.Publish()
	}
	for _, d := range fx.Dial {
		x.Dial(d)
	}
	for _, s := range fx.Send {
		x.Send(s)
	}
	for _, l := range fx.Close {
		x.Close(l)
	}
	for _, d := range fx.Deliver {
		x.Deliver(d)
	}
	if len(fx.DropSlots) > 0 {
		x.DropSlots(fx.DropSlots)
	}
	if fx.Replicate != "" {
		x.Replicate(fx.Replicate)
	}
	if fx.UnpauseWrites {
		x.UnpauseWrites()
	}
	if fx.PauseWrites != 0 {
		x.PauseWrites(fx.PauseWrites)
	}
	if fx.AwaitOffset != 0 {
		x.AwaitOffset(fx.AwaitOffset)
	}
	if fx.Save && !fx.Sync {
		x.SyncConfig()
	}
	return nil
}
