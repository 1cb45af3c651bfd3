package enginetest

import (
	"math"
	"strings"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/netio/batch"
	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/resp"
	"github.com/slotd/slotd/slots"
)

// Error texts of the checks a node's event loop makes (netio's wording,
// which is Redis's).
const (
	errCrossSlot       = "CROSSSLOT Keys in request don't hash to the same slot"
	errClusterDisabled = "ERR This instance has cluster support disabled"
)

// Client is one connection's state: its protocol, its transaction and its
// WATCH set. Its commands run one at a time, in order; a blocking command
// that cannot be served holds the client until it is (Reply). The keys of
// one command must hash to one slot: where a standalone node splits DEL,
// UNLINK, EXISTS, TOUCH, MGET, MSET or WATCH over the slots of its keys
// (netio), a Client answers CROSSSLOT, as a node in cluster mode does.
type Client struct {
	e     *Engine
	id    int64
	proto int
	db    int32 // the database SELECTed

	multi, multiErr bool
	txq             []queued
	watch           *batch.WatchState

	waiting *round   // the command in flight, nil when none
	held    *round   // a command parsed but not sent yet (Hold)
	replies [][]byte // complete replies not read yet
}

// queued is a command held by MULTI.
type queued struct {
	spec *command.Spec
	args [][]byte
	slot int // slot of its keys, -1 when keyless
}

// Client opens a connection speaking RESP proto (2 or 3).
func (e *Engine) Client(proto int) *Client {
	e.clients++
	return &Client{e: e, id: e.clients, proto: proto}
}

// Do runs one command and returns its exact reply bytes.
func (c *Client) Do(args ...string) string {
	c.Send(args...)
	return c.Reply()
}

// Send runs one command without waiting for its reply (which Reply
// returns). A client blocked in a command takes no other.
func (c *Client) Send(args ...string) { c.SendBytes(byteArgs(args)) }

func byteArgs(args []string) [][]byte {
	a := make([][]byte, len(args))
	for i, s := range args {
		a[i] = []byte(s)
	}
	return a
}

// SendBytes is Send with binary arguments.
func (c *Client) SendBytes(args [][]byte) {
	if r := c.parse(args); r != nil {
		c.start(r)
	}
}

// Hold parses one command as a node's event loop does when it reads it —
// what the loop does at once (answering MULTI, queuing, EXEC's WATCH
// bookkeeping) happens now — but its shard commands reach the shard only
// at Release, as a loop sends a read's batches once it has parsed the
// whole read. Other clients' commands may run in between.
func (c *Client) Hold(args ...string) { c.held = c.parse(byteArgs(args)) }

// Release sends the command Hold parsed; its reply comes as Send's does.
func (c *Client) Release() {
	r := c.held
	if r == nil {
		panic("enginetest: nothing held")
	}
	c.held = nil
	c.start(r)
}

// parse dispatches one command into a round of its own (nil for an empty
// command, which a node skips).
func (c *Client) parse(args [][]byte) *round {
	if c.waiting != nil || c.held != nil {
		panic("enginetest: client sends a command while blocked in another or holding one")
	}
	if len(args) == 0 {
		return nil
	}
	r := &round{proto: c.proto, b: &batch.Batch{}}
	r.b.Done = r
	c.dispatch(r, args)
	return r
}

// Blocked reports whether the client waits in a blocking command.
func (c *Client) Blocked() bool {
	c.collect()
	return c.waiting != nil
}

// Reply returns the oldest reply not read yet. When the client is blocked
// in a command, the virtual clock moves to the command's timeout; a
// command that waits without one, with no other client to serve it, is a
// mistake of the caller and panics.
func (c *Client) Reply() string {
	for {
		c.collect()
		if len(c.replies) > 0 {
			r := c.replies[0]
			c.replies = c.replies[1:]
			return string(r)
		}
		if c.waiting == nil {
			panic("enginetest: no reply to read")
		}
		t := c.e.nextTimer()
		if t == nil {
			panic("enginetest: the command blocks forever and no client can serve it")
		}
		c.e.advanceTo(max(t.at, c.e.nowUS))
	}
}

// start sends r's batch, when it has commands, to the shard.
func (c *Client) start(r *round) {
	if len(r.b.Cmds) == 0 {
		c.replies = append(c.replies, r.stitch())
		return
	}
	r.b.Seal()
	c.e.shard.Run(r.b, c.e.nowMS())
	c.e.shard.EndTurn()
	c.waiting = r
	c.collect()
}

// collect moves the reply of a command that completed to replies.
func (c *Client) collect() {
	if r := c.waiting; r != nil && r.done {
		c.waiting = nil
		c.replies = append(c.replies, r.stitch())
	}
}

// round is one command's way through the shard: the batch of the shard
// commands it ran (several for EXEC) and where each part of the reply
// comes from.
type round struct {
	proto int
	b     *batch.Batch
	order []src
	done  bool
}

// src is one part of a reply.
type src struct {
	local  []byte        // written here, or
	cmd    int           // index of a command in the batch (-1: local)
	merge  command.Merge // a fanout's merge of the shard's part
	args   [][]byte      // the fanout's arguments
	txN    int           // > -1: EXEC's header over the next txN parts
	marker int           // EXEC's transaction marker in the batch (-1: none)
}

// BatchDone implements batch.Completer.
func (r *round) BatchDone(*batch.Batch) { r.done = true }

func (r *round) local(fn func(w *resp.Writer)) {
	w := resp.Writer{Proto: r.proto}
	fn(&w)
	r.order = append(r.order, src{local: w.B, cmd: -1, txN: -1})
}

func (r *round) errReply(msg string) { r.local(func(w *resp.Writer) { w.Error(msg) }) }

// stitch writes the parts in order, as the event loop does.
func (r *round) stitch() []byte {
	w := resp.Writer{Proto: r.proto}
	skip := 0
	for _, s := range r.order {
		if skip > 0 {
			skip-- // a transaction the shard did not run: no replies
			continue
		}
		switch {
		case s.txN >= 0:
			aborted, redirect := false, ""
			if s.marker >= 0 {
				switch v := r.b.Cmds[s.marker].Result.(type) {
				case bool:
					aborted = v
				case string:
					redirect = v
				}
			}
			switch {
			case redirect != "":
				w.Error(redirect)
				skip = s.txN
			case aborted:
				w.NullArray()
				skip = s.txN
			default:
				w.Array(s.txN)
			}
		case s.cmd < 0:
			w.B = append(w.B, s.local...)
		case s.merge != nil:
			s.merge(&w, s.args, []any{r.b.Cmds[s.cmd].Result})
		default:
			start := 0
			if s.cmd > 0 {
				start = r.b.Ends[s.cmd-1]
			}
			w.B = append(w.B, r.b.Out.B[start:r.b.Ends[s.cmd]]...)
		}
	}
	return w.B
}

// dispatch resolves and checks one command, then queues it (inside MULTI)
// or executes it, as netio's dispatch does.
func (c *Client) dispatch(r *round, args [][]byte) {
	spec, errMsg := command.Resolve(args)
	if errMsg != "" {
		if c.multi && spec != nil && spec.Name == "exec" {
			r.errReply("EXECABORT Transaction discarded because of: " + strings.TrimPrefix(errMsg, "ERR "))
			c.discardTx()
			c.unwatch()
			return
		}
		r.errReply(errMsg)
		if c.multi {
			c.multiErr = true
		}
		return
	}
	if c.multi && spec.WatchCmd {
		r.errReply("ERR WATCH inside MULTI is not allowed")
		return
	}
	if c.multi && !spec.TxControl {
		c.queue(r, spec, args)
		return
	}
	c.execute(r, spec, args, false)
}

// route computes a shard command's slot (-1: keyless) as a standalone
// node's event loop does; keys of one command must share a slot.
func route(spec *command.Spec, args [][]byte) (int, string) {
	if spec.Route != nil {
		return spec.Route(args)
	}
	var buf [8]int
	idx, err := spec.KeyIndexes(buf[:0], args)
	if err != nil {
		return 0, err.Error()
	}
	slot := -1
	for j, k := range idx {
		ks := slots.HashSlot(args[k])
		if j > 0 && ks != slot {
			if spec.ActorKeys {
				continue // one shard holds every slot: the command reaches them
			}
			return 0, errCrossSlot
		}
		slot = ks
	}
	return slot, ""
}

// execute runs a resolved command: here, or in the shard. inTx marks the
// commands EXEC replays.
func (c *Client) execute(r *round, spec *command.Spec, args [][]byte, inTx bool) {
	if spec.Parent != nil && spec.Parent.Name == "cluster" {
		r.errReply(errClusterDisabled)
		return
	}
	switch spec.Exec {
	case command.Loop:
		h := loopCmd(spec.Name)
		if h == nil {
			r.errReply("ERR '" + spec.Name + "' is served by a node's event loop, which enginetest does not run")
			return
		}
		h(c, r, args)
	case command.Shard:
		slot, errMsg := route(spec, args)
		if errMsg == errCrossSlot && spec.ArgError != nil {
			if msg := spec.ArgError(args); msg != "" {
				errMsg = msg
			}
		}
		if errMsg != "" {
			r.errReply(errMsg)
			return
		}
		c.add(r, spec, args, slot)
		cmd := &r.b.Cmds[len(r.b.Cmds)-1]
		cmd.NoBlock = inTx
		if spec.WatchCmd {
			cmd.Watch = c.watchState()
		}
		r.order = append(r.order, src{cmd: len(r.b.Cmds) - 1, txN: -1})
	case command.Fanout:
		c.add(r, spec, args, -1)
		r.order = append(r.order, src{cmd: len(r.b.Cmds) - 1, txN: -1, merge: spec.Merge, args: copyArgs(args)})
	}
}

func (c *Client) add(r *round, spec *command.Spec, args [][]byte, slot int) {
	r.b.Add(spec, args, slot, c.proto, false)
	r.b.Cmds[len(r.b.Cmds)-1].Client = c.id
	r.b.Cmds[len(r.b.Cmds)-1].DB = c.db
}

// queue validates a command issued inside MULTI and keeps a copy.
func (c *Client) queue(r *round, spec *command.Spec, args [][]byte) {
	slot := -1
	if spec.Exec == command.Shard {
		sl, errMsg := route(spec, args)
		if errMsg == errCrossSlot && spec.ArgError != nil && spec.ArgError(args) != "" {
			sl, errMsg = -1, "" // EXEC answers the argument error
		}
		if errMsg != "" {
			c.multiErr = true
			r.errReply(errMsg)
			return
		}
		if spec.Route == nil {
			slot = sl // a cursor-routed command binds no slot
		}
	}
	c.txq = append(c.txq, queued{spec: spec, args: copyArgs(args), slot: slot})
	r.local(func(w *resp.Writer) { w.Simple("QUEUED") })
}

func (c *Client) discardTx() {
	c.multi, c.multiErr = false, false
	c.txq = nil
}

func (c *Client) watchState() *batch.WatchState {
	if c.watch == nil {
		c.watch = &batch.WatchState{}
	}
	c.watch.Shards |= 1
	return c.watch
}

// unwatch drops the client's WATCH records.
func (c *Client) unwatch() {
	if c.watch != nil {
		c.e.shard.Unwatch(c.watch)
		c.watch = nil
	}
}

// loopCmd is the implementation of an event-loop command a Client
// answers itself (Serves), nil for the others.
func loopCmd(name string) func(c *Client, r *round, args [][]byte) {
	switch name {
	case "ping":
		return cmdPing
	case "echo":
		return func(_ *Client, r *round, args [][]byte) { r.local(func(w *resp.Writer) { w.Bulk(args[1]) }) }
	case "select":
		return cmdSelect
	case "multi":
		return cmdMulti
	case "exec":
		return cmdExec
	case "discard":
		return cmdDiscard
	case "unwatch":
		return func(c *Client, r *round, _ [][]byte) { c.unwatch(); r.local((*resp.Writer).OK) }
	}
	return nil
}

func cmdPing(_ *Client, r *round, args [][]byte) {
	switch len(args) {
	case 1:
		r.local(func(w *resp.Writer) { w.Simple("PONG") })
	case 2:
		r.local(func(w *resp.Writer) { w.Bulk(args[1]) })
	default:
		r.errReply("ERR wrong number of arguments for 'ping' command")
	}
}

// cmdSelect: the commands that follow run in that database.
func cmdSelect(c *Client, r *round, args [][]byte) {
	id, ok := resp.ParseInt(args[1])
	switch {
	case !ok:
		r.errReply(engine.ErrNotInt)
	case id < math.MinInt32 || id > math.MaxInt32:
		r.errReply("ERR value is out of range, value must between -2147483648 and 2147483647")
	case id < 0 || id >= int64(c.e.shard.Group().Databases()):
		r.errReply("ERR DB index is out of range")
	default:
		c.db = int32(id)
		r.local((*resp.Writer).OK)
	}
}

func cmdMulti(c *Client, r *round, _ [][]byte) {
	if c.multi {
		r.errReply("ERR MULTI calls can not be nested")
		return
	}
	c.multi, c.multiErr, c.txq = true, false, nil
	r.local((*resp.Writer).OK)
}

func cmdDiscard(c *Client, r *round, _ [][]byte) {
	if !c.multi {
		r.errReply("ERR DISCARD without MULTI")
		return
	}
	c.discardTx()
	c.unwatch()
	r.local((*resp.Writer).OK)
}

// cmdExec replays the queued commands into one batch behind a marker that
// the shard checks against the WATCH state, so they run in one turn.
func cmdExec(c *Client, r *round, _ [][]byte) {
	if !c.multi {
		r.errReply("ERR EXEC without MULTI")
		return
	}
	q, aborted, ws := c.txq, c.multiErr, c.watch
	c.discardTx()
	if aborted {
		c.unwatch()
		r.errReply("EXECABORT Transaction discarded because of previous errors.")
		return
	}
	slot := -1
	for _, qc := range q {
		if qc.spec.Exec != command.Shard || qc.slot < 0 {
			continue
		}
		if slot >= 0 && qc.slot != slot {
			c.unwatch()
			r.errReply(errCrossSlot)
			return
		}
		slot = qc.slot
	}
	if ws.Aborted(c.e.nowMS()) {
		c.unwatch()
		r.local((*resp.Writer).NullArray)
		return
	}
	marker := -1
	if slot >= 0 || ws != nil {
		r.b.Add(nil, nil, slot, c.proto, false)
		marker = len(r.b.Cmds) - 1
		r.b.Cmds[marker].Watch = ws
	}
	r.order = append(r.order, src{cmd: -1, txN: len(q), marker: marker})
	for _, qc := range q {
		c.execute(r, qc.spec, qc.args, true)
	}
	if marker >= 0 {
		n := int32(len(r.b.Cmds) - marker - 1)
		if n == 0 {
			n = -1 // nothing to skip; keep it a marker
		}
		r.b.Cmds[marker].TxBegin = n
	}
	// The marker drops the WATCH records when it has checked them, after
	// every write that reached the shard before the transaction.
	c.watch = nil
}

func copyArgs(args [][]byte) [][]byte {
	out := make([][]byte, len(args))
	for i, a := range args {
		out[i] = append([]byte(nil), a...)
	}
	return out
}
