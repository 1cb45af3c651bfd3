// Package batch owns the messages between client I/O and the shard actors:
// a Batch carries the commands of one client read that go to one shard actor,
// with their arguments copied out of the network buffer, and collects their
// replies in command order; WatchState is a client's WATCH set that the shards
// flag and EXEC checks.
package batch

import (
	"strconv"
	"strings"
	"sync"

	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/resp"
)

// Cmd is one command inside a Batch.
type Cmd struct {
	Spec   *command.Spec
	Args   [][]byte
	Slot   int32
	Proto  uint8
	Asking bool
	// Result is where fanout handlers leave their part for the merge.
	Result any
	// NoBlock makes blocking commands answer at once (inside MULTI).
	NoBlock bool
	// Spread marks a multi-key command whose keys hash to several slots
	// (standalone): the shard reaches each key in its own slot and shard
	// (actors/engine/spread.go).
	Spread bool
	// DB is the database the client selected (SELECT).
	DB int32
	// Watch is the client's WATCH state (WATCH, and transaction starts).
	Watch *WatchState
	// TxBegin > 0 marks the start of a transaction's commands in this
	// batch: if Watch says the transaction aborted, the next TxBegin
	// commands are skipped and Result is set to true.
	TxBegin int32
	// Client is the sending connection's id (scripts and SORT look up its
	// ACL user by it) and Track its CLIENT TRACKING flags for this command (TrackRead, TrackNoLoop; netio/tracking.go, actors/engine/tracking.go).
	Client int64
	Track  uint8

	argFirst, argN int32
}

// Completer is told when a shard has executed every command of a batch. It
// may be called on any goroutine.
type Completer interface {
	BatchDone(b *Batch)
}

// Batch carries all commands of one client read that go to one shard actor,
// with their arguments copied out of the network buffer. Replies are appended
// to Out in command order; Ends[i] is the end offset of command i's reply.
type Batch struct {
	Cmds []Cmd
	Out  resp.Writer
	Ends []int
	Done Completer
	// Ctx is an opaque value for the completer (its group).
	Ctx any
	// Peer is the client that sent the batch (SLOWLOG's entries name it).
	Peer Peer

	arena []byte
	offs  []int
	argv  [][]byte

	enq     int64 // unix ns when queued, set only while tracing
	traceID uint64
	Warm    uint64 // sink for actors/engine/prefetch.go's loads
}

// Peer names a batch's client: its address (ip:port) and CLIENT SETNAME.
type Peer interface {
	PeerAddr() string
	PeerName() string
}

// EnqueuedAt implements trace.Stamped.
func (b *Batch) EnqueuedAt() int64 { return b.enq }

// SetEnqueued stamps the batch with the unix ns it was queued at (set only
// while tracing).
func (b *Batch) SetEnqueued(ns int64) { b.enq = ns }

// TraceID implements trace.Stamped: the client id and read sequence the
// batch came from, so a command can be followed from loop to shard.
func (b *Batch) TraceID() uint64 { return b.traceID }

// SetTrace tags the batch with a trace id (netio: client id << 32 | read).
func (b *Batch) SetTrace(id uint64) { b.traceID = id }

// TraceName implements trace.Named: the commands in protocol terms, each
// with its key's slot ("SET slot=1234"; -1: no key), the first four of a
// longer batch and the count.
func (b *Batch) TraceName() string {
	var sb strings.Builder
	for i := range b.Cmds {
		if i == 4 {
			sb.WriteString(" …")
			break
		}
		if i > 0 {
			sb.WriteString(", ")
		}
		c := &b.Cmds[i]
		name := "?"
		if c.Spec != nil {
			name = strings.ToUpper(c.Spec.Name)
		}
		sb.WriteString(name)
		sb.WriteString(" slot=")
		sb.WriteString(strconv.Itoa(int(c.Slot)))
	}
	if len(b.Cmds) != 1 {
		sb.WriteString(" (" + strconv.Itoa(len(b.Cmds)) + " commands)")
	}
	return sb.String()
}

var batchPool = sync.Pool{New: func() any { return &Batch{} }}

// NewBatch takes a cleared batch from the pool.
func NewBatch() *Batch { return batchPool.Get().(*Batch) }

// Release clears b and returns it to the pool. Call only once the shard has
// reported it done and its replies have been written out.
func (b *Batch) Release() {
	if cap(b.arena) > 1<<20 {
		b.arena = nil
	}
	if cap(b.Out.B) > 1<<20 {
		b.Out.B = nil
	}
	for i := range b.Cmds {
		b.Cmds[i] = Cmd{}
	}
	b.Cmds = b.Cmds[:0]
	b.Out.B = b.Out.B[:0]
	b.Ends = b.Ends[:0]
	b.arena = b.arena[:0]
	b.offs = b.offs[:0]
	clear(b.argv)
	b.argv = b.argv[:0]
	b.Done = nil
	b.Ctx = nil
	b.enq, b.traceID, b.Warm = 0, 0, 0
	batchPool.Put(b)
}

// Add appends a command, copying its arguments (they usually point into a
// network buffer that is reused after the read).
func (b *Batch) Add(spec *command.Spec, args [][]byte, slot int, proto int, asking bool) {
	first := len(b.offs) / 2
	for _, a := range args {
		start := len(b.arena)
		b.arena = append(b.arena, a...)
		b.offs = append(b.offs, start, len(b.arena))
	}
	b.Cmds = append(b.Cmds, Cmd{Spec: spec, Slot: int32(slot), Proto: uint8(proto), Asking: asking,
		argFirst: int32(first), argN: int32(len(args))})
}

// seal builds the argument vectors once the arena no longer moves.
func (b *Batch) Seal() {
	b.argv = b.argv[:0]
	for i := 0; i < len(b.offs); i += 2 {
		s, e := b.offs[i], b.offs[i+1]
		b.argv = append(b.argv, b.arena[s:e:e])
	}
	for i := range b.Cmds {
		c := &b.Cmds[i]
		c.Args = b.argv[c.argFirst : c.argFirst+c.argN]
	}
}
