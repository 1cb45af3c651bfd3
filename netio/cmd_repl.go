package netio

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/replproto"
	"github.com/slotd/slotd/netio/resp"
)

// Replication commands: REPLICAOF / SLAVEOF, ROLE and WAIT for users;
// REPLCONF and PSYNC for the replication protocol between slotd nodes.
// The engine (actors/repl) implements replproto.Replication; the loop handlers only
// parse, check and hand over. After PSYNC a connection carries the
// primary's feed: the engine writes frames to it through a replproto.FeedConn, and
// the replica keeps sending REPLCONF ACK on it.

const (
	errMasterDown = "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."
	errLoading    = "LOADING Redis is loading the dataset in memory"
	errWaitOnRepl = "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 " +
		"if a replica is configured to be writable (which is not the default) writes to replicas are just " +
		"local and are not propagated."
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

// replClient is a connection's replication state: what REPLCONF said
// before PSYNC, then the feed written to it.
type replClient struct {
	port int
	ip   string
	capa []string

	feed       *feedConn
	waitCancel func()
}

func (cl *client) replState() *replClient {
	if cl.rs == nil {
		cl.rs = &replClient{}
	}
	return cl.rs
}

func registerCmdRepl() {
	adminNS := []string{"admin", "noscript", "stale", "no_async_loading"}
	command.Register(
		Loop(&command.Spec{Name: "replicaof", Arity: 3, Flags: adminNS,
			Categories: []string{"admin", "slow", "dangerous"}, Group: "server", Since: "5.0.0",
			Summary: "Make the server a replica of another instance, or promote it as master."}, cmdReplicaOf),
		Loop(&command.Spec{Name: "slaveof", Arity: 3, Flags: adminNS,
			Categories: []string{"admin", "slow", "dangerous"}, Group: "server", Since: "1.0.0",
			Summary: "Make the server a replica of another instance, or promote it as master."}, cmdReplicaOf),
		Loop(&command.Spec{Name: "role", Arity: 1, Flags: []string{"noscript", "loading", "stale", "fast"},
			Categories: []string{"admin", "fast", "dangerous"}, Group: "server", Since: "2.8.12",
			Summary: "Return the role of the instance in the context of replication"}, cmdRole),
		Loop(&command.Spec{Name: "wait", Arity: 3, Flags: []string{"noscript"},
			Categories: []string{"slow", "connection"}, Group: "generic", Since: "3.0.0",
			Tips:    []string{"request_policy:all_shards", "response_policy:agg_min"},
			Summary: "Wait for the synchronous replication of all the write commands sent in the context of the current connection"}, cmdWait),
		Loop(&command.Spec{Name: "replconf", Arity: -1, Flags: []string{"admin", "noscript", "loading", "stale", "allow_busy"},
			Categories: []string{"admin", "slow", "dangerous"}, Group: "server", Since: "3.0.0",
			Summary: "An internal command for configuring the replication stream"}, cmdReplConf),
		Loop(&command.Spec{Name: "psync", Arity: -3, Flags: []string{"admin", "noscript", "no_async_loading", "no_multi"},
			Categories: []string{"admin", "slow", "dangerous"}, Group: "server", Since: "2.8.0",
			Summary: "Internal command used for replication"}, cmdPSync),
		Loop(&command.Spec{Name: "sync", Arity: 1, Flags: []string{"admin", "noscript", "no_async_loading", "no_multi"},
			Categories: []string{"admin", "slow", "dangerous"}, Group: "server", Since: "1.0.0",
			Summary: "Internal command used for replication"}, cmdSync),
	)
	RegisterDebug("set-active-expire", []string{"SET-ACTIVE-EXPIRE <0|1>",
		"    Setting it to 0 disables expiring keys in background when they are not accessed (otherwise the Redis",
		"    behavior). Setting it to 1 reenables back the default."}, 3, debugSetActiveExpire)
}

// cmdReplicaOf implements REPLICAOF host port | NO ONE (and SLAVEOF).
func cmdReplicaOf(x *Ctx) {
	if x.S.clusterMode() {
		x.W.Error("ERR REPLICAOF not allowed in cluster mode.")
		return
	}
	if x.S.Repl == nil {
		x.W.Error("ERR replication is not available")
		return
	}
	if ArgIs(x.Args[1], "no") && ArgIs(x.Args[2], "one") {
		x.W.Simple(x.S.Repl.ReplicaOf("", 0))
		return
	}
	port, ok := resp.ParseInt(x.Args[2])
	if !ok || port < 0 || port > 65535 {
		x.W.Error("ERR Invalid master port")
		return
	}
	x.W.Simple(x.S.Repl.ReplicaOf(string(x.Args[1]), int(port)))
}

func cmdRole(x *Ctx) {
	if x.S.Repl == nil {
		x.W.Array(3)
		x.W.BulkString("master")
		x.W.Int(0)
		x.W.Array(0)
		return
	}
	x.S.Repl.Role(x.W)
}

// cmdWait implements WAIT numreplicas timeout.
func cmdWait(x *Ctx) {
	if x.S.Repl != nil && x.S.Repl.IsReplica() {
		x.W.Error(errWaitOnRepl)
		return
	}
	n, ok := resp.ParseInt(x.Args[1])
	if !ok {
		x.W.Error("ERR value is not an integer or out of range")
		return
	}
	ms, ok := resp.ParseInt(x.Args[2])
	if !ok {
		x.W.Error("ERR timeout is not an integer or out of range")
		return
	}
	if ms < 0 {
		x.W.Error("ERR timeout is negative")
		return
	}
	if x.S.Repl == nil {
		x.W.Int(0)
		return
	}
	noBlock := x.InTx
	rs := x.C.replState()
	x.Defer(func(d *Deferred) {
		// reply may run before Wait returns (a shard run inline).
		rs.waitCancel = x.S.Repl.Wait(n, time.Duration(ms)*time.Millisecond, noBlock, func(k int64) {
			d.W.Int(k)
			d.Done()
		})
	})
}

// cmdReplConf implements REPLCONF option value [option value ...]: the
// options a replica sends before PSYNC, and ACK (no reply) after it.
func cmdReplConf(x *Ctx) {
	if len(x.Args)%2 == 0 {
		x.W.Error("ERR syntax error")
		return
	}
	rs := x.C.replState()
	for i := 1; i < len(x.Args); i += 2 {
		opt, val := x.Args[i], x.Args[i+1]
		switch {
		case ArgIs(opt, "listening-port"):
			p, ok := resp.ParseInt(val)
			if !ok {
				x.W.Error("ERR value is not an integer or out of range")
				return
			}
			rs.port = int(p)
		case ArgIs(opt, "ip-address"):
			rs.ip = string(val)
		case ArgIs(opt, "capa"):
			rs.capa = append(rs.capa, strings.ToLower(string(val)))
		case ArgIs(opt, "ack"), ArgIs(opt, "fack"):
			// Acknowledgements come on a replica's feed connection and get
			// no reply.
			if rs.feed != nil && x.S.Repl != nil && ArgIs(opt, "ack") {
				x.S.Repl.Ack(rs.feed, string(val))
			}
			return
		case ArgIs(opt, "getack"), ArgIs(opt, "rdb-only"), ArgIs(opt, "rdb-filter-only"):
		default:
			x.W.Error("ERR Unrecognized REPLCONF option: " + string(opt))
			return
		}
	}
	x.W.OK()
}

// cmdPSync implements PSYNC replid offsets: the connection becomes the
// replica's feed once the reply is out.
func cmdPSync(x *Ctx) {
	if x.C.multi || x.InTx {
		x.W.Error("ERR Command not allowed inside a transaction")
		return
	}
	if x.S.Repl == nil {
		x.W.Error("ERR replication is not available")
		return
	}
	rs := x.C.replState()
	if rs.feed != nil {
		return // already a replica connection: ignored, as Redis does
	}
	req := replproto.PSyncRequest{ReplID: string(x.Args[1]), Offsets: string(x.Args[2]), ListeningPort: rs.port,
		IP: rs.ip, Capa: rs.capa}
	if req.IP == "" {
		req.IP = hostOf(x.C.addr)
	}
	fc := newFeedConn(x.C)
	rs.feed = fc
	x.C.setFlag(clientFlagReplica, true)
	srv := x.S
	x.Defer(func(d *Deferred) {
		srv.Repl.PSync(req, fc, func(line string, isErr bool) {
			if isErr {
				d.W.Error(line)
			} else {
				d.W.Simple(line)
			}
			d.Done()
		})
	})
}

// debugSetActiveExpire implements DEBUG SET-ACTIVE-EXPIRE 0|1.
func debugSetActiveExpire(x *Ctx) {
	n, ok := resp.ParseInt(x.Args[2])
	if !ok {
		x.W.Error("ERR value is not an integer or out of range")
		return
	}
	x.S.shards.SetActiveExpire(n != 0)
	x.W.OK()
}

func cmdSync(x *Ctx) {
	x.W.Error("ERR SYNC is not supported: slotd replicates to slotd replicas with PSYNC")
}

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
		if rs.waitCancel != nil {
			rs.waitCancel()
			rs.waitCancel = nil
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
