package netio

import (
	"sync"
	"sync/atomic"

	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/resp"
	"github.com/slotd/slotd/slots"
)

// Pub/sub: SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE and their UNSUBSCRIBE forms,
// PUBLISH, SPUBLISH and PUBSUB. A subscription is connection state (touched
// on the connection's loop) plus an entry in the node-wide registry that
// publishers on any loop read. A message for a subscriber is encoded into
// the subscriber's pending push buffer and its loop is asked to flush; the
// flush appends the pushes behind every reply already queued, so a push
// never lands inside a pipelined reply sequence and never overtakes the
// reply of a command that ran before it was published. A connection's
// PUBLISHes are delivered in batches (pubsub_batch.go); a RESP3 publisher's
// own copies go into its reply, before the count, as in Redis.
func registerPubsub() {
	ps := []string{"pubsub", "noscript", "loading", "stale"}
	cats := []string{"pubsub", "slow"}
	reg := func(name string, arity int, flags []string, first, last int, summary, since string, h func(*Ctx)) *command.Spec {
		s := Loop(&command.Spec{Name: name, Arity: arity, Flags: flags, Categories: cats, Group: "pubsub",
			Since: since, Summary: summary}, h)
		if first > 0 {
			s.First, s.Last, s.Step = first, last, 1
		}
		return s
	}
	pubCats := []string{"pubsub", "fast"}
	pub := func(s *command.Spec) *command.Spec { s.Categories = pubCats; return s }
	command.Register(
		reg("subscribe", -2, ps, 0, 0, "Listen for messages published to the given channels", "2.0.0", cmdSubscribe),
		reg("unsubscribe", -1, ps, 0, 0, "Stop listening for messages posted to the given channels", "2.0.0", cmdUnsubscribe),
		reg("psubscribe", -2, ps, 0, 0, "Listen for messages published to channels matching the given patterns", "2.0.0", cmdPSubscribe),
		reg("punsubscribe", -1, ps, 0, 0, "Stop listening for messages posted to channels matching the given patterns", "2.0.0", cmdPUnsubscribe),
		reg("ssubscribe", -2, ps, 1, -1, "Listen for messages published to the given shard channels", "7.0.0", cmdSSubscribe),
		reg("sunsubscribe", -1, ps, 1, -1, "Stop listening for messages posted to the given shard channels", "7.0.0", cmdSUnsubscribe),
		pub(reg("publish", 3, []string{"pubsub", "loading", "stale", "fast"}, 0, 0, "Post a message to a channel", "2.0.0", cmdPublish)),
		pub(reg("spublish", 3, []string{"pubsub", "loading", "stale", "fast"}, 1, 1, "Post a message to a shard channel", "7.0.0", cmdSPublish)),
	)
	sub := func(arity int, flags []string, summary, since string, h func(*Ctx)) *command.Spec {
		return Loop(&command.Spec{Arity: arity, Flags: flags, Categories: cats, Group: "pubsub", Since: since,
			Summary: summary}, h)
	}
	ls := []string{"pubsub", "loading", "stale"}
	command.Register(&command.Spec{Name: "pubsub", Arity: -2, Categories: []string{"slow"}, Group: "pubsub",
		Since: "2.8.0", Summary: "A container for Pub/Sub commands",
		Subcommands: map[string]*command.Spec{
			"channels":      sub(-2, ls, "List active channels", "2.8.0", pubsubChannels),
			"numsub":        sub(-2, ls, "Get the count of subscribers for channels", "2.8.0", pubsubNumSub),
			"numpat":        sub(2, ls, "Get the count of unique patterns pattern subscriptions", "2.8.0", pubsubNumPat),
			"shardchannels": sub(-2, ls, "List active shard channels", "7.0.0", pubsubShardChannels),
			"shardnumsub":   sub(-2, ls, "Get the count of subscribers for shard channels", "7.0.0", pubsubShardNumSub),
			"help": Loop(&command.Spec{Arity: 2, Flags: []string{"loading", "stale"}, Categories: []string{"slow"}, Group: "pubsub",
				Since: "6.2.0", Summary: "Show helpful text about the different subcommands"}, pubsubHelp),
		}})
	OnReset(func(x *Ctx) { x.S.unsubscribeAll(x.C) })
}

// Subscription kinds.
const (
	psChannel = iota
	psPattern
	psShard
)

var (
	subVerb   = [3]string{"subscribe", "psubscribe", "ssubscribe"}
	unsubVerb = [3]string{"unsubscribe", "punsubscribe", "sunsubscribe"}
)

// pubsubConn is a connection's pub/sub state (a field of client).
type pubsubConn struct {
	// subs are the connection's subscriptions by kind; loop only.
	subs [3]map[string]struct{}
	// counts mirror len(subs[k]) for CLIENT LIST on other goroutines.
	counts [3]atomic.Int32

	// mu guards the pending pushes written by publishers on any goroutine.
	mu     sync.Mutex
	push   []byte
	back   []byte   // the buffer last written, reused for push; loop only
	batch  pubBatch // PUBLISHes of this connection not yet delivered; loop only
	dead   bool     // over the output limit: drop further pushes, close
	queued bool     // in its loop's loopPush list
	// pending and soft mirror "push or dead" and "softAt != 0" so that a
	// flush with nothing to do costs two atomic loads, not a lock.
	pending atomic.Bool
	soft    atomic.Bool
	softAt  int64 // unix ms the soft limit was first exceeded, 0: under
	outLast atomic.Int64
}

// pubsubRegistry maps channels, patterns and shard channels to their
// subscribers node-wide.
type pubsubRegistry struct {
	mu   sync.RWMutex
	subs [3]map[string]*subList
}

// subList is one channel's subscribers: a slice to walk on publish (faster
// than a map) and each client's index in it for O(1) removal. Changed under
// the registry's write lock only.
type subList struct {
	list []*client
	idx  map[*client]int
}

func (r *pubsubRegistry) add(kind int, name string, cl *client) {
	r.mu.Lock()
	if r.subs[kind] == nil {
		r.subs[kind] = map[string]*subList{}
	}
	l := r.subs[kind][name]
	if l == nil {
		l = &subList{idx: map[*client]int{}}
		r.subs[kind][name] = l
	}
	if _, ok := l.idx[cl]; !ok {
		l.idx[cl] = len(l.list)
		l.list = append(l.list, cl)
	}
	r.mu.Unlock()
}

func (r *pubsubRegistry) remove(kind int, name string, cl *client) {
	r.mu.Lock()
	if l := r.subs[kind][name]; l != nil {
		if i, ok := l.idx[cl]; ok {
			last := len(l.list) - 1
			l.list[i] = l.list[last]
			l.idx[l.list[i]] = i
			l.list[last] = nil
			l.list = l.list[:last]
			delete(l.idx, cl)
		}
		if len(l.list) == 0 {
			delete(r.subs[kind], name)
		}
	}
	r.mu.Unlock()
}

// count is the number of channels (or patterns) with subscribers.
func (r *pubsubRegistry) count(kind int) int {
	r.mu.RLock()
	n := len(r.subs[kind])
	r.mu.RUnlock()
	return n
}

// numSubs is the number of subscribers of one channel; caller holds mu.
func (r *pubsubRegistry) numSubs(kind int, name []byte) int {
	if l := r.subs[kind][string(name)]; l != nil {
		return len(l.list)
	}
	return 0
}

// subscribed reports whether cl is in RESP2 subscribed mode terms: any
// subscription at all.
func (cl *client) subscribed() bool {
	p := &cl.ps
	return len(p.subs[0])+len(p.subs[1])+len(p.subs[2]) > 0
}

// subCount is what (UN)SUBSCRIBE replies report: channels+patterns, or
// shard channels for the sharded forms.
func (cl *client) subCount(kind int) int {
	if kind == psShard {
		return len(cl.ps.subs[psShard])
	}
	return len(cl.ps.subs[psChannel]) + len(cl.ps.subs[psPattern])
}

func (cl *client) updateSubFlags() {
	for k := range cl.ps.subs {
		cl.ps.counts[k].Store(int32(len(cl.ps.subs[k])))
	}
	cl.setFlag(clientFlagPubSub, cl.subscribed())
}

// subReply writes one (un)subscribe confirmation: a push in RESP3.
func subReply(w *resp.Writer, verb string, name []byte, null bool, count int) {
	if w.Proto >= 3 {
		w.Push(3)
	} else {
		w.Array(3)
	}
	w.BulkString(verb)
	if null {
		w.Null()
	} else {
		w.Bulk(name)
	}
	w.Int(int64(count))
}

func (s *Server) subscribe(x *Ctx, kind int) {
	cl := x.C
	for _, a := range x.Args[1:] {
		if cl.ps.subs[kind] == nil {
			cl.ps.subs[kind] = map[string]struct{}{}
		}
		name := string(a)
		if _, ok := cl.ps.subs[kind][name]; !ok {
			cl.ps.subs[kind][name] = struct{}{}
			s.ps.add(kind, name, cl)
		}
		subReply(x.W, subVerb[kind], a, false, cl.subCount(kind))
	}
	cl.updateSubFlags()
}

func (s *Server) unsubscribe(x *Ctx, kind int) {
	cl := x.C
	if len(x.Args) == 1 {
		s.unsubscribeKind(cl, kind, x.W)
		return
	}
	for _, a := range x.Args[1:] {
		name := string(a)
		if _, ok := cl.ps.subs[kind][name]; ok {
			delete(cl.ps.subs[kind], name)
			s.ps.remove(kind, name, cl)
		}
		subReply(x.W, unsubVerb[kind], a, false, cl.subCount(kind))
	}
	cl.updateSubFlags()
}

// unsubscribeKind drops every subscription of one kind, writing one
// confirmation each (or one with a null name when there was none) to w
// when w is not nil.
func (s *Server) unsubscribeKind(cl *client, kind int, w *resp.Writer) {
	names := make([]string, 0, len(cl.ps.subs[kind]))
	for n := range cl.ps.subs[kind] {
		names = append(names, n)
	}
	if w != nil && len(names) == 0 {
		subReply(w, unsubVerb[kind], nil, true, cl.subCount(kind))
	}
	for _, n := range names {
		delete(cl.ps.subs[kind], n)
		s.ps.remove(kind, n, cl)
		if w != nil {
			subReply(w, unsubVerb[kind], []byte(n), false, cl.subCount(kind))
		}
	}
	cl.updateSubFlags()
}

// unsubscribeAll drops every subscription silently (RESET, connection
// close).
func (s *Server) unsubscribeAll(cl *client) {
	for k := range cl.ps.subs {
		if len(cl.ps.subs[k]) > 0 {
			s.unsubscribeKind(cl, k, nil)
		}
	}
}

func cmdSubscribe(x *Ctx)    { x.S.subscribe(x, psChannel) }
func cmdPSubscribe(x *Ctx)   { x.S.subscribe(x, psPattern) }
func cmdUnsubscribe(x *Ctx)  { x.S.unsubscribe(x, psChannel) }
func cmdPUnsubscribe(x *Ctx) { x.S.unsubscribe(x, psPattern) }

// cmdSSubscribe routes its channels like keys in cluster mode: all in one
// slot (CROSSSLOT) served here (MOVED).
func cmdSSubscribe(x *Ctx) {
	if !x.S.routeShardChannels(x) {
		return
	}
	x.S.subscribe(x, psShard)
}

func cmdSUnsubscribe(x *Ctx) {
	if len(x.Args) > 1 && !x.S.routeShardChannels(x) {
		return
	}
	x.S.unsubscribe(x, psShard)
}

// routeShardChannels applies the key routing rules to the channel
// arguments; it writes the error and returns false when they fail. Outside
// cluster mode Redis does not check slots. A replica serves SSUBSCRIBE,
// SUNSUBSCRIBE and SPUBLISH for its primary's slots even without READONLY,
// as Redis 7.0 does (an SPUBLISH there reaches the whole shard over the
// bus).
func (s *Server) routeShardChannels(x *Ctx) bool {
	if !s.Table.Load().Cluster {
		return true
	}
	ro := x.C.readonly
	x.C.readonly = true
	_, msg := s.route(x.C, x.Spec, x.Args)
	x.C.readonly = ro
	if msg != "" {
		x.W.Error(msg)
		return false
	}
	return true
}

// cmdPublish answers with the receivers it reaches now and batches the
// delivery (pubsub_batch.go).
func cmdPublish(x *Ctx) {
	n := x.S.receivers(x.Args[1])
	selfDeliver(x, psChannel)
	x.C.ps.batch.add(x.Args[1], x.Args[2])
	if x.S.PublishHook != nil {
		x.S.PublishHook(x.Args[1], x.Args[2])
	}
	x.W.Int(int64(n))
}

func cmdSPublish(x *Ctx) {
	if !x.S.routeShardChannels(x) {
		return
	}
	selfDeliver(x, psShard)
	n := x.S.publishLocal(psShard, x.Args[1], x.Args[2], x.C)
	if x.S.SPublishHook != nil {
		x.S.SPublishHook(x.Args[1], x.Args[2])
	}
	x.W.Int(int64(n))
}

// publishFromScript is PUBLISH/SPUBLISH called by a Lua script (on a
// shard goroutine).
func (s *Server) publishFromScript(channel, msg []byte, sharded bool) int64 {
	if sharded {
		n := s.publishLocal(psShard, channel, msg, nil)
		if s.SPublishHook != nil {
			s.SPublishHook(channel, msg)
		}
		return int64(n)
	}
	n := s.publishLocal(psChannel, channel, msg, nil)
	if s.PublishHook != nil {
		s.PublishHook(channel, msg)
	}
	return int64(n)
}

// DeliverPublish delivers a message that arrived from another node over
// the cluster bus to this node's channel and pattern subscribers.
func (s *Server) DeliverPublish(channel, msg []byte) { s.publishLocal(psChannel, channel, msg, nil) }

// DeliverSPublish delivers a shard-channel message replicated from the
// slot's primary (the hook replication calls on replicas).
func (s *Server) DeliverSPublish(channel, msg []byte) { s.publishLocal(psShard, channel, msg, nil) }

// publishLocal pushes msg to this node's subscribers of channel (and, for
// plain channels, of matching patterns); it returns how many received it.
// The message is encoded once and its bytes appended to every subscriber's
// pending pushes.
// except is a publisher that got its own copy already (selfDeliver).
func (s *Server) publishLocal(kind int, channel, msg []byte, except *client) int {
	r := &s.ps
	n := 0
	r.mu.RLock()
	if l := r.subs[kind][string(channel)]; l != nil && len(l.list) > 0 {
		verb := "message"
		if kind == psShard {
			verb = "smessage"
		}
		m := getPushMsg()
		m.add(verb, nil, channel, msg)
		for _, cl := range l.list {
			if cl != except {
				cl.queueEncoded(m)
			}
		}
		n += len(l.list)
		putPushMsg(m)
	}
	if kind == psChannel && len(r.subs[psPattern]) > 0 {
		var m *pushMsg
		for pat, l := range r.subs[psPattern] {
			if !slots.Match([]byte(pat), channel, false) {
				continue
			}
			if m == nil {
				m = getPushMsg()
			}
			m.reset()
			m.add("pmessage", []byte(pat), channel, msg)
			for _, cl := range l.list {
				if cl != except {
					cl.queueEncoded(m)
				}
			}
			n += len(l.list)
		}
		if m != nil {
			putPushMsg(m)
		}
	}
	r.mu.RUnlock()
	return n
}

// selfDeliver writes a RESP3 publisher's own copies of its message into its
// reply, before the PUBLISH's count, where Redis puts them; the fan-out
// skips it. (A RESP2 client cannot publish while subscribed.)
func selfDeliver(x *Ctx, kind int) {
	cl := x.C
	if cl.proto < 3 || !cl.subscribed() {
		return
	}
	ch, msg := x.Args[1], x.Args[2]
	verb := "message"
	if kind == psShard {
		verb = "smessage"
	}
	if _, ok := cl.ps.subs[kind][string(ch)]; ok {
		encodeMessage(x.W, verb, nil, ch, msg)
	}
	if kind == psChannel {
		for pat := range cl.ps.subs[psPattern] {
			if slots.Match([]byte(pat), ch, false) {
				encodeMessage(x.W, "pmessage", []byte(pat), ch, msg)
			}
		}
	}
}

func pubsubChannels(x *Ctx)      { listChannels(x, psChannel) }
func pubsubShardChannels(x *Ctx) { listChannels(x, psShard) }

func listChannels(x *Ctx, kind int) {
	var pat []byte
	if len(x.Args) > 3 {
		x.W.Error("ERR wrong number of arguments for '" + x.Spec.Name + "' command")
		return
	}
	if len(x.Args) == 3 {
		pat = x.Args[2]
	}
	r := &x.S.ps
	r.mu.RLock()
	var names []string
	for ch := range r.subs[kind] {
		if pat == nil || slots.Match(pat, []byte(ch), false) {
			names = append(names, ch)
		}
	}
	r.mu.RUnlock()
	x.W.Array(len(names))
	for _, n := range names {
		x.W.BulkString(n)
	}
}

func pubsubNumSub(x *Ctx)      { numSub(x, psChannel) }
func pubsubShardNumSub(x *Ctx) { numSub(x, psShard) }

// numSub answers a flat array of channel, count pairs (an array in RESP3
// too, as Redis 7.0 does).
func numSub(x *Ctx, kind int) {
	r := &x.S.ps
	x.W.Array(2 * (len(x.Args) - 2))
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, ch := range x.Args[2:] {
		x.W.Bulk(ch)
		x.W.Int(int64(r.numSubs(kind, ch)))
	}
}

func pubsubNumPat(x *Ctx) { x.W.Int(int64(x.S.ps.count(psPattern))) }

func pubsubHelp(x *Ctx) {
	WriteHelp(x.W, "PUBSUB", []string{
		"CHANNELS [<pattern>]",
		"    Return the currently active channels matching a <pattern> (default: '*').",
		"NUMPAT",
		"    Return number of subscriptions to patterns.",
		"NUMSUB [<channel> ...]",
		"    Return the number of subscribers for the specified channels, excluding",
		"    pattern subscriptions(default: no channels).",
		"SHARDCHANNELS [<pattern>]",
		"    Return the currently active shard level channels matching a <pattern> (default: '*').",
		"SHARDNUMSUB [<shardchannel> ...]",
		"    Return the number of subscribers for the specified shard level channel(s)",
	})
}

// subscriptionVerb reports whether name is one of the (un)subscribe
// commands, whose confirmations are pushes.
func subscriptionVerb(name string) bool {
	for k := range subVerb {
		if name == subVerb[k] || name == unsubVerb[k] {
			return true
		}
	}
	return false
}

// subscribedModeAllowed: the commands a RESP2 client with subscriptions
// may send.
func subscribedModeAllowed(spec *command.Spec) bool {
	switch spec.Name {
	case "subscribe", "unsubscribe", "psubscribe", "punsubscribe", "ssubscribe", "sunsubscribe",
		"ping", "quit", "reset":
		return true
	}
	return false
}

// subscribedModeErr is the error for other commands in RESP2 subscribed
// mode ("" when the command may run).
func (s *Server) subscribedModeErr(cl *client, spec *command.Spec, args [][]byte) string {
	if cl.proto != 2 || !cl.subscribed() || subscribedModeAllowed(spec) {
		return ""
	}
	// Redis answers cluster redirections first.
	if spec.Exec == command.Shard && s.Table.Load().Cluster {
		if _, msg := s.route(cl, spec, args); msg != "" {
			return msg
		}
	}
	return "ERR Can't execute '" + spec.Name + "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"
}

// pingSubscribed answers PING in RESP2 subscribed mode: ["pong", arg].
func pingSubscribed(x *Ctx) bool {
	if x.C.proto != 2 || !x.C.subscribed() {
		return false
	}
	x.W.Array(2)
	x.W.BulkString("pong")
	if len(x.Args) == 2 {
		x.W.Bulk(x.Args[1])
	} else {
		x.W.BulkString("")
	}
	return true
}
