package netio

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/resp"
	"github.com/slotd/slotd/slots"
)

// LoopHandler runs a command on the connection's event loop.
type LoopHandler func(x *Ctx)

// loopHandlers are the loop commands' implementations by spec ID (Loop).
var (
	loopMu       sync.Mutex
	loopHandlers []LoopHandler
)

// Loop binds h as the implementation of the loop command s and returns s
// (for registering it with command.Register).
func Loop(s *command.Spec, h LoopHandler) *command.Spec {
	id := command.Bind(s)
	loopMu.Lock()
	defer loopMu.Unlock()
	if id >= len(loopHandlers) {
		loopHandlers = append(loopHandlers, make([]LoopHandler, id+1-len(loopHandlers))...)
	}
	loopHandlers[id] = h
	return s
}

// Ctx is the execution context of a loop command.
type Ctx struct {
	S    *Server
	C    *client
	Args [][]byte
	Spec *command.Spec
	W    *resp.Writer

	// InTx is set when EXEC replays the command.
	InTx bool

	g        *group
	deferred bool
	noReply  bool // the handler added its own order entry (EXEC)
}

// Defer turns this command's reply into one completed later: start runs
// once the read's batches have been sent; it (or whoever it hands the
// Deferred to) writes the reply to d.W and calls d.Done. Arguments needed
// later must be copied, the network buffer is reused.
func (x *Ctx) Defer(start func(d *Deferred)) {
	d := &Deferred{g: x.g, start: start}
	d.W.Proto = x.C.proto
	x.g.order = append(x.g.order, src{kind: srcDeferred, idx: uint16(len(x.g.deferred))})
	x.g.deferred = append(x.g.deferred, d)
	x.deferred = true
}

// Proto is the client's protocol version.
func (x *Ctx) Proto() int { return x.C.proto }

const (
	errCrossSlot   = "CROSSSLOT Keys in request don't hash to the same slot"
	errUnbound     = "CLUSTERDOWN Hash slot not served"
	errClusterDown = "CLUSTERDOWN The cluster is down"
	errDownRO      = "CLUSTERDOWN The cluster is down and only accepts read commands"
)

// dispatch routes one parsed command. args point into the read buffer. It
// returns false, doing nothing, for a barrier command (see Spec.Barrier)
// that must wait for the commands before it to finish in their shards.
// Under CLIENT REPLY OFF or SKIP the command's reply is dropped.
func (s *Server) dispatch(cl *client, g *group, args [][]byte) bool {
	if !cl.replies.active() {
		return s.dispatchCmd(cl, g, args)
	}
	saved := cl.replies
	cl.replies.skip, cl.replies.skipNext = cl.replies.skipNext, false
	n0 := len(g.order)
	if !s.dispatchCmd(cl, g, args) {
		cl.replies = saved // dispatched again later
		return false
	}
	if spec := command.Lookup(args[0]); spec != nil && subscriptionVerb(spec.Name) {
		// (Un)subscribe confirmations are pushes: Redis writes them
		// whatever CLIENT REPLY says.
		cl.replies.skip = false
		return true
	}
	cl.replies.mute(g, n0)
	return true
}

func (s *Server) dispatchCmd(cl *client, g *group, args [][]byte) bool {
	spec, errMsg := s.resolve(cl, args)
	if errMsg == "" && spec.Barrier && !cl.multi && (len(g.used) > 0 || len(cl.queue) > 0) {
		return false
	}
	if errMsg == "" && (g.isolated || spec.ScriptCache || spec.Isolated || spec.TxControl || cl.isolatedInFlight()) &&
		!s.pipelineOrder(cl, g, spec, args) {
		return false
	}
	if errMsg == "" && s.postpones(cl, spec) {
		cl.postponed = true
		return false
	}
	if errMsg == errLoading && s.loadHolds(cl) {
		return false
	}
	cl.loadHeld = false
	cl.totalCmds.Add(1)
	if errMsg != "" {
		if cl.multi && spec != nil && spec.Name == "exec" {
			// A refused EXEC discards the transaction, naming why (Redis's
			// execCommandAbort; plain errors lose their ERR code there).
			s.replyErr(g, spec, "EXECABORT Transaction discarded because of: "+strings.TrimPrefix(errMsg, "ERR "))
			cl.discardTx()
			s.unwatchIn(cl, g)
			return true
		}
		s.replyErr(g, spec, errMsg)
		if cl.multi {
			cl.multiErr = true
		}
		return true
	}
	if msg := s.subscribedModeErr(cl, spec, args); msg != "" {
		s.replyErr(g, spec, msg)
		return true
	}
	if cl.multi && spec.WatchCmd {
		s.replyErr(g, spec, "ERR WATCH inside MULTI is not allowed")
		return true
	}
	if cl.multi && !spec.TxControl {
		s.queue(cl, g, spec, args)
		return true
	}
	s.execute(cl, g, spec, args, false)
	cl.trackAfter(spec)
	return true
}

// resolve finds the spec (subcommand included) and checks arity, auth and
// the server's refusals; with an error, spec is nil only when the command
// itself is unknown.
func (s *Server) resolve(cl *client, args [][]byte) (*command.Spec, string) {
	spec := command.Lookup(args[0])
	if spec == nil {
		return nil, unknownCommand(args)
	}
	if spec.Subcommands != nil && !spec.Bound() || (spec.Subcommands != nil && len(args) >= 2 && spec.Sub(args[1]) != nil) {
		if len(args) < 2 {
			return nil, "ERR wrong number of arguments for '" + spec.Name + "' command"
		}
		sub := spec.Sub(args[1])
		if sub == nil {
			return nil, "ERR unknown subcommand '" + Trunc(string(args[1]), 128) + "'. Try " + strings.ToUpper(spec.Name) + " HELP."
		}
		spec = sub
	}
	if !spec.ArityOK(len(args)) {
		return spec, "ERR wrong number of arguments for '" + spec.Name + "' command"
	}
	if !cl.authed && !spec.NoAuth() && s.authRequired(cl) {
		return spec, "NOAUTH Authentication required."
	}
	if u := cl.user.User(); !u.Unrestricted {
		if msg := s.aclRefusal(cl, u, spec, args, false); msg != "" {
			return spec, msg
		}
	}
	if s.diskErr.Load() != nil && !(spec.Exec == command.Shard && s.clusterMode()) {
		if msg := s.diskCheck(cl, spec); msg != "" {
			return spec, msg
		}
	}
	if s.replGate.Load() != 0 {
		if msg := s.gateCheck(cl, spec); msg != "" {
			return spec, msg
		}
	}
	return spec, ""
}

// execute runs a resolved command: on the loop, in its shard, or fanned
// out. inTx marks commands replayed by EXEC.
func (s *Server) execute(cl *client, g *group, spec *command.Spec, args [][]byte, inTx bool) {
	s.deliverBefore(cl, spec.Name) // batched PUBLISHes first (pubsub_batch.go)
	if s.Cluster == nil && spec.Parent != nil && spec.Parent.Name == "cluster" {
		// Redis checks this when CLUSTER runs, after lookup and arity.
		s.replyErr(g, spec, errClusterDisabled)
		return
	}
	if inTx {
		if u := cl.user.User(); !u.Unrestricted {
			if msg := s.aclRefusal(cl, u, spec, args, true); msg != "" {
				s.replyErr(g, spec, msg)
				return
			}
		}
	}
	if cl.lastCmd.Load() != &spec.Name {
		cl.lastCmd.Store(&spec.Name)
	}
	switch spec.Exec {
	case command.Loop:
		x := Ctx{S: s, C: cl, Args: args, Spec: spec, W: &g.local, g: g, InTx: inTx}
		g.local.Proto = cl.proto
		mark := len(g.local.B)
		t0 := time.Now()
		s.callLoop(loopHandlers[spec.ID], &x)
		if !x.deferred && !x.noReply {
			if len(g.local.B) > mark && g.local.B[mark] == '-' {
				s.stats.errorReplies.Add(1)
			}
			ns := time.Since(t0).Nanoseconds()
			s.cmdStats.Called(spec, ns/1000, g.local.B[mark:])
			s.loopLatency(spec, ns)
			s.slowLoop(cl, spec, args, ns/1000)
			g.endLocal()
		} else {
			ns := time.Since(t0).Nanoseconds()
			if x.deferred {
				s.slowDeferred(cl, spec, args, t0, g.deferred[len(g.deferred)-1])
			} else {
				s.loopLatency(spec, ns)
			}
			s.cmdStats.Called(spec, ns/1000, nil)
		}
	case command.Shard:
		slot, errMsg := s.route(cl, spec, args)
		if errMsg == errCrossSlot && !s.Table.Load().Cluster && s.trySplit(cl, g, spec, args) {
			break
		}
		var spread []int // the shards of a spread command's keys (spread.go)
		if errMsg == errCrossSlot && !s.Table.Load().Cluster {
			if sl, sh, ok := s.spreadShards(spec, args, inTx); ok {
				slot, errMsg, spread = sl, "", sh
			}
		}
		if errMsg == errCrossSlot && spec.ArgError != nil && !s.Table.Load().Cluster {
			if msg := spec.ArgError(args); msg != "" {
				errMsg = msg
			}
		}
		if errMsg != "" {
			s.replyErr(g, spec, errMsg)
			return
		}
		i := 0
		if slot >= 0 {
			i = s.shards.Of(slot)
		}
		if spread != nil {
			i = spread[len(spread)-1]
		}
		if !inTx && s.scriptBusy(cl, spec, i) {
			s.replyErr(g, spec, command.ErrBusyScript)
			return
		}
		b := g.batch(i)
		b.Add(spec, args, slot, cl.proto, cl.asking)
		c := &b.Cmds[len(b.Cmds)-1]
		c.DB = cl.db.Load()
		c.Client = cl.id // scripts and SORT find the caller's ACL user by it
		cl.trackCmd(c)
		if spread != nil {
			c.Spread = true
			if len(spread) > 1 {
				for _, j := range spread[:len(spread)-1] {
					g.batch(j) // taken by the joint step, maybe empty
				}
				g.joint, g.isolated = true, true
			}
		}
		if inTx || spec.WatchCmd {
			c.NoBlock = inTx
			if spec.WatchCmd {
				c.Watch = cl.watchState(i)
			}
		}
		g.order = append(g.order, src{kind: srcShard, idx: uint16(i)})
		if !inTx && spec.Blocking() {
			// Nothing after a blocking command runs before it is served:
			// stop reading this client's input until its reply is out.
			cl.paused = true
			cl.blockedShard, cl.blockedBatch = i, b
			cl.setFlag(clientFlagBlocked, true)
		}
	case command.Fanout:
		if !inTx && !spec.AllowBusy() && s.shards.AnyScriptBusy() {
			s.replyErr(g, spec, command.ErrBusyScript)
			return
		}
		s.cmdStats.Called(spec, 0, nil) // one call, whatever the shard count
		s.cmdStats.Latency(spec, 0)
		// One atomic step over every shard, as in Redis: no client sees
		// half a FLUSHALL or SWAPDB, nor a DBSIZE or KEYS count half an
		// MSET (see group.joint).
		g.joint = s.shards.N() > 1
		merge := spec.Merge
		db := cl.db.Load()
		for i := 0; i < s.shards.N(); i++ {
			b := g.batch(i)
			b.Add(spec, args, -1, cl.proto, false)
			b.Cmds[len(b.Cmds)-1].DB = db
		}
		g.order = append(g.order, src{kind: srcFanout, idx: uint16(len(g.fanouts))})
		g.fanouts = append(g.fanouts, fanout{merge: merge, args: copyArgs(args), proto: cl.proto})
	}
	if s.mon.n.Load() > 0 {
		s.feedMonitors(cl, spec, args)
	}
	if spec.Name != "asking" && !inTx && !cl.multi {
		// Redis clears ASKING only outside MULTI: ASKING before MULTI
		// covers the whole transaction, EXEC's replays included.
		cl.asking = false
	}
}

// scriptBusy: shard i runs a script past lua-time-limit, so other clients'
// commands for it get BUSY (the script's own client waits for it, and
// allow_busy commands such as WATCH queue behind it).
func (s *Server) scriptBusy(cl *client, spec *command.Spec, i int) bool {
	busy, owner := s.shards.ScriptBusy(i)
	return busy && owner != uint64(cl.id) && !spec.AllowBusy()
}

// route computes the slot a shard command runs in and applies the cluster
// routing rules. It returns -1 for keyless commands with no Route. In
// cluster mode the MISCONF refusal comes after routing, as in Redis: a node
// that cannot persist still redirects keys it does not own.
func (s *Server) route(cl *client, spec *command.Spec, args [][]byte) (int, string) {
	slot, msg := s.routeSlot(cl, spec, args)
	if msg == "" && s.diskErr.Load() != nil && s.clusterMode() {
		if m := s.diskCheck(cl, spec); m != "" {
			return 0, m
		}
	}
	return slot, msg
}

func (s *Server) routeSlot(cl *client, spec *command.Spec, args [][]byte) (int, string) {
	slot := -1
	if spec.Route != nil {
		sl, msg := spec.Route(args)
		if msg != "" {
			return 0, msg
		}
		return sl, ""
	}
	var idxBuf [8]int
	idx, err := spec.KeyIndexes(idxBuf[:0], args)
	if err != nil {
		return 0, err.Error()
	}
	t := s.Table.Load()
	for j, k := range idx {
		ks := slots.HashSlot(args[k])
		if j == 0 {
			// Redis checks the first key's slot is served before looking
			// at the others.
			if t.Cluster && t.Owner[ks] == slots.NoOwner {
				return 0, errUnbound
			}
			slot = ks
			continue
		}
		if ks != slot {
			if spec.ActorKeys && !t.Cluster && s.shards.Of(ks) == s.shards.Of(slot) {
				continue
			}
			return 0, errCrossSlot
		}
	}
	if slot < 0 || !t.Cluster {
		return slot, ""
	}
	owner := t.Owner[slot]
	if !t.OK || int(owner) == t.Self && s.leaseExpired() {
		if !t.AllowReadsWhenDown {
			return 0, errClusterDown
		}
		if spec.WritesWith(args) {
			return 0, errDownRO
		}
	}
	if int(owner) != t.Self {
		// MIGRATE works in any open slot, as in Redis (keys can be moved
		// back from an importing node).
		if t.Importing != nil && (cl.asking || spec.Is("asking") || spec.Name == "migrate") {
			if _, ok := t.Importing[slot]; ok {
				return slot, ""
			}
		}
		if t.Master >= 0 && int(owner) == t.Master && cl.readonly && !spec.WritesWith(args) {
			return slot, ""
		}
		n := &t.Nodes[owner]
		if s.shut.lingering.Load() {
			s.shut.lastMoved.Store(time.Now().UnixNano())
			s.shut.moved.Add(1)
		}
		return 0, "MOVED " + strconv.Itoa(slot) + " " + n.Endpoint()
	}
	return slot, ""
}

func (s *Server) replyErr(g *group, spec *command.Spec, msg string) {
	s.stats.errorReplies.Add(1)
	command.Rejected(s.cmdStats, spec, msg)
	g.local.Error(msg)
	g.endLocal()
}

func unknownCommand(args [][]byte) string {
	var b strings.Builder
	b.WriteString("ERR unknown command '")
	b.WriteString(Trunc(string(args[0]), 128))
	b.WriteString("', with args beginning with: ")
	n := 0
	for _, a := range args[1:] {
		if n >= 128 {
			break
		}
		part := "'" + Trunc(string(a), 128-n) + "' "
		n += len(part)
		b.WriteString(part)
	}
	return b.String()
}

func Trunc(s string, n int) string {
	if n < 0 {
		n = 0
	}
	if len(s) > n {
		return s[:n]
	}
	return s
}

func copyArgs(args [][]byte) [][]byte {
	n := 0
	for _, a := range args {
		n += len(a)
	}
	buf := make([]byte, 0, n)
	out := make([][]byte, len(args))
	for i, a := range args {
		start := len(buf)
		buf = append(buf, a...)
		out[i] = buf[start:len(buf):len(buf)]
	}
	return out
}

// RunFanout executes spec with this command's arguments across the shards;
// its merged reply takes this command's place (DEBUG DIGEST runs the
// engine's internal digest specs this way).
func (x *Ctx) RunFanout(spec *command.Spec) {
	x.noReply = true
	x.S.execute(x.C, x.g, spec, x.Args, x.InTx)
}
