package shard

import (
	"sync/atomic"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/rdb"
	"github.com/slotd/slotd/actors/trace"
	"github.com/slotd/slotd/netio/batch"
)

// The named messages other components send shard actors: each one is a
// step of the engine shard, run in the actor's turn (so it sees the state
// between two batches). Completion is reported by callbacks, which run on
// the shard's goroutine and must not block.

// op is a message that runs one step of the engine shard.
type op interface{ run(s *engine.Shard) }

type (
	// Barrier does nothing: its callback tells that everything sent to
	// the shard before it was handled.
	Barrier struct{}
	// AttachAOF makes AOF the shard's append-only log.
	AttachAOF struct{ AOF engine.AOF }
	// DetachAOF stops the shard's log.
	DetachAOF struct{}
	// RecordSlots writes records that recreate the shard's keys (an AOF
	// rewrite without an RDB preamble).
	RecordSlots struct {
		From, Budget int
		Reply        func(engine.RecordChunk)
	}
	// SaveSlots serializes the shard's slots as RDB records.
	SaveSlots struct {
		From, Budget int
		Opt          rdb.Options
		Reply        func(engine.SaveChunk)
	}
	// LoadKeys stores loaded keys.
	LoadKeys struct {
		Keys  []engine.LoadedKey
		Reply func(n int, err error)
	}
	// Apply runs a batch of the primary's stream.
	Apply struct{ B *engine.ApplyBatch }
	// EnableStream turns the replication stream on with a backlog of Per
	// bytes.
	EnableStream struct{ Per int }
	// SetReplica switches replica mode.
	SetReplica struct{ On bool }
	// ResetStream empties the backlog (and moves the offset).
	ResetStream struct{ Offsets []int64 }
	// AttachFeed connects a replica's sink to the stream.
	AttachFeed struct {
		Sink  engine.Sink
		From  int64
		Reply func(ok bool, start int64)
	}
	// Covers asks whether the backlog holds the stream from Offset.
	Covers struct {
		Offset int64
		Reply  func(bool)
	}
	// ReadOffset reads the stream offset.
	ReadOffset struct{ Reply func(int64) }
	// DetachFeed forgets a replica's sink.
	DetachFeed struct{ Sink engine.Sink }
	// Snapshot sends a syncing sink the shard's next slots.
	Snapshot struct {
		Sink   engine.Sink
		Budget int
		Reply  func(done bool)
	}
	// DropAll deletes every key (a replica starting a full sync).
	DropAll struct{}
	// StreamAdmin puts a slot-less record in the stream.
	StreamAdmin struct {
		Args  [][]byte
		Reply func(streamed bool)
	}
	// RedirectBlocked checks blocked clients against a new routing table.
	RedirectBlocked struct{}
	// DropSlotLogged deletes a slot this node no longer serves.
	DropSlotLogged struct{ Slot int }
	// Unwatch drops a client's WATCH records.
	Unwatch struct{ WS *batch.WatchState }
	// CancelBlocked drops a parked batch whose client went away.
	CancelBlocked struct{ B *batch.Batch }
	// Unblock wakes a parked batch (CLIENT UNBLOCK): with its command's
	// timeout reply, or with the UNBLOCKED error; Reply says whether it
	// was still parked.
	Unblock struct {
		B     *batch.Batch
		Error bool
		Reply func(ok bool)
	}
	// CountKeys counts the shard's keys for INFO keyspace.
	CountKeys struct {
		Now   int64
		Reply func([]engine.KeyCounts)
	}
	// Inspect runs Fn with the shard's state in its turn: a test-only
	// hook (tests look at or plant values through it), traced as
	// "shard.Inspect".
	Inspect struct{ Fn func(*engine.Shard) }
	// InTurn runs Step, a step of another component that must not run
	// beside the shard's steps (the AOF's file switches), in the shard's
	// turn. Traces name it by the step's type.
	InTurn struct{ Step Turn }
)

// Turn is a step another component runs in a shard's turn (InTurn): a
// named type carrying the data it needs, so that a trace says which.
type Turn interface{ RunInTurn() }

// TraceName is the step's name ("aof.beginRewrite").
func (m InTurn) TraceName() string { return trace.Name(m.Step) }

func (Barrier) run(*engine.Shard)            {}
func (m AttachAOF) run(s *engine.Shard)      { s.AttachAOF(m.AOF) }
func (DetachAOF) run(s *engine.Shard)        { s.DetachAOF() }
func (m RecordSlots) run(s *engine.Shard)    { m.Reply(s.RecordSlots(m.From, m.Budget)) }
func (m SaveSlots) run(s *engine.Shard)      { m.Reply(s.SaveSlots(m.From, m.Budget, m.Opt)) }
func (m LoadKeys) run(s *engine.Shard)       { m.Reply(s.LoadKeys(m.Keys)) }
func (m Apply) run(s *engine.Shard)          { s.Apply(m.B) }
func (m EnableStream) run(s *engine.Shard)   { s.EnableStream(m.Per) }
func (m SetReplica) run(s *engine.Shard)     { s.SetReplica(m.On) }
func (m ResetStream) run(s *engine.Shard)    { s.ResetStream(m.Offsets) }
func (m AttachFeed) run(s *engine.Shard)     { m.Reply(s.AttachFeed(m.Sink, m.From)) }
func (m Covers) run(s *engine.Shard)         { m.Reply(s.Covers(m.Offset)) }
func (m ReadOffset) run(s *engine.Shard)     { m.Reply(s.Offset()) }
func (m DetachFeed) run(s *engine.Shard)     { s.DetachFeed(m.Sink) }
func (m Snapshot) run(s *engine.Shard)       { m.Reply(s.Snapshot(m.Sink, m.Budget)) }
func (DropAll) run(s *engine.Shard)          { s.DropAll() }
func (m StreamAdmin) run(s *engine.Shard)    { m.Reply(s.StreamAdmin(m.Args)) }
func (RedirectBlocked) run(s *engine.Shard)  { s.RedirectBlocked() }
func (m DropSlotLogged) run(s *engine.Shard) { s.DropSlotLogged(m.Slot) }
func (m Unwatch) run(s *engine.Shard)        { s.Unwatch(m.WS) }
func (m CancelBlocked) run(s *engine.Shard)  { s.CancelBlocked(m.B) }
func (m Unblock) run(s *engine.Shard)        { m.Reply(s.Unblock(m.B, m.Error)) }
func (m CountKeys) run(s *engine.Shard)      { m.Reply(s.CountKeys(m.Now)) }
func (m InTurn) run(*engine.Shard)           { m.Step.RunInTurn() }
func (m Inspect) run(s *engine.Shard)        { m.Fn(s) }
func (m then) run(s *engine.Shard)           { m.op.run(s); m.after() }

// then runs op, then after (TellThen, Broadcast).
type then struct {
	op    op
	after func()
}

// TraceName is the name of the message then wraps: a trace says which
// step ran, not that it had a callback.
func (m then) TraceName() string { return trace.Name(m.op) }

// Tell sends shard i a message (one of this package's message types).
func (g *Group) Tell(i int, m op) { g.root.Send(g.actors[i].pid, m) }

// TellThen sends shard i m; done runs in the shard's turn after it.
func (g *Group) TellThen(i int, m op, after func()) {
	if after == nil {
		g.Tell(i, m)
		return
	}
	g.Tell(i, then{op: m, after: after})
}

// Broadcast sends every shard m; after (if not nil) runs once, in the turn
// of the shard that handled it last.
func (g *Group) Broadcast(m op, after func()) {
	if after == nil {
		for i := range g.actors {
			g.Tell(i, m)
		}
		return
	}
	left := atomic.Int32{}
	left.Store(int32(len(g.actors)))
	last := func() {
		if left.Add(-1) == 0 {
			after()
		}
	}
	for i := range g.actors {
		g.Tell(i, then{op: m, after: last})
	}
}
