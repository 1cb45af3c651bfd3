// Package replcmd owns the replication commands as the event loops run
// them: REPLICAOF / SLAVEOF, ROLE and WAIT for users, REPLCONF and PSYNC
// for the protocol between slotd nodes. They parse, check and hand over
// to the replication engine (netio/replproto's Replication, implemented
// by actors/repl); after PSYNC the connection carries the primary's feed
// (netio's Ctx.StartFeed).
package replcmd
