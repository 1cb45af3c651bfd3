package engine

import (
	"context"
	"github.com/slotd/slotd/netio/acl"

	"github.com/slotd/slotd/actors/script"
	"github.com/slotd/slotd/netio/batch"
	"github.com/slotd/slotd/slots"
)

// Scripts and functions run in the shard's Lua VM (actors/script), on
// whatever goroutine runs the shard: the shard actor hands batches with
// scripts to its script worker (actors/shard), so a long script holds up
// no event loop. Busy replies and SCRIPT/FUNCTION KILL are the actor's
// business too (Host.ScriptBegin and friends).

// scriptGroup is the node-wide scripting state.
type scriptGroup struct {
	cache   *script.Cache
	libs    *script.Libraries
	routing *slots.Holder // the routing snapshot (cluster mode checks)
}

// scriptShard is one shard's scripting state.
type scriptShard struct {
	vm     *script.VM
	libGen uint64 // the registry generation the VM's libraries match
	active int    // scripts running now (a script's redis.call nests)
}

// Scripts is the node's script cache.
func (g *Group) Scripts() *script.Cache { return g.scripts.cache }

// Functions is the node's function registry (FUNCTION LOAD and friends).
func (g *Group) Functions() *script.Libraries { return g.scripts.libs }

// SetRouting gives the shards the routing snapshot, so scripts can refuse
// keys this node does not serve. Call before serving.
func (g *Group) SetRouting(h *slots.Holder) { g.scripts.routing = h }

func (g *Group) clusterMode() bool {
	h := g.scripts.routing
	if h == nil {
		return false
	}
	t := h.Load()
	return t != nil && t.Cluster
}

// HasScript reports whether b holds a script or function call (the actor
// runs such batches on its script worker).
func HasScript(b *batch.Batch) bool {
	for i := range b.Cmds {
		if isScriptSpec(b.Cmds[i].Spec) {
			return true
		}
	}
	return false
}

// runScript executes sc for the EVAL in c and writes its reply.
func (s *Shard) runScript(c *Call, sc *script.Script, keys, argv [][]byte, readOnly bool) {
	allowOOM := sc.Shebang && sc.Flags&script.FlagAllowOOM != 0
	s.runLua(c, readOnly, allowOOM, nil, func(vm *script.VM, ctx context.Context, h script.Host) {
		vm.Run(ctx, sc, keys, argv, h, c.W)
	})
}

// runLua runs a script or function (run, fn set) in this shard's VM for
// the call c, published to the Host while it runs.
func (s *Shard) runLua(c *Call, readOnly, allowOOM bool, fn *RunningFunction, run func(*script.VM, context.Context, script.Host)) {
	sh := &s.script
	if sh.vm == nil {
		sh.vm = script.NewVM()
	}
	sh.vm.SetMemoryLimit(s.group.ScriptMemoryLimit.Load())
	var owner uint64
	if s.cur != nil {
		owner = s.cur.TraceID() >> 32
	}
	ctx := s.host.ScriptBegin(owner, fn)
	defer s.host.ScriptEnd()
	sh.active++
	defer func() { sh.active-- }()
	// A context per run: coroutines derive theirs from it, and cancelling
	// it at the end releases those a script left suspended.
	runCtx, done := context.WithCancel(ctx)
	defer done()
	h := &scriptHost{s: s, slot: c.Slot, readOnly: readOnly, asking: c.Cmd.Asking, client: c.Cmd.Client,
		allowOOM: allowOOM}
	h.user = s.aclUser(c.Cmd.Client)
	defer s.UseDB(s.db) // a script's SELECT lasts until it ends
	run(sh.vm, runCtx, h)
	if sh.vm.Broken() {
		sh.vm = nil
	}
}

// aclUser is the restricted ACL user of a client (nil when it may run
// everything).
func (s *Shard) aclUser(client int64) *acl.User {
	if fn := s.group.ACLUser; fn != nil && client != 0 {
		if u := fn(client); u != nil && !u.Unrestricted {
			return u
		}
	}
	return nil
}

// FullKeyAccess reports whether the client of c may read every key with
// c's command (SORT's BY and GET patterns need it).
func (c *Call) FullKeyAccess(args [][]byte) bool {
	u := c.S.aclUser(c.Cmd.Client)
	return u == nil || acl.FullKeyAccess(u, c.Cmd.Spec, args, acl.PermRead)
}
