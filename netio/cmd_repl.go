package netio

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/replproto"
)

// The connection side of replication: the gate that refuses what a
// replica refuses, a connection's REPLCONF state and, after PSYNC, the
// primary's feed written to it (a replproto.FeedConn). The commands
// (REPLICAOF, ROLE, WAIT, REPLCONF, PSYNC) are netio/replcmd's; the engine
// (actors/repl) implements replproto.Replication.

const (
	errMasterDown = "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."
	errLoading    = "LOADING Redis is loading the dataset in memory"
)

// SetReplGate publishes the replproto.Gate* bits (called by the engine).
func (s *Server) SetReplGate(bits uint32) {
	if old := s.replGate.Swap(bits); old&replproto.GateLoading != 0 && bits&replproto.GateLoading == 0 {
		s.wakeLoadHeld() // the load is over: held commands run now
	}
}

// gateCheck applies the replica rules to a command about to run: READONLY
// for writes (in cluster mode keyed writes are redirected by the routing
// table instead), MASTERDOWN for commands without the stale flag while
// the link is down, LOADING during a full sync.
func (s *Server) gateCheck(cl *client, spec *command.Spec) string {
	g := s.replGate.Load()
	if g&(replproto.GateReadOnly|replproto.GateStaleDeny|replproto.GateLoading) == 0 {
		return ""
	}
	if g&replproto.GateReadOnly != 0 && (spec.Write() && !(s.clusterMode() && (spec.First > 0 || spec.Keys != nil)) ||
		spec.Name == "exec" && cl.multi && cl.txWrites()) {
		return "READONLY You can't write against a read only replica."
	}
	if g&replproto.GateStaleDeny != 0 && !spec.Stale() {
		return errMasterDown
	}
	// While a full sync is applied (after its transfer, like Redis's load
	// of a received RDB) the CLUSTER subcommands stay available, so
	// cluster tools (redis-cli --cluster) keep working against a loading
	// replica.
	if g&replproto.GateLoading != 0 && !spec.Loading() && !(spec.Parent != nil && spec.Parent.Name == "cluster") {
		return errLoading
	}
	return ""
}

// IsReplicaRole reports whether HELLO and similar should say "replica".
func (s *Server) IsReplicaRole() bool {
	return s.replGate.Load()&replproto.GateReplica != 0
}

// ReplConf is a connection's replication state: what REPLCONF said
// before PSYNC (netio/replcmd fills it), then the feed written to it.
type ReplConf struct {
	Port int
	IP   string
	Capa []string
	// WaitCancel cancels the connection's WAIT in progress, if any (run
	// when the connection closes).
	WaitCancel func()

	feed *feedConn
}

func (cl *client) replState() *ReplConf {
	if cl.rs == nil {
		cl.rs = &ReplConf{}
	}
	return cl.rs
}

// ReplConf is the connection's replication state (created on first use).
func (x *Ctx) ReplConf() *ReplConf { return x.C.replState() }

// Feed is the replica feed this connection carries since PSYNC, or nil.
func (x *Ctx) Feed() replproto.FeedConn {
	if rs := x.C.rs; rs != nil && rs.feed != nil {
		return rs.feed
	}
	return nil
}

// StartFeed makes this connection a replica's feed (PSYNC): frames the
// engine writes to the returned FeedConn follow every reply the
// connection has queued.
func (x *Ctx) StartFeed() replproto.FeedConn {
	fc := newFeedConn(x.C)
	x.C.replState().feed = fc
	x.C.feed.Store(fc)
	x.C.setFlag(clientFlagReplica, true)
	return fc
}

// InMulti reports that the connection is inside MULTI.
func (x *Ctx) InMulti() bool { return x.C.multi }

// RemoteHost is the client's IP address (its address without the port).
func (x *Ctx) RemoteHost() string { return hostOf(x.C.addr) }

func hostOf(addr string) string {
	if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		return strings.Trim(addr[:i], "[]")
	}
	return addr
}

// ---- the feed side of a replica's connection

// feedConn implements replproto.FeedConn. Frames are queued under mu and written by
// the connection's loop after every reply of the connection (PSYNC's
// included) is out.
type feedConn struct {
	cl *client

	mu      sync.Mutex
	buf     []byte
	spare   []byte
	queued  atomic.Int64 // len(buf)
	kernel  atomic.Int64 // gnet's outbound buffer after the last flush
	closed  atomic.Bool
	onClose []func()
	armed   bool // a delayed flush is pending (under mu)
	timer   *time.Timer
}

func newFeedConn(cl *client) *feedConn { return &feedConn{cl: cl} }

// Feed writes are coalesced: a flush is scheduled on the loop once
// feedFlushBytes are queued, else feedFlushDelay after the first queued
// frame. Scheduling one per frame (one per shard turn) would cost a loop
// wake-up and a write syscall per client read of the primary.
const (
	feedFlushBytes = 64 << 10
	feedFlushDelay = 200 * time.Microsecond
)

func (f *feedConn) Write(hdr, payload []byte) bool {
	if f.closed.Load() {
		return false
	}
	f.mu.Lock()
	f.buf = append(f.buf, hdr...)
	f.buf = append(f.buf, payload...)
	n := len(f.buf)
	f.queued.Store(int64(n))
	arm := n < feedFlushBytes && !f.armed
	if arm {
		f.armed = true
		if f.timer == nil {
			f.timer = time.AfterFunc(feedFlushDelay, f.fire)
		} else {
			f.timer.Reset(feedFlushDelay)
		}
	}
	f.mu.Unlock()
	if !arm && n >= feedFlushBytes {
		f.cl.scheduleFlush()
	}
	return true
}

func (f *feedConn) fire() {
	f.mu.Lock()
	f.armed = false
	f.mu.Unlock()
	f.cl.scheduleFlush()
}

// Flush asks the loop to write what is queued now (GETACK, end of sync).
func (f *feedConn) Flush() { f.cl.scheduleFlush() }

func (f *feedConn) Pending() int64 { return f.queued.Load() + f.kernel.Load() }

func (f *feedConn) Refresh() { f.cl.scheduleFlush() }

func (f *feedConn) Close() {
	if !f.closed.Load() {
		_ = f.cl.conn.Close()
	}
}

func (f *feedConn) OnClose(fn func()) {
	f.mu.Lock()
	if f.closed.Load() {
		f.mu.Unlock()
		fn()
		return
	}
	f.onClose = append(f.onClose, fn)
	f.mu.Unlock()
}

func (f *feedConn) Addr() string { return f.cl.addr }

// flushFeed writes the queued frames (loop only). It runs after the
// connection's replies, once none is pending.
func (cl *client) flushFeed() {
	f := cl.rs.feed
	f.mu.Lock()
	b := f.buf
	f.buf = f.spare[:0]
	f.queued.Store(0)
	f.mu.Unlock()
	if len(b) > 0 {
		cl.write(b)
	}
	if cap(b) <= 4<<20 {
		f.spare = b[:0]
	} else {
		f.spare = nil
	}
	f.kernel.Store(int64(cl.conn.OutboundBuffered()))
}

// closeFeed runs when a replica's connection closes (loop).
func (cl *client) closeFeed() {
	if rs := cl.rs; rs != nil {
		if rs.WaitCancel != nil {
			rs.WaitCancel()
			rs.WaitCancel = nil
		}
		if f := rs.feed; f != nil {
			f.mu.Lock()
			f.closed.Store(true)
			fns := f.onClose
			f.onClose = nil
			f.buf, f.spare = nil, nil
			if f.timer != nil {
				f.timer.Stop()
			}
			f.mu.Unlock()
			for _, fn := range fns {
				fn()
			}
		}
	}
}
