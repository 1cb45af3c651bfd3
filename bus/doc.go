// Package bus is the Redis Cluster protocol as pure, deterministic logic: no
// goroutines, sockets or clocks. Time, randomness and I/O come in as
// arguments or go out as effects, so the same inputs always produce the same
// state and the same outputs, and a whole cluster can be replayed in a
// simulated network (package bus/sim).
//
// A [State] is one node's view of the cluster: the node table (this node's
// 40-hex id, shard id, address, flags and configEpoch, plus every peer it
// knows), currentEpoch and lastVoteEpoch, the owner of every hash slot, the
// slots this node is migrating or importing, the bus links, the FORGET ban
// list, and the derived cluster state (ok/fail).
//
// Inputs, each with the current unix time in ms:
//   - [State.Tick] every [TickInterval] (Redis's clusterCron): handshake
//     timeouts, dials, pings, stale-link replacement;
//   - [State.Accept], [State.LinkConnected], [State.LinkClosed]: the life of
//     bus connections, named by [LinkID]s the state allocates;
//   - [State.Receive]: a frame ([busv1.Frame]) read from a link;
//   - the CLUSTER subcommands ([State.Meet], [State.Forget], [State.Reset],
//     [State.AddSlots], [State.SetConfigEpoch], [State.BumpEpoch], ...), which
//     return errors carrying Redis 7.0's exact reply text.
//
// Outputs are the pending [Effects], drained with [State.TakeEffects] after
// each step and carried out by [Apply] through the owner's [Executor] (the
// cluster actor's, the simulation's), in one order: Save (rewrite nodes.conf,
// fsync'd for the node's own epochs and votes) before anything else — in
// particular before any frame announcing a new epoch, a vote or a slot
// claim goes out — then the log, Promote, Publish (swap in [State.Table],
// the routing snapshot of the event loops), Dial, Send, Close, Deliver,
// DropSlots, Replicate, the write pause (UnpauseWrites, PauseWrites,
// AwaitOffset), and last the fsync of a save that did not need to be
// durable first.
//
// The protocol follows the Redis Cluster specification and Redis 7.0's
// cluster.c: MEET/PING/PONG with gossip sections, the handshake with a
// random id replaced by the real one, address discovery, the
// currentEpoch/configEpoch rules, slot claims (rules 1 and 2), UPDATE
// messages to stale nodes, "a primary that lost its last slot replicates
// the node that took it", configEpoch collision resolution, CLUSTER FORGET's
// 60 s ban, and resets. Where Redis 7.0 loses a MEET for good (a broken
// link, an unanswered handshake), the Valkey fixes apply: MEET is repeated
// until the node answers, and a node that never connects back is sent a
// MEET. Failure detection (PFAIL/FAIL with failure reports), replica
// elections and votes, promotion, the cluster state with its rejoin delay,
// replica migration and manual failover (CLUSTER FAILOVER [FORCE|TAKEOVER])
// are in failure.go, election.go, migration.go and manual.go; the shell
// feeds in the replication facts they need (SetReplOffset,
// SetReplLinkDownSince) and carries out Promote and PauseWrites /
// UnpauseWrites.
//
// Frames travel length-prefixed ([AppendFrame], [Decoder]).
//
// Renderers produce what clients and tools read: the CLUSTER NODES text, the
// nodes.conf text (and its parser, [Load]), CLUSTER INFO, CLUSTER LINKS,
// CLUSTER REPLICAS, and CLUSTER SLOTS / SHARDS as Go values that the caller
// encodes to RESP2 or RESP3.
package bus
