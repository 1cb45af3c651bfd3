package netio

import (
	"context"
	"github.com/slotd/slotd/netio/acl"
	"sync/atomic"

	"github.com/panjf2000/gnet/v2"

	"github.com/slotd/slotd/netio/batch"
	"github.com/slotd/slotd/netio/resp"
)

// client is one connection's state. Fields without atomics are touched only
// on the connection's event loop.
type client struct {
	srv  *Server
	conn gnet.Conn
	loop gnet.EventLoop
	// cycle collects pend, the reply bytes written at the end of the loop's
	// cycle (cyclewrite.go); nil writes at once.
	cycle *cycleWriter
	pend  []byte
	id    int64

	parser resp.Parser
	qbuf   []byte // unparsed bytes carried over between reads
	// inDispatch is the pause stripe counter a read holds while it
	// dispatches (nil otherwise; contain.go releases it after a panic).
	inDispatch *atomic.Int32
	out        []byte // flush scratch

	queue          []*group // groups awaiting flush, oldest first
	reads          uint64   // reads that carried commands (trace ids)
	flushScheduled atomic.Bool

	// MULTI state.
	multi    bool
	multiErr bool
	txq      []queued
	watch    *batch.WatchState

	// Blocking: input is not parsed while a blocking command waits.
	paused    bool
	postponed bool // dispatch stopped at a command held by a client pause
	parked    bool // postponed and waiting for the pause to end (blocked, for timeout)
	// loadHeld: dispatch stopped at a command that would get LOADING; it
	// waits for the loader's next events point (loadGen moves past
	// loadSeen) or the end of the load (loading.go).
	loadHeld, loadWait bool
	loadSeen           uint64
	blockedShard       int
	blockedBatch       *batch.Batch

	replies replyState // CLIENT REPLY (cmd_clientreply.go)

	proto    int // 2 or 3
	asking   bool
	readonly bool
	closing  bool // close after the pending replies are written
	closed   bool
	authed   bool
	// user is the ACL user the connection is logged in as (nil: an
	// internal client, allowed everything).
	user *acl.Handle

	// Read by CLIENT LIST/INFO from other goroutines.
	name      atomic.Pointer[string]
	libName   atomic.Pointer[string]
	libVer    atomic.Pointer[string]
	lastCmd   atomic.Pointer[string]
	lastIO    atomic.Int64 // unix ms
	created   int64        // unix ms
	addr      string
	laddr     string
	fd        int
	noEvict   atomic.Bool
	noTouch   atomic.Bool
	db        atomic.Int32
	qbufLen   atomic.Int64
	totalCmds atomic.Int64
	// flags mirrors connection state for CLIENT LIST/KILL readers on other
	// goroutines (clientFlag* bits, see cmd_client.go).
	flags atomic.Uint32

	ps pubsubConn // subscriptions and pending pushes (pubsub.go)
	rs *ReplConf  // REPLCONF state and replica feed (cmd_repl.go)
	// feed is rs.feed for other goroutines (INFO mem_clients_slaves).
	feed atomic.Pointer[feedConn]
	// killed: another client closed it (CLIENT KILL, ACL DELUSER/LOAD, a
	// channel revocation); its close may still be under way, CLIENT LIST
	// no longer shows it.
	killed atomic.Bool
	track  trackingConn // CLIENT TRACKING state (tracking.go)
}

func (cl *client) scheduleFlush() {
	if cl.flushScheduled.CompareAndSwap(false, true) {
		if err := cl.loop.Execute(context.Background(), cl); err != nil {
			cl.flushScheduled.Store(false)
		}
	}
}

// flush writes the replies of every completed group at the head of the
// queue. Runs on the loop only.
func (cl *client) flush() {
	if cl.closed {
		return
	}
	cl.takePushes()
	if cl.closed {
		return
	}
	n := 0
	out := cl.out[:0]
	for n < len(cl.queue) && cl.queue[n].done.Load() {
		g := cl.queue[n]
		if n == 0 && (n+1 == len(cl.queue) || !cl.queue[n+1].done.Load()) && len(out) == 0 {
			// Single group ready: write straight from its buffers when it
			// has one source, avoiding the copy.
			if b := g.singleBuffer(); b != nil {
				cl.write(b)
				g.release()
				n++
				continue
			}
		}
		out = g.appendTo(out)
		g.release()
		n++
	}
	if n > 0 {
		copy(cl.queue, cl.queue[n:])
		for i := len(cl.queue) - n; i < len(cl.queue); i++ {
			cl.queue[i] = nil
		}
		cl.queue = cl.queue[:len(cl.queue)-n]
	}
	if len(out) > 0 {
		cl.write(out)
	}
	if cap(out) > 1<<20 {
		out = nil
	}
	cl.out = out[:0]
	if cl.rs != nil && cl.rs.feed != nil && len(cl.queue) == 0 {
		cl.flushFeed() // a replica's feed, once every reply is out
	}
	cl.checkOutput()
	if cl.closed {
		return
	}
	if cl.closing && len(cl.queue) == 0 {
		cl.writePending()
		cl.closed = true
		_ = cl.conn.Close()
		return
	}
	if cl.paused && len(cl.queue) == 0 {
		// The blocking command was answered: resume parsing what the
		// client sent meanwhile.
		cl.paused = false
		cl.blockedBatch = nil
		cl.setFlag(clientFlagBlocked, false)
		if len(cl.qbuf) > 0 {
			_ = cl.conn.Wake(nil)
		}
	}
}

// singleBuffer returns the group's whole reply when it lives in one buffer.
func (g *group) singleBuffer() []byte {
	if g.muted || len(g.fanouts) != 0 || len(g.deferred) != 0 || len(g.splits) != 0 || len(g.txs) != 0 {
		return nil
	}
	if len(g.used) == 0 {
		return g.local.B
	}
	if len(g.used) == 1 && len(g.localEnds) == 0 {
		return g.batches[g.used[0]].Out.B
	}
	return nil
}

// touch records traffic from the client: its idle time (CLIENT LIST
// idle=, timeout) counts from the server's coarse clock, as Redis's
// lastinteraction reads its cached unixtime, so reading a request costs
// no clock read.
func (cl *client) touch() { cl.lastIO.Store(cl.srv.coarseMS.Load()) }
