package bus

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	busv1 "github.com/slotd/slotd/proto/slotd/bus/v1"
	"github.com/slotd/slotd/slots"
)

// forgedPing is a PING that claims to come from b with a configEpoch
// above every other and every slot: what one packet needed to take a
// primary's slots away (issue #20).
func forgedPing(b *peer) *busv1.Frame {
	h := b.header(busv1.Type_TYPE_PING)
	h.CurrentEpoch, h.ConfigEpoch = 100, 100
	var all slots.Set
	all.AddRange(0, slots.NumSlots-1)
	h.Slots = SlotBitmap(&all)
	return &busv1.Frame{Header: h}
}

// ownerOf0 is the id of the node a routes slot 0 to ("" for none).
func ownerOf0(a *peer) string {
	t := a.Table()
	if o := t.Owner[0]; o >= 0 {
		return t.Nodes[o].ID
	}
	return ""
}

func TestForgedFramesLeaveSlotMapUnchanged(t *testing.T) {
	a := newPeer(t, idA, "10.0.0.1", 7000)
	b := newPeer(t, idB, "10.0.0.2", 7001)
	c := newPeer(t, idC, "10.0.0.3", 7002)
	require.NoError(t, a.AddSlotsRange(args("0", "16383")))
	a.TakeEffects()
	handshake(t, a, b, t0)
	handshake(t, a, c, t0+200)
	nb := a.nodes[idB]
	nc := a.nodes[idC]
	require.NotNil(t, nb.inLink)
	require.NotNil(t, nc.inLink)
	require.Equal(t, idA, ownerOf0(a))

	// A stranger's connection claiming b while b's own link is alive.
	now := t0 + 500
	stranger := a.Accept(now, "10.0.0.1", "10.6.6.6")
	a.Receive(now, stranger, forgedPing(b))
	fx := a.TakeEffects()
	assert.Equal(t, idA, ownerOf0(a), "the slot map is unchanged")
	assert.False(t, fx.Publish)
	assert.Equal(t, uint64(0), nb.ConfigEpoch, "b's epoch is not taken from a stranger")
	assert.Equal(t, uint64(1), a.Forged())
	assert.Equal(t, FlagMaster|FlagMyself, a.Myself().Flags, "a stays a primary")

	// c's own link, speaking for b: dropped too.
	a.Receive(now+1, nc.inLink.id, forgedPing(b))
	a.TakeEffects()
	assert.Equal(t, idA, ownerOf0(a))
	assert.Equal(t, uint64(2), a.Forged())

	// b's real frames on its own link are still taken.
	a.Receive(now+2, nb.inLink.id, &busv1.Frame{Header: b.header(busv1.Type_TYPE_PING)})
	assert.Equal(t, uint64(2), a.Forged())
	_, pong, _ := onlySend(t, a.State, busv1.Type_TYPE_PONG)
	assert.Equal(t, idA, pong.Header.Sender)

	// Once b's link is gone, a new connection from b is b's.
	a.LinkClosed(now+3, nb.inLink.id)
	l := a.Accept(now+4, "10.0.0.1", b.ip)
	a.Receive(now+4, l, &busv1.Frame{Header: b.header(busv1.Type_TYPE_PING)})
	assert.Equal(t, l, nb.inLink.id)
}

// MEETs on one stranger connection create one handshake node at a time;
// beyond MaxStrangerLinks unbound inbound links the oldest is closed.
func TestStrangerConnectionsAreBounded(t *testing.T) {
	a := newPeer(t, idA, "10.0.0.1", 7000)
	l := a.Accept(t0, "10.0.0.1", "10.6.6.6")
	for i := 0; i < 50; i++ {
		id := strconv.Itoa(1000 + i)
		h := &busv1.Header{Type: busv1.Type_TYPE_MEET, Version: ProtoVersion, Sender: id + idB[len(id):],
			Port: uint32(8000 + i), Cport: uint32(18000 + i), Slots: make([]byte, SlotBitmapLen)}
		a.Receive(t0+int64(i), l, &busv1.Frame{Header: h})
	}
	handshakes := 0
	for _, n := range a.sorted {
		if n.Flags&FlagHandshake != 0 {
			handshakes++
		}
	}
	assert.Equal(t, 1, handshakes, "one pending handshake per connection")

	a.TakeEffects()

	var first LinkID
	for i := 0; i <= MaxStrangerLinks; i++ {
		id := a.Accept(t0+5000, "10.0.0.1", "10.6.6.7")
		if i == 0 {
			first = id
		}
	}
	assert.Equal(t, []LinkID{l, first}, a.TakeEffects().Close, "the oldest strangers beyond the limit are closed")
}
