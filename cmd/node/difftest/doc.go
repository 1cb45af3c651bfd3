// Package difftest is the differential tester: it finds behavioural
// differences between slotd and a real redis-server (Debian's 7.0.15).
//
// A seeded generator (Generate) produces command sequences over every data
// type — strings, keys and TTLs, lists (blocking commands always with a 10 ms
// timeout, so nothing can hang), hashes, sets, sorted sets, bitmaps,
// HyperLogLog, MULTI/EXEC/DISCARD/WATCH, Lua scripts from a small library,
// databases 0–2 (SELECT, MOVE, SWAPDB, COPY ... DB; the dataset check reads each)
// — with error cases mixed in: wrong types (20 keys, all tagged {k}, shared by
// every type), wrong arity, bad integers and floats, overflow, syntax errors,
// unknown commands. An op joins the mix only when the server under test has
// its command (COMMAND INFO), so types are enabled as they land.
//
// A Runner replays a sequence on both servers in pipelined chunks and
// compares every reply byte for byte, except where rules.go says why Redis's
// output is unspecified (hashtable iteration order, random picks, scan
// cursors, TTL skew) or excluded (OBJECT, MEMORY, DEBUG, INFO). Random pops
// (SPOP) are undone on each side with its own members so the datasets stay
// equal. After a sequence it compares the whole dataset: keys, types, TTL
// presence and contents read back per type.
//
// On a mismatch, Minimize (delta debugging, replaying from an empty
// database each time) shrinks the sequence to a shortest one that still
// fails the same way, and Report prints the seed, the command, both replies
// and that sequence as redis-cli input.
//
// The CI run is `go test ./cmd/node/difftest -run Diff` (200 seeds of 2000
// commands, alternating RESP2 and RESP3). The longer run is one command:
//
//	DIFFTEST_SEEDS=5000 go test ./cmd/node/difftest -run Diff -timeout 1h
//
// DIFFTEST_SEED=n replays one seed (verbose coverage with -v), DIFFTEST_CMDS
// sets the commands per seed, DIFFTEST_FIRST the first seed of a range.
//
// In-process mode: a Runner with Engine set replays on the data engine
// itself (actors/engine/enginetest) instead of a slotd node, leaving out the
// ops of commands a node answers outside the engine (EngineHas). A seed then
// gives the same reply bytes on every run (TestEngineSeedReplaysByteForByte),
// and TestDiffInProcess compares the engine with redis-server under the
// same rules (DIFFTEST_ENGINE_SEEDS seeds, default 40):
//
//	DIFFTEST_ENGINE_SEEDS=2000 go test ./cmd/node/difftest -run DiffInProcess
package difftest
