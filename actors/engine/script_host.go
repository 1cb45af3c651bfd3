package engine

import (
	"github.com/slotd/slotd/netio/acl"
	"math"
	"runtime/debug"
	"strconv"

	"github.com/rs/zerolog"

	"github.com/slotd/slotd/netio/batch"
	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/resp"
	"github.com/slotd/slotd/slots"
)

// Commands called by scripts (redis.call / redis.pcall). They run right
// here, inside the shard actor running the script, through the command's
// shard handler with a scratch reply writer; the VM turns the reply into
// Lua values.
//
// What a script can reach:
//   - keyed commands whose keys all hash to one slot served by this shard
//     actor (and, in cluster mode, owned by this node). Redis 7.0 lets a
//     script touch any key of a slot its node serves; slotd's slots live
//     in N actors, and a key whose slot belongs to another actor of this
//     node is refused with the same error as a key of another node
//     ("Script attempted to access a non local key in a cluster node").
//     Declaring the keys (with a hash tag) is what makes a script portable
//     across Redis Cluster and slotd alike.
//   - PING, ECHO, TIME and SELECT (answered here; the database is the
//     caller's again after the script) and DBSIZE (from the per-slot
//     key counters), among the commands that run on the event loop or on
//     every shard. The other loop and fanout commands (INFO, KEYS, SCAN,
//     RANDOMKEY, FLUSHALL, ...) are refused with "This Redis command is not
//     allowed from script".
//   - never commands flagged noscript or blocking, nor writes from a
//     read-only script (EVAL_RO, "#!lua flags=no-writes").

const (
	errScriptUnknown  = "Unknown Redis command called from script"
	errScriptArity    = "Wrong number of args calling Redis command from script"
	errScriptNotAllow = "This Redis command is not allowed from script"
	errScriptROWrite  = "Write commands are not allowed from read-only scripts."
	errScriptNonLocal = "Script attempted to access a non local key in a cluster node"
	errScriptDown     = "Script attempted to execute a command while the cluster is down"
	errScriptDownRO   = "Script attempted to execute a write command while the cluster is down and readonly"
	errScriptKilled   = "Script killed by user with SCRIPT KILL..."
)

// scriptHost implements script.Host for one script run.
type scriptHost struct {
	s        *Shard
	slot     int // the EVAL's slot (-1: no keys declared)
	readOnly bool
	asking   bool // the EVAL was sent after ASKING
	// allowOOM: the script's flags say allow-oom; dirty: it has written.
	allowOOM, dirty bool
	// user is the caller's ACL user when restricted (nil: allowed all);
	// client is the caller's id (for ACL LOG).
	user   *acl.User
	client int64
	idx    []int
	cmd    batch.Cmd
	call   Call
}

// lookupScriptCommand resolves a command (or container subcommand) by its
// arguments.
func lookupScriptCommand(args [][]byte) (*command.Spec, string) {
	spec := command.Lookup(args[0])
	if spec == nil {
		return nil, errScriptUnknown
	}
	if spec.Subcommands != nil && (!spec.Bound() || (len(args) >= 2 && spec.Sub(args[1]) != nil)) {
		if len(args) < 2 {
			return nil, errScriptArity
		}
		sub := spec.Sub(args[1])
		if sub == nil {
			return nil, errScriptUnknown
		}
		spec = sub
	}
	return spec, ""
}

// Known implements script.Host.
func (h *scriptHost) Known(args [][]byte) bool {
	spec, _ := lookupScriptCommand(args)
	return spec != nil
}

// Log implements script.Host: redis.log levels debug, verbose, notice and
// warning map to the node's debug, debug, info and warn.
func (h *scriptHost) Log(level int, msg string) {
	lv := [...]zerolog.Level{zerolog.DebugLevel, zerolog.DebugLevel, zerolog.InfoLevel, zerolog.WarnLevel}[level]
	h.s.log.WithLevel(lv).Msg(msg)
}

// Call implements script.Host.
func (h *scriptHost) Call(args [][]byte, w *resp.Writer) string {
	s := h.s
	spec, msg := lookupScriptCommand(args)
	if msg != "" {
		return msg
	}
	if !spec.ArityOK(len(args)) {
		return errScriptArity
	}
	if spec.Is("noscript") || spec.Blocking() {
		return errScriptNotAllow
	}
	if h.user != nil {
		if msg := h.aclRefusal(spec, args); msg != "" {
			return msg
		}
	}
	write := spec.Write()
	if write {
		if h.readOnly {
			return errScriptROWrite
		}
		if s.replica && s.group.ReplicaReadOnly.Load() {
			w.Error(ErrReadOnlyReplica)
			return ""
		}
		// Over maxmemory when the script started, a denyoom command is
		// refused until the script has written (Redis's scriptVerifyOOM:
		// it cannot stop half-way).
		if spec.DenyOOM() && s.oomAtStart && !h.allowOOM && !h.dirty {
			return "-" + ErrOOM
		}
		if !s.scriptWrites() {
			return errScriptKilled
		}
	}
	h.dirty = h.dirty || write
	switch {
	case spec.Exec == command.Loop:
		return h.loopCommand(spec, args, w)
	case spec.Exec == command.Fanout:
		if spec.Name == "dbsize" {
			w.Int(s.group.DBKeys(s.db))
			return ""
		}
		return errScriptNotAllow
	case spec.Route != nil || !spec.Bound():
		return errScriptNotAllow
	}

	slot := h.slot
	idx, err := spec.KeyIndexes(h.idx[:0], args)
	h.idx = idx
	if err != nil {
		// The command's own argument error, as it would reply it.
		w.Error(err.Error())
		return ""
	}
	for j, k := range idx {
		ks := slots.HashSlot(args[k])
		if j == 0 {
			slot = ks
		} else if ks != slot {
			return errScriptNonLocal
		}
	}
	if len(idx) > 0 {
		if msg := h.local(slot, write); msg != "" {
			return msg
		}
	} else if slot < 0 {
		slot = s.ID // keyless: any slot of this actor
	}

	if mon := s.group.Monitor; mon != nil && !spec.Admin() && !spec.Is("skip_monitor") {
		mon(s.db, args)
	}
	signalling := write && (len(s.blocked) > 0 || len(s.watched) > 0 || s.trackingActive())
	var existed uint64
	if signalling {
		existed = s.liveKeys(slot, args, idx)
	}
	cmd := &h.cmd
	*cmd = batch.Cmd{Spec: spec, Args: args, Slot: int32(slot), Proto: uint8(w.Proto), NoBlock: true, DB: int32(s.db)}
	c := &h.call
	*c = Call{Args: args, W: w, Slot: slot, Now: s.now, S: s, Cmd: cmd}
	mark := len(w.B)
	if !h.exec(spec, c) {
		// As a client command's panic (contain.go): the keys it declares
		// are restated inside the script's wrapped records.
		w.B = w.B[:mark]
		w.Error(errInternal(spec.Name))
		s.restate(cmd)
		return ""
	}
	if !write && spec.ReadOnly() && len(idx) > 0 {
		s.trackScriptRead(slot, idx, args)
	}
	if write && s.repl.on && !s.replica {
		// Scripts replicate their effects, each write as it streams itself.
		s.propagateAfter(c, spec, args, len(w.B) > mark && w.B[mark] == '-')
	}
	if signalling && !c.unchanged && (len(w.B) == mark || w.B[mark] != '-') {
		// As for client commands (Shard.runOne): a key missing before and
		// after was not modified.
		existed |= s.liveKeys(slot, args, idx)
		for i, k := range idx {
			if i < 64 && existed&(1<<uint(i)) == 0 {
				continue
			}
			s.signal(args[k])
		}
	}
	return ""
}

// exec runs the handler, turning a panic into false (as the shard does
// for client commands).
func (h *scriptHost) exec(spec *command.Spec, c *Call) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			h.s.Stats.Panics.Add(1)
			h.s.log.Error().Str("command", spec.Name).Interface("panic", r).Str("stack", string(debug.Stack())).
				Msg("command called from script panicked: contained, the script got an error")
			ok = false
		}
	}()
	handlerOf(spec)(c)
	return true
}

// local checks that slot's keys can be reached from this script: the slot
// belongs to this actor and, in cluster mode, to this node (Redis's
// scriptVerifyClusterState).
func (h *scriptHost) local(slot int, write bool) string {
	s := h.s
	if slot%s.n != s.ID {
		return errScriptNonLocal
	}
	rt := s.group.scripts.routing
	if rt == nil {
		return ""
	}
	t := rt.Load()
	if t == nil || !t.Cluster {
		return ""
	}
	if !t.OK {
		if !t.AllowReadsWhenDown {
			return errScriptDown
		}
		if write {
			return errScriptDownRO
		}
	}
	owner := int(t.Owner[slot])
	switch {
	case owner == t.Self:
	case h.asking && importing(t, slot):
		// ASKING carries over to the script, as in Redis.
	case !write && t.Master >= 0 && owner == t.Master:
		// A replica's script reads its master's slots (the EVAL itself
		// was only routed here for a READONLY client).
	default:
		return errScriptNonLocal
	}
	return ""
}

func importing(t *slots.Table, slot int) bool {
	_, ok := t.Importing[slot]
	return ok
}

// loopCommand answers the few event-loop commands scripts commonly call.
func (h *scriptHost) loopCommand(spec *command.Spec, args [][]byte, w *resp.Writer) string {
	switch spec.Name {
	case "ping":
		switch len(args) {
		case 1:
			w.Simple("PONG")
		case 2:
			w.Bulk(args[1])
		default:
			w.Error("ERR wrong number of arguments for 'ping' command")
		}
	case "echo":
		w.Bulk(args[1])
	case "select":
		id, ok := resp.ParseInt(args[1])
		switch {
		case !ok:
			w.Error(ErrNotInt)
		case id < math.MinInt32 || id > math.MaxInt32:
			w.Error("ERR value is out of range, value must between -2147483648 and 2147483647")
		case id != 0 && h.s.group.clusterMode():
			w.Error("ERR SELECT is not allowed in cluster mode")
		case id < 0 || id >= int64(len(h.s.dbs)):
			w.Error("ERR DB index is out of range")
		default:
			// The rest of the script runs in that database; the caller's
			// is restored when it ends (runLua), as in Redis 7.
			h.s.UseDB(int(id))
			w.OK()
		}
	case "publish", "spublish":
		// Scripts may publish (tracking.go: Tracking.Publish); SPUBLISH's
		// channel routes like a key.
		pub := h.s.group.Tracking.Publish
		if pub == nil {
			return errScriptNotAllow
		}
		sharded := spec.Name == "spublish"
		if sharded {
			if msg := h.local(slots.HashSlot(args[1]), false); msg != "" {
				return msg
			}
		}
		w.Int(pub(args[1], args[2], sharded))
	case "time":
		now := h.s.group.clock()
		w.Array(2)
		w.BulkString(strconv.FormatInt(now/1e6, 10))
		w.BulkString(strconv.FormatInt(now%1e6, 10))
	default:
		return errScriptNotAllow
	}
	return ""
}

// scriptWrites records that the running script writes; false means it was
// killed meanwhile and must not write.
func (s *Shard) scriptWrites() bool { return s.host.ScriptWrites() }

// aclRefusal checks a command the script calls against the caller's user
// (Redis's scriptVerifyACL): a refusal goes to ACL LOG (context lua) and
// fails the call.
func (h *scriptHost) aclRefusal(spec *command.Spec, args [][]byte) string {
	d, pos := acl.Check(h.user, spec, args)
	if d == acl.OK {
		return ""
	}
	if fn := h.s.group.ACLDenied; fn != nil {
		obj := spec.Name
		if d != acl.DeniedCmd {
			obj = string(args[pos])
		}
		fn(h.client, acl.Entry{Reason: d, Context: acl.CtxLua, Object: obj, Username: h.user.Name})
	}
	return "The user executing the script " + d.Message()
}
