package netio

import "github.com/slotd/slotd/netio/command"

// pipelineOrder keeps a pipeline's results in command order where shard
// actors running their batches concurrently could break it. It returns
// false to end the group before this command (dispatched again once the
// group's commands have run), like a barrier.
//
// An Isolated command (SCAN, or EXEC of a transaction holding one) reads
// other actors' state, so it waits for the connection's earlier commands
// and nothing after it joins its group. So does the EXEC of a transaction
// over several shards: its WATCH verdict must follow every earlier write
// of the connection in each of them (multi.go, execJoint).
func (s *Server) pipelineOrder(cl *client, g *group, spec *command.Spec, args [][]byte) bool {
	queuing := cl.multi && !spec.TxControl
	if g.isolated || cl.isolatedInFlight() {
		return queuing // queuing runs nothing
	}
	if spec.Isolated && !cl.multi || spec.Name == "exec" && cl.multi && (txIsolated(cl) || s.txCrossShard(cl)) {
		if len(g.order) > 0 || len(cl.queue) > 0 {
			return false
		}
		g.isolated = true
		return true
	}
	if spec.ScriptCache && !cl.multi {
		return s.scriptInOrder(cl, g, spec, args)
	}
	return true
}

// isolatedInFlight: the connection's last sealed group holds an Isolated
// command or runs as a joint step, and has not been flushed (no later
// group starts before it is).
func (cl *client) isolatedInFlight() bool {
	if len(cl.queue) == 0 {
		return false
	}
	last := cl.queue[len(cl.queue)-1]
	return last.isolated || last.joint
}

func txIsolated(cl *client) bool {
	for _, q := range cl.txq {
		if q.spec.Isolated {
			return true
		}
	}
	return false
}

// scriptInOrder keeps a pipeline's EVAL-family commands in order across
// shard actors. They share the script cache (EVAL adds its script, EVALSHA
// looks one up) while the batches of different actors run concurrently, so
// an EVALSHA could see the script of an EVAL sent after it, or miss one
// sent before. A script command for another actor than the group's
// earlier script commands therefore ends the group.
func (s *Server) scriptInOrder(cl *client, g *group, spec *command.Spec, args [][]byte) bool {
	slot, msg := s.route(cl, spec, args)
	if msg != "" {
		return true // answered without running the script
	}
	i := 0
	if slot >= 0 {
		i = s.shards.Of(slot)
	}
	if g.scriptShard != 0 && g.scriptShard != i+1 {
		return false
	}
	for _, q := range cl.queue { // earlier reads' groups still running
		if !q.done.Load() && q.scriptShard != 0 && q.scriptShard != i+1 {
			return false
		}
	}
	g.scriptShard = i + 1
	return true
}
