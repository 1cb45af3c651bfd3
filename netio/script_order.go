package netio

import "github.com/slotd/slotd/netio/command"

// scriptInOrder keeps a pipeline's EVAL-family commands in order across
// shard actors. They share the script cache (EVAL adds its script, EVALSHA
// looks one up) while the batches of different actors run concurrently, so
// an EVALSHA could see the script of an EVAL sent after it, or miss one
// sent before. A script command for another actor than the group's
// earlier script commands therefore ends the group: it is dispatched again
// once they have run (false, like a barrier).
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
	g.scriptShard = i + 1
	return true
}
