// Package bus is the Redis Cluster protocol as pure, deterministic logic: no
// goroutines, sockets or clocks. Time, randomness and I/O come in as
// arguments or go out as effects, so the same inputs always produce the same
// state and the same outputs, and a whole cluster can be replayed in a
// simulated network.
//
// A [State] is one node's view of the cluster: the node table (this node's
// 40-hex id, shard id, address, flags and configEpoch, plus every peer it
// knows), currentEpoch and lastVoteEpoch, the owner of every hash slot, the
// slots this node is migrating or importing, and the derived cluster state
// (ok/fail). Entry points such as [State.AddSlots] change the state the way
// the matching CLUSTER subcommand does in Redis 7.0, and return errors that
// carry Redis's exact reply text. They never do I/O themselves: they record
// what the owner has to do in a set of pending [Effects] ("persist
// nodes.conf", "publish a new routing table"), which the actor shell drains
// with [State.TakeEffects] after each step and carries out — persisting
// before it replies, as Redis saves nodes.conf before answering.
//
// Renderers produce what clients and tools read: the CLUSTER NODES text, the
// nodes.conf text (and its parser, [Load]), CLUSTER INFO, and CLUSTER SLOTS /
// SHARDS as Go values that the caller encodes to RESP2 or RESP3, and
// [State.Table], the immutable routing snapshot the event loops consult.
package bus
