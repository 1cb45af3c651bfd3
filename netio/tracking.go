package netio

import (
	"bytes"
	"sync"
	"sync/atomic"

	"github.com/slotd/slotd/netio/batch"
	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/resp"
)

// Client-side caching: CLIENT TRACKING, CACHING, GETREDIR, TRACKINGINFO.
// The shard owning a key records which clients read it (actors/shard
// tracking.go); invalidations come back through the Tracker implemented
// here and reach the client (or its REDIRECT target) as pushes, queued in
// order like pub/sub messages.
func registerTracking() {
	flags := []string{"noscript", "loading", "stale"}
	cats := []string{"slow", "connection"}
	sub := func(arity int, summary, since string, h func(*Ctx)) *command.Spec {
		return Loop(&command.Spec{Arity: arity, Flags: flags, Categories: cats, Group: "connection", Since: since,
			Summary: summary}, h)
	}
	command.AddSubcommand("client", "tracking", sub(-3, "Enable or disable server assisted client side caching support", "6.0.0", clientTracking))
	command.AddSubcommand("client", "caching", sub(3, "Instruct the server about tracking or not keys in the next request", "6.0.0", clientCaching))
	command.AddSubcommand("client", "getredir", sub(2, "Get tracking notifications redirection client ID if any", "6.0.0", clientGetRedir))
	command.AddSubcommand("client", "trackinginfo", sub(2, "Return information about server assisted client side caching for the current connection", "6.2.0", clientTrackingInfo))
	OnReset(func(x *Ctx) { x.S.disableTracking(x.C) })
}

// trackingConn is a connection's CLIENT TRACKING state (a field of
// client). The plain fields are loop-only; the atomics are read by shard
// goroutines delivering invalidations.
type trackingConn struct {
	on, bcast, optin, optout, noloop bool
	caching                          int8 // CLIENT CACHING for the next command: 1 yes, -1 no
	redirect                         int64
	prefixes                         [][]byte

	active atomic.Bool
	redir  atomic.Int64
	pfx    atomic.Pointer[[][]byte] // BCAST prefixes, immutable once stored
	broken atomic.Bool              // the redirect target went away
}

// trackingRegistry holds the tracking clients node-wide.
type trackingRegistry struct {
	once     sync.Once
	clients  sync.Map // id → *client with tracking on
	bcast    sync.Map // id → *client in BCAST mode
	n        atomic.Int64
	prefixes atomic.Int64
}

// Tracker is what the shards call to deliver invalidations (the wiring
// hands it to them).
func (s *Server) Tracker() interface {
	Invalidate(ids []int64, key []byte)
	Modified(key []byte, writer int64)
} {
	return (*tracker)(s)
}

// PublishFromScript runs PUBLISH (shard false) or SPUBLISH for a script
// and returns the number of receivers (the wiring hands it to the
// shards).
func (s *Server) PublishFromScript(channel, message []byte, shard bool) int64 {
	return s.publishFromScript(channel, message, shard)
}

func (s *Server) trackingClients() int64 { return s.trk.n.Load() }

func (s *Server) trackingTotals() (keys, items, prefixes int64) {
	k := s.shards.TrackedKeys()
	return k, k, s.trk.prefixes.Load()
}

// trackCmd tags a shard command with the client's tracking flags; called
// by execute for every command that goes to a shard.
func (cl *client) trackCmd(c *batch.Cmd) {
	t := &cl.track
	if !t.on {
		return
	}
	c.Client = cl.id
	if t.noloop {
		c.Track |= batch.TrackNoLoop
	}
	if t.bcast {
		return
	}
	if (t.optin && t.caching == 1) || (t.optout && t.caching != -1) || (!t.optin && !t.optout) {
		c.Track |= batch.TrackRead
	}
}

// trackAfter clears the one-command CLIENT CACHING flag once a command
// other than CLIENT CACHING and MULTI ran outside a transaction (inside
// one it covers the whole transaction, as in Redis).
func (cl *client) trackAfter(spec *command.Spec) {
	if cl.track.caching == 0 || cl.multi || spec.Name == "multi" || spec.Name == "client|caching" {
		return
	}
	cl.track.caching = 0
}

func clientTracking(x *Ctx) {
	cl := x.C
	var (
		redir                        int64
		bcast, optin, optout, noloop bool
		prefixes                     [][]byte
	)
	for i := 3; i < len(x.Args); i++ {
		a := x.Args[i]
		more := i+1 < len(x.Args)
		switch {
		case ArgIs(a, "redirect") && more:
			if redir != 0 {
				x.W.Error("ERR A client can only redirect to a single other client")
				return
			}
			i++
			id, ok := resp.ParseInt(x.Args[i])
			if !ok {
				x.W.Error(errNotInt)
				return
			}
			if x.S.clientByID(id) == nil {
				x.W.Error("ERR The client ID you want redirect to does not exist")
				return
			}
			redir = id
		case ArgIs(a, "bcast"):
			bcast = true
		case ArgIs(a, "optin"):
			optin = true
		case ArgIs(a, "optout"):
			optout = true
		case ArgIs(a, "noloop"):
			noloop = true
		case ArgIs(a, "prefix") && more:
			i++
			prefixes = append(prefixes, append([]byte(nil), x.Args[i]...))
		default:
			x.W.Error("ERR syntax error")
			return
		}
	}
	t := &cl.track
	switch {
	case ArgIs(x.Args[2], "on"):
		switch {
		case !bcast && len(prefixes) > 0:
			x.W.Error("ERR PREFIX option requires BCAST mode to be enabled")
			return
		case t.on && t.bcast != bcast:
			x.W.Error("ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode.")
			return
		case bcast && (optin || optout):
			x.W.Error("ERR OPTIN and OPTOUT are not compatible with BCAST")
			return
		case optin && optout:
			x.W.Error("ERR You can't specify both OPTIN mode and OPTOUT mode")
			return
		case optin && t.on && t.optout, optout && t.on && t.optin:
			x.W.Error("ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.")
			return
		}
		if bcast {
			if msg := prefixCollision(t.prefixes, prefixes); msg != "" {
				x.W.Error(msg)
				return
			}
		}
		x.S.enableTracking(cl, redir, bcast, optin, optout, noloop, prefixes)
	case ArgIs(x.Args[2], "off"):
		x.S.disableTracking(cl)
	default:
		x.W.Error("ERR syntax error")
		return
	}
	x.W.OK()
}

// prefixCollision checks BCAST prefixes against each other and the
// client's existing ones.
func prefixCollision(old, add [][]byte) string {
	for i, p := range add {
		for _, q := range old {
			if bytes.HasPrefix(p, q) || bytes.HasPrefix(q, p) {
				return "ERR Prefix '" + string(p) + "' overlaps with an existing prefix '" + string(q) + "'. Prefixes for a single client must not overlap."
			}
		}
		for j, q := range add {
			if i != j && (bytes.HasPrefix(p, q) || bytes.HasPrefix(q, p)) {
				return "ERR Prefix '" + string(p) + "' overlaps with another provided prefix '" + string(q) + "'. Prefixes for a single client must not overlap."
			}
		}
	}
	return ""
}

func (s *Server) enableTracking(cl *client, redir int64, bcast, optin, optout, noloop bool, prefixes [][]byte) {
	t := &cl.track
	if !t.on {
		s.trk.n.Add(1)
	}
	t.on, t.bcast, t.redirect = true, bcast, redir
	t.optin, t.optout, t.noloop = optin, optout, noloop
	t.caching = 0
	t.redir.Store(redir)
	t.broken.Store(false)
	s.trk.clients.Store(cl.id, cl)
	if bcast {
		if len(t.prefixes) == 0 && len(prefixes) == 0 {
			prefixes = [][]byte{{}} // the empty prefix: every key
		}
		all := append(append([][]byte(nil), t.prefixes...), prefixes...)
		s.trk.prefixes.Add(int64(len(all) - len(t.prefixes)))
		t.prefixes = all
		t.pfx.Store(&all)
		if _, loaded := s.trk.bcast.LoadOrStore(cl.id, cl); !loaded {
			s.shards.AddBcastClients(1)
		}
	}
	t.active.Store(true)
	cl.setFlag(clientFlagTracking, true)
}

func (s *Server) disableTracking(cl *client) {
	t := &cl.track
	if !t.on {
		return
	}
	t.active.Store(false)
	s.trk.clients.Delete(cl.id)
	if _, ok := s.trk.bcast.LoadAndDelete(cl.id); ok {
		s.shards.AddBcastClients(-1)
	}
	s.trk.prefixes.Add(-int64(len(t.prefixes)))
	s.trk.n.Add(-1)
	*t = trackingConn{}
	cl.setFlag(clientFlagTracking, false)
}

func (s *Server) trackingClose(cl *client) { s.disableTracking(cl) }

// clientByID finds a connected client.
func (s *Server) clientByID(id int64) *client {
	s.clientMu.Lock()
	cl := s.clients[id]
	s.clientMu.Unlock()
	return cl
}

func clientCaching(x *Ctx) {
	t := &x.C.track
	if !t.on {
		x.W.Error("ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled")
		return
	}
	switch {
	case ArgIs(x.Args[2], "yes"):
		if !t.optin {
			x.W.Error("ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.")
			return
		}
		t.caching = 1
	case ArgIs(x.Args[2], "no"):
		if !t.optout {
			x.W.Error("ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.")
			return
		}
		t.caching = -1
	default:
		x.W.Error("ERR syntax error")
		return
	}
	x.W.OK()
}

func clientGetRedir(x *Ctx) {
	if !x.C.track.on {
		x.W.Int(-1)
		return
	}
	x.W.Int(x.C.track.redirect)
}

func clientTrackingInfo(x *Ctx) {
	t := &x.C.track
	x.W.Map(3)
	x.W.BulkString("flags")
	var fl []string
	if !t.on {
		fl = append(fl, "off")
	} else {
		fl = append(fl, "on")
		if t.bcast {
			fl = append(fl, "bcast")
		}
		if t.optin {
			fl = append(fl, "optin")
			if t.caching == 1 {
				fl = append(fl, "caching-yes")
			}
		}
		if t.optout {
			fl = append(fl, "optout")
			if t.caching == -1 {
				fl = append(fl, "caching-no")
			}
		}
		if t.noloop {
			fl = append(fl, "noloop")
		}
		if t.redirect != 0 && t.broken.Load() {
			fl = append(fl, "broken_redirect")
		}
	}
	x.W.Set(len(fl))
	for _, f := range fl {
		x.W.BulkString(f)
	}
	x.W.BulkString("redirect")
	if !t.on {
		x.W.Int(-1)
	} else {
		x.W.Int(t.redirect)
	}
	x.W.BulkString("prefixes")
	x.W.Array(len(t.prefixes))
	for _, p := range t.prefixes {
		x.W.Bulk(p)
	}
}

// tracker implements engine.Tracker.
type tracker Server

func (tr *tracker) Invalidate(ids []int64, key []byte) {
	s := (*Server)(tr)
	if ids == nil {
		s.trk.clients.Range(func(_, v any) bool {
			s.sendInvalidation(v.(*client), nil)
			return true
		})
		return
	}
	for _, id := range ids {
		if v, ok := s.trk.clients.Load(id); ok {
			s.sendInvalidation(v.(*client), key)
		}
	}
}

func (tr *tracker) Modified(key []byte, writer int64) {
	s := (*Server)(tr)
	s.trk.bcast.Range(func(k, v any) bool {
		if k.(int64) == writer {
			return true
		}
		cl := v.(*client)
		p := cl.track.pfx.Load()
		if p == nil {
			return true
		}
		for _, pre := range *p {
			if bytes.HasPrefix(key, pre) {
				s.sendInvalidation(cl, key)
				break
			}
		}
		return true
	})
}

// sendInvalidation pushes an invalidation for key (nil: everything) to
// cl, or to its REDIRECT target: as a RESP3 push, or for a RESP2 target
// subscribed to __redis__:invalidate as a pub/sub message.
func (s *Server) sendInvalidation(cl *client, key []byte) {
	if !cl.track.active.Load() {
		return
	}
	target := cl
	if id := cl.track.redir.Load(); id != 0 {
		target = s.clientByID(id)
		if target == nil {
			// Redis tells the client every time an invalidation is lost.
			cl.track.broken.Store(true)
			if cl.hasFlag(clientFlagResp3) {
				cl.queuePush(func(w *resp.Writer) {
					w.Push(2)
					w.BulkString("tracking-redir-broken")
					w.Int(id)
				})
			}
			return
		}
	}
	resp3 := target.hasFlag(clientFlagResp3)
	if !resp3 && (cl == target || !target.hasFlag(clientFlagPubSub)) {
		return // a RESP2 client cannot receive pushes
	}
	target.queuePush(func(w *resp.Writer) {
		if w.Proto >= 3 {
			w.Push(2)
			w.BulkString("invalidate")
		} else {
			w.Array(3)
			w.BulkString("message")
			w.BulkString("__redis__:invalidate")
		}
		if key == nil {
			w.Null()
			return
		}
		w.Array(1)
		w.Bulk(key)
	})
}

// trackRedir is CLIENT LIST's redir field: -1 when not tracking, else the
// redirect target (0: none). Safe from any goroutine.
func (cl *client) trackRedir() int64 {
	if !cl.track.active.Load() {
		return -1
	}
	return cl.track.redir.Load()
}
