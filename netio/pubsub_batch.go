package netio

import (
	"bytes"

	"github.com/slotd/slotd/slots"
)

// Publish batching. The PUBLISH commands a connection sends in one read
// are answered at once (the receiver count is taken then) but delivered
// together, just before the connection's next other command or at the end
// of the read, whichever comes first: always before the replies of the
// read go out. Consecutive messages to one channel are encoded into one
// buffer and appended to each subscriber under one lock, so a pipeline of
// 16 PUBLISHes to 50 subscribers costs 50 lock round trips instead of 800,
// which is most of the fan-out cost when publishers run on several loops.

// pubBatch is a connection's undelivered PUBLISHes; loop only.
type pubBatch struct {
	arena []byte   // channels and messages, copied from the read buffer
	ents  []pubEnt // in publish order
}

// pubEnt locates one message in the arena.
type pubEnt struct{ ch, msg, end int }

func (b *pubBatch) add(channel, msg []byte) {
	e := pubEnt{ch: len(b.arena)}
	b.arena = append(b.arena, channel...)
	e.msg = len(b.arena)
	b.arena = append(b.arena, msg...)
	e.end = len(b.arena)
	b.ents = append(b.ents, e)
}

func (b *pubBatch) channel(i int) []byte { return b.arena[b.ents[i].ch:b.ents[i].msg] }
func (b *pubBatch) message(i int) []byte { return b.arena[b.ents[i].msg:b.ents[i].end] }

// deliverPublishes delivers a connection's batched PUBLISHes, at the end
// of a read; a no-op when there are none.
func (s *Server) deliverPublishes(cl *client) {
	if len(cl.ps.batch.ents) > 0 {
		s.deliverBatch(cl)
	}
}

// deliverBefore delivers them before any command but another PUBLISH runs
// (called by execute; one length check in the common case).
func (s *Server) deliverBefore(cl *client, name string) {
	if len(cl.ps.batch.ents) > 0 && name != "publish" {
		s.deliverBatch(cl)
	}
}

func (s *Server) deliverBatch(cl *client) {
	b := &cl.ps.batch
	r := &s.ps
	m := getPushMsg()
	r.mu.RLock()
	for i := 0; i < len(b.ents); {
		ch := b.channel(i)
		j := i + 1
		for j < len(b.ents) && bytes.Equal(b.channel(j), ch) {
			j++
		}
		if l := r.subs[psChannel][string(ch)]; l != nil && len(l.list) > 0 {
			m.reset()
			for k := i; k < j; k++ {
				m.add("message", nil, ch, b.message(k))
			}
			for _, sub := range l.list {
				if sub != cl { // it has its copies (selfDeliver)
					sub.queueEncoded(m)
				}
			}
		}
		for pat, l := range r.subs[psPattern] {
			if !slots.Match([]byte(pat), ch, false) {
				continue
			}
			m.reset()
			for k := i; k < j; k++ {
				m.add("pmessage", []byte(pat), ch, b.message(k))
			}
			for _, sub := range l.list {
				if sub != cl { // it has its copies (selfDeliver)
					sub.queueEncoded(m)
				}
			}
		}
		i = j
	}
	r.mu.RUnlock()
	putPushMsg(m)
	b.ents = b.ents[:0]
	if cap(b.arena) > 64<<10 {
		b.arena = nil
	} else {
		b.arena = b.arena[:0]
	}
}

// receivers counts the subscribers a PUBLISH reaches now: the channel's and
// those of matching patterns.
func (s *Server) receivers(channel []byte) int {
	r := &s.ps
	r.mu.RLock()
	n := r.numSubs(psChannel, channel)
	for pat, l := range r.subs[psPattern] {
		if slots.Match([]byte(pat), channel, false) {
			n += len(l.list)
		}
	}
	r.mu.RUnlock()
	return n
}
