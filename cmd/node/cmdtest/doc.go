// Package cmdtest holds the command tests that need a whole node: each
// starts slotd (cmd/node/nodetest) and, where it compares, a real
// redis-server, and talks to them over TCP with real clients (go-redis,
// raw RESP, redis-py stream workers from testdata) — blocking commands
// across clients, WATCH between connections, MIGRATE between nodes, fanouts
// over several shard actors, replies byte for byte against Redis. Tests of
// the data engine alone run in-process, without sockets, through
// actors/engine/enginetest. The package has no code of its own.
package cmdtest
