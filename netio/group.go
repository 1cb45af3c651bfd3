package netio

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/slotd/slotd/netio/batch"
	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/resp"
)

// A group holds the replies of all commands parsed from one read of a
// connection. Commands that run on the loop write into local; commands for
// shard actors go out as one batch per actor; deferred replies (cluster
// actor, timers) complete later. The group is flushed, in command order,
// once every part is done and every earlier group of the connection has been
// flushed.
type group struct {
	cl      *client
	pending atomic.Int32 // parts not done yet, +1 while the loop is still adding
	done    atomic.Bool

	local     resp.Writer
	localEnds []int
	batches   []*batch.Batch // by shard index, nil when unused
	used      []int          // shard indexes with a batch, in first-use order
	order     []src
	fanouts   []fanout
	deferred  []*Deferred
	splits    []split
	txs       []txInfo
	// scriptShard is 1 + the shard of the group's EVAL-family commands, 0
	// when there is none (see scriptInOrder).
	scriptShard int
	// isolated: the group holds an Isolated command (see pipelineOrder).
	isolated bool
	// muted: some order entries are not written (CLIENT REPLY OFF/SKIP).
	muted bool
	// joint: the group holds a command or transaction whose keys live in
	// several shards; its batches run as one atomic step (SendJoint), and
	// the connection's next group waits for it (isolatedInFlight), so
	// that no later batch overtakes it in a shard.
	joint bool
}

// txInfo is an EXEC reply: an array header (or a null array when WATCH
// aborted it) over the next n replies.
type txInfo struct {
	n           int
	shard       int   // shard running the transaction's keyed commands, -1 if none
	others      []int // the other shards of a joint transaction, each with a marker
	loopAborted bool
}

// src says where one command's reply comes from.
type src struct {
	kind uint8 // srcLocal, srcShard, srcFanout, srcDeferred
	mute bool  // the reply is dropped (CLIENT REPLY OFF/SKIP)
	idx  uint16
}

const (
	srcLocal uint8 = iota
	srcShard
	srcFanout
	srcDeferred
	srcSplit
	srcTx
	// srcMark is a marker in shard idx's batch with no reply of its own
	// (an UNWATCH's drop of records queued behind a WATCH, multi.go).
	srcMark
)

type fanout struct {
	merge command.Merge
	args  [][]byte
	proto int
}

var groupPool = sync.Pool{New: func() any { return &group{} }}

func newGroup(cl *client, nShards int) *group {
	g := groupPool.Get().(*group)
	g.cl = cl
	if len(g.batches) != nShards {
		g.batches = make([]*batch.Batch, nShards)
	}
	g.pending.Store(1)
	g.done.Store(false)
	g.local.Proto = cl.proto
	return g
}

func (g *group) release() {
	for _, i := range g.used {
		g.batches[i].Release()
		g.batches[i] = nil
	}
	g.used = g.used[:0]
	g.local.B = g.local.B[:0]
	if cap(g.local.B) > 1<<20 {
		g.local.B = nil
	}
	g.localEnds = g.localEnds[:0]
	g.order = g.order[:0]
	for i := range g.fanouts {
		g.fanouts[i] = fanout{}
	}
	g.fanouts = g.fanouts[:0]
	for i := range g.deferred {
		g.deferred[i] = nil
	}
	for i := range g.splits {
		g.splits[i] = split{}
	}
	g.splits = g.splits[:0]
	g.txs = g.txs[:0]
	g.scriptShard = 0
	g.isolated = false
	g.muted = false
	g.joint = false
	g.deferred = g.deferred[:0]
	g.cl = nil
	groupPool.Put(g)
}

// empty reports whether no command was added.
func (g *group) empty() bool { return len(g.order) == 0 }

// endLocal closes the reply of a command executed on the loop.
func (g *group) endLocal() {
	g.localEnds = append(g.localEnds, len(g.local.B))
	g.order = append(g.order, src{kind: srcLocal})
}

// batch returns the batch for shard i, creating it.
func (g *group) batch(i int) *batch.Batch {
	b := g.batches[i]
	if b == nil {
		b = batch.NewBatch()
		b.Done = g
		b.Peer = g.cl
		g.batches[i] = b
		g.used = append(g.used, i)
	}
	return b
}

// BatchDone implements batch.Completer; it runs on the shard's goroutine.
func (g *group) BatchDone(*batch.Batch) { g.partDone() }

func (g *group) partDone() {
	if g.pending.Add(-1) == 0 {
		// Read cl first: once done is set the loop may flush and release
		// (and reuse) the group.
		cl := g.cl
		g.done.Store(true)
		// Completed off the loop: ask the connection's loop to flush.
		cl.scheduleFlush()
	}
}

// seal sends the batches and drops the loop's own hold. It reports whether
// the group is already complete (every part ran inline).
func (g *group) seal(srv *Server) bool {
	g.pending.Add(int32(len(g.used) + len(g.deferred)))
	for _, i := range g.used {
		g.batches[i].SetTrace(uint64(g.cl.id)<<32 | uint64(g.cl.reads&0xffffffff))
	}
	if g.joint && len(g.used) > 1 {
		// Taken in ascending shard order (see shard.Group.SendJoint).
		idx := make([]int, 0, len(g.used))
		for i, b := range g.batches {
			if b != nil {
				idx = append(idx, i)
			}
		}
		bs := make([]*batch.Batch, len(idx))
		for k, i := range idx {
			bs[k] = g.batches[i]
		}
		srv.shards.SendJoint(idx, bs)
	} else {
		for _, i := range g.used {
			srv.shards.Send(i, g.batches[i])
		}
	}
	for _, d := range g.deferred {
		d.arm()
	}
	if g.pending.Add(-1) == 0 {
		g.done.Store(true)
		return true
	}
	return false
}

// appendTo writes the group's replies, in command order, to out.
func (g *group) appendTo(out []byte) []byte {
	// Fast path: one source only.
	if b := g.singleBuffer(); b != nil {
		return append(out, b...)
	}
	var cur [64]int // per shard cursor into Ends
	var curs []int
	if len(g.batches) <= len(cur) {
		curs = cur[:len(g.batches)]
	} else {
		curs = make([]int, len(g.batches))
	}
	li := 0
	skip, skipMark := 0, 0 // replies of a WATCH-aborted transaction are dropped
	for _, s := range g.order {
		if s.kind == srcMark {
			curs[s.idx]++
			continue
		}
		if skip > 0 {
			skipMark = len(out)
		}
		muteMark := len(out)
		switch s.kind {
		case srcLocal:
			start := 0
			if li > 0 {
				start = g.localEnds[li-1]
			}
			out = append(out, g.local.B[start:g.localEnds[li]]...)
			li++
		case srcShard:
			b := g.batches[s.idx]
			k := curs[s.idx]
			start := 0
			if k > 0 {
				start = b.Ends[k-1]
			}
			out = append(out, b.Out.B[start:b.Ends[k]]...)
			curs[s.idx]++
		case srcFanout:
			f := &g.fanouts[s.idx]
			parts := make([]any, len(g.batches))
			for i, b := range g.batches {
				parts[i] = b.Cmds[curs[i]].Result
				curs[i]++
			}
			w := resp.Writer{B: out, Proto: f.proto}
			f.merge(&w, f.args, parts)
			out = w.B
		case srcDeferred:
			out = append(out, g.deferred[s.idx].W.B...)
		case srcSplit:
			sp := &g.splits[s.idx]
			chunks := make([][]byte, len(sp.parts))
			for pi, part := range sp.parts {
				b := g.batches[part.shard]
				k := curs[part.shard]
				start := 0
				if k > 0 {
					start = b.Ends[k-1]
				}
				chunks[pi] = b.Out.B[start:b.Ends[k]]
				curs[part.shard]++
			}
			w := resp.Writer{B: out, Proto: g.cl.proto}
			mergeSplit(&w, sp, chunks)
			out = w.B
		case srcTx:
			tx := &g.txs[s.idx]
			aborted, redirect := tx.loopAborted, ""
			if tx.shard >= 0 {
				b := g.batches[tx.shard]
				switch r := b.Cmds[curs[tx.shard]].Result.(type) {
				case bool:
					aborted = aborted || r
				case string:
					// The shard redirected the whole transaction (ASK,
					// TRYAGAIN, MOVED): EXEC's reply is that error.
					redirect = r
				}
				curs[tx.shard]++
				for _, i := range tx.others { // same verdict (WatchState.Decide)
					curs[i]++
				}
			}
			w := resp.Writer{B: out, Proto: g.cl.proto}
			if redirect != "" {
				w.Error(redirect)
				out = w.B
				skip = tx.n + 1
				skipMark = len(out)
			} else if aborted {
				w.NullArray()
				out = w.B
				skip = tx.n + 1 // +1: this entry's own decrement below
				skipMark = len(out)
			} else {
				w.Array(tx.n)
				out = w.B
			}
		}
		if s.mute {
			out = out[:muteMark]
		}
		if skip > 0 {
			out = out[:skipMark]
			skip--
		}
	}
	return out
}

// Deferred is a reply completed later, possibly on another goroutine (the
// cluster actor, a timer). Write the reply to W, then call Done exactly once.
type Deferred struct {
	W     resp.Writer
	g     *group
	start func(*Deferred)
	slow  func() // records its latency and logs it in SLOWLOG if it took long enough
}

// arm starts the deferred work once the group is sealed.
func (d *Deferred) arm() {
	if d.start != nil {
		d.start(d)
	}
}

// Done marks the reply complete.
func (d *Deferred) Done() {
	if d.slow != nil {
		d.slow()
	}
	d.g.partDone()
}

// Run implements gnet.Runnable for flushes scheduled from other goroutines.
func (cl *client) Run(context.Context) error {
	cl.flushScheduled.Store(false)
	cl.flush()
	return nil
}
