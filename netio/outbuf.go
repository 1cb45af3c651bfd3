package netio

import (
	"time"

	"github.com/slotd/slotd/netio/config"
)

// Output buffer limits (client-output-buffer-limit). What a client has not
// yet received lives in three places: pushes queued by publishers and
// invalidations (ps.push, any goroutine), completed reply groups waiting
// behind an unfinished one (cl.queue, loop only), and gnet's outbound buffer
// once the socket is full (loop only). The loop measures the last two at the
// end of every flush (checkOutput) and publishes the sum in ps.outLast, so a
// publisher on another goroutine checks push+outLast against the limits
// without touching loop state. A client over the hard limit, or over the
// soft limit for longer than its seconds, is closed and further pushes to it
// are dropped: memory per client stays near the hard limit.

// outLimCache holds the limits; replaced whole on CONFIG SET.
type outLimCache struct {
	l config.ClientBufferLimits
}

// outLimits returns the output limits of a class. The hot path is one
// atomic load: the cache is refreshed by the config change hook.
func (s *Server) outLimits(class config.ClientClass) config.BufferLimit {
	if c := s.outLim.Load(); c != nil {
		return c.l[class]
	}
	c := &outLimCache{l: s.Cfg.ClientOutputBufferLimits()}
	if s.outLim.CompareAndSwap(nil, c) {
		s.Cfg.OnChange("client-output-buffer-limit", func(string) {
			s.outLim.Store(&outLimCache{l: s.Cfg.ClientOutputBufferLimits()})
		})
		// A change between reading the limits and hooking up is not lost.
		s.outLim.Store(&outLimCache{l: s.Cfg.ClientOutputBufferLimits()})
	}
	return s.outLim.Load().l[class]
}

// outClass is the client's limit class, as Redis chooses it (a primary's
// link counts as normal).
func (cl *client) outClass() config.ClientClass {
	switch cl.typ() {
	case clientTypePubSub:
		return config.ClassPubSub
	case clientTypeReplica:
		return config.ClassReplica
	}
	return config.ClassNormal
}

// overLimit applies the client's limits to its output size; the caller
// holds ps.mu. Redis's rule: over the hard limit, or over the soft limit
// continuously for more than soft-seconds. Under both limits it costs no
// clock read.
func (cl *client) overLimit(size int64) bool {
	l := cl.srv.outLimits(cl.outClass())
	if l.Hard > 0 && size >= l.Hard {
		return true
	}
	p := &cl.ps
	if l.Soft > 0 && size >= l.Soft {
		now := time.Now().UnixMilli()
		if p.softAt == 0 {
			p.softAt = now
			p.soft.Store(true)
			return false
		}
		return now-p.softAt > l.SoftSeconds*1000
	}
	if p.softAt != 0 {
		p.softAt = 0
		p.soft.Store(false)
	}
	return false
}

// checkOutput measures what the client still holds after a flush (gnet's
// outbound buffer and completed groups queued behind a pending one) and
// applies the limits; runs on the loop at the end of every flush.
func (cl *client) checkOutput() {
	out := int64(cl.conn.OutboundBuffered())
	for _, g := range cl.queue {
		if g.done.Load() {
			out += int64(g.size())
		}
	}
	p := &cl.ps
	if out == 0 && !p.soft.Load() {
		if p.outLast.Load() != 0 {
			p.outLast.Store(0)
		}
		return
	}
	p.outLast.Store(out)
	p.mu.Lock()
	over := !p.dead && cl.overLimit(out+int64(len(p.push)))
	if over {
		p.dead = true
		p.push = nil
	}
	p.mu.Unlock()
	if over {
		cl.closeOverLimit()
	}
}

// closeOverLimit closes a client that went over its output limit; loop
// only.
func (cl *client) closeOverLimit() {
	cl.srv.Log.Warn().Str("client", cl.addr).Msg("closing client that reached its output buffer limit")
	cl.closed = true
	cl.pend = nil
	_ = cl.conn.Close()
}

// outputMemory is CLIENT LIST's omem: output not yet written to the socket.
// Safe from any goroutine (an estimate between flushes).
func (cl *client) outputMemory() int64 {
	p := &cl.ps
	p.mu.Lock()
	n := int64(len(p.push))
	p.mu.Unlock()
	return n + p.outLast.Load()
}

// size is the number of reply bytes a completed group holds.
func (g *group) size() int {
	n := len(g.local.B)
	for _, i := range g.used {
		n += len(g.batches[i].Out.B)
	}
	for _, d := range g.deferred {
		n += len(d.W.B)
	}
	return n
}
