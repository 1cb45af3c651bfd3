package netio

import (
	"context"
	"sort"
	"sync"

	"github.com/panjf2000/gnet/v2"

	"github.com/slotd/slotd/netio/resp"
	"github.com/slotd/slotd/slots"
)

// Pub/sub delivery: messages encoded into a subscriber's pending push
// buffer, written by its loop behind the replies already queued
// (pubsub.go explains the order).

// pushMsg is a run of messages encoded as RESP2 arrays; the RESP3 push
// form differs only in the first byte of each ('>' for '*').
type pushMsg struct {
	b      []byte
	starts []int
}

var pushMsgPool = sync.Pool{New: func() any { return &pushMsg{} }}

func getPushMsg() *pushMsg { return pushMsgPool.Get().(*pushMsg) }

func putPushMsg(m *pushMsg) {
	if cap(m.b) <= 64<<10 {
		m.reset()
		pushMsgPool.Put(m)
	}
}

func (m *pushMsg) reset() { m.b, m.starts = m.b[:0], m.starts[:0] }

// add appends one message to the run.
func (m *pushMsg) add(kind string, pattern, channel, msg []byte) {
	m.starts = append(m.starts, len(m.b))
	w := resp.Writer{B: m.b, Proto: 2}
	encodeMessage(&w, kind, pattern, channel, msg)
	m.b = w.B
}

func encodeMessage(w *resp.Writer, kind string, pattern, channel, msg []byte) {
	n := 3
	if pattern != nil {
		n = 4
	}
	if w.Proto >= 3 {
		w.Push(n)
	} else {
		w.Array(n)
	}
	w.BulkString(kind)
	if pattern != nil {
		w.Bulk(pattern)
	}
	w.Bulk(channel)
	w.Bulk(msg)
}

// queueEncoded queues a run of encoded messages (see pushMsg) for cl: a
// plain append under the client's lock, the hot path of PUBLISH.
func (cl *client) queueEncoded(m *pushMsg) {
	p := &cl.ps
	p.mu.Lock()
	if p.dead {
		p.mu.Unlock()
		return
	}
	at := len(p.push)
	p.push = append(p.push, m.b...)
	if cl.hasFlag(clientFlagResp3) {
		for _, st := range m.starts {
			p.push[at+st] = '>'
		}
	}
	cl.pushed()
}

// queuePush encodes a push into cl's pending buffer and schedules a flush
// on its loop.
func (cl *client) queuePush(enc func(w *resp.Writer)) {
	p := &cl.ps
	p.mu.Lock()
	if p.dead {
		p.mu.Unlock()
		return
	}
	w := resp.Writer{B: p.push, Proto: 2}
	if cl.hasFlag(clientFlagResp3) {
		w.Proto = 3
	}
	enc(&w)
	p.push = w.B
	cl.pushed()
}

// pushed finishes queuing a push: pushes past the output limit mark the
// client for closing instead of growing memory, and the first push since
// the last flush schedules one. Called with ps.mu held; releases it.
func (cl *client) pushed() {
	p := &cl.ps
	if cl.overLimit(int64(len(p.push)) + p.outLast.Load()) {
		p.dead = true
		p.push = nil
	}
	first := !p.queued
	if first {
		p.queued = true
		p.pending.Store(true)
	}
	p.mu.Unlock()
	if first {
		cl.srv.loopPushes(cl.loop).add(cl)
	}
}

// loopPush batches the flushes pushes need per event loop: one Execute
// wakes the loop for every client of it that got pushes meanwhile, rather
// than one per client (a PUBLISH to 50 subscribers costs at most one
// wake-up per loop).
type loopPush struct {
	loop      gnet.EventLoop
	mu        sync.Mutex
	dirty     []*client
	spare     []*client
	scheduled bool
}

func (s *Server) loopPushes(l gnet.EventLoop) *loopPush {
	if v, ok := s.pushLoops.Load(l); ok {
		return v.(*loopPush)
	}
	v, _ := s.pushLoops.LoadOrStore(l, &loopPush{loop: l})
	return v.(*loopPush)
}

func (lp *loopPush) add(cl *client) {
	lp.mu.Lock()
	lp.dirty = append(lp.dirty, cl)
	sched := !lp.scheduled
	lp.scheduled = true
	lp.mu.Unlock()
	if sched {
		if err := lp.loop.Execute(context.Background(), lp); err != nil {
			lp.mu.Lock()
			lp.scheduled = false
			lp.mu.Unlock()
		}
	}
}

// Run implements gnet.Runnable: flush every client with pending pushes.
func (lp *loopPush) Run(context.Context) error {
	lp.mu.Lock()
	list := lp.dirty
	lp.dirty = lp.spare[:0]
	lp.scheduled = false
	lp.mu.Unlock()
	for i, cl := range list {
		cl.flush()
		list[i] = nil
	}
	lp.mu.Lock()
	if cap(list) <= 4096 {
		lp.spare = list[:0]
	}
	lp.mu.Unlock()
	return nil
}

// takePushes moves pending pushes into a completed group at the end of the
// reply queue; runs on the loop at flush time. A client over its output
// limit is closed.
func (cl *client) takePushes() {
	p := &cl.ps
	if !p.pending.Load() {
		return
	}
	p.mu.Lock()
	dead := p.dead
	buf := p.push
	p.push = p.back
	p.back = nil
	p.queued = false
	p.pending.Store(dead)
	p.mu.Unlock()
	if dead {
		cl.closeOverLimit()
		return
	}
	if len(buf) == 0 {
		p.back = buf
		return
	}
	if len(cl.queue) == 0 {
		// Nothing ahead of the pushes (the usual case for a subscriber):
		// write them now; gnet copies what the socket does not take, so
		// the buffer comes back for the next round.
		cl.write(buf)
		if cap(buf) <= maxPushBuffer {
			p.back = buf[:0]
		}
		return
	}
	g := newGroup(cl, cl.srv.shards.N())
	g.local.B, buf = buf, g.local.B[:0]
	g.pending.Store(0)
	g.done.Store(true)
	cl.queue = append(cl.queue, g)
	if cap(buf) <= maxPushBuffer {
		p.back = buf // reuse the group's old buffer
	}
}

// maxPushBuffer caps the push buffer a client keeps between flushes.
const maxPushBuffer = 64 << 10

// pubsubClose drops a closing connection's subscriptions.
func (s *Server) pubsubClose(cl *client) {
	s.unsubscribeAll(cl)
	s.trackingClose(cl)
	cl.ps.mu.Lock()
	cl.ps.dead = true
	cl.ps.push = nil
	cl.ps.back = nil
	cl.ps.mu.Unlock()
}

// ShardSlotsLost sends sunsubscribe pushes to subscribers of shard channels
// whose slot this node no longer serves (Redis 7 does this so clients
// re-subscribe on the new owner). Safe from any goroutine.
func (s *Server) ShardSlotsLost(t *slots.Table) {
	r := &s.ps
	r.mu.RLock()
	var moved map[*client][]string
	for ch, subs := range r.subs[psShard] {
		slot := slots.HashSlot([]byte(ch))
		if !t.Cluster || int(t.Owner[slot]) == t.Self || (t.Master >= 0 && int(t.Owner[slot]) == t.Master) {
			continue
		}
		if moved == nil {
			moved = map[*client][]string{}
		}
		for _, cl := range subs.list {
			moved[cl] = append(moved[cl], ch)
		}
	}
	r.mu.RUnlock()
	for cl, chans := range moved {
		cl := cl
		chans := chans
		sort.Strings(chans)
		cl.onLoop(func() {
			for _, ch := range chans {
				if _, ok := cl.ps.subs[psShard][ch]; !ok {
					continue
				}
				delete(cl.ps.subs[psShard], ch)
				s.ps.remove(psShard, ch, cl)
				n := cl.subCount(psShard)
				c := []byte(ch)
				cl.queuePush(func(w *resp.Writer) { subReply(w, "sunsubscribe", c, false, n) })
			}
			cl.updateSubFlags()
		})
	}
}

// runFunc adapts a function to gnet.Runnable.
type runFunc func()

func (f runFunc) Run(context.Context) error { f(); return nil }

// onLoop runs fn on cl's event loop (skipped once the client is closed).
func (cl *client) onLoop(fn func()) {
	_ = cl.loop.Execute(context.Background(), runFunc(func() {
		if !cl.closed {
			fn()
		}
	}))
}
