package bus

import (
	"testing"

	"github.com/stretchr/testify/require"

	busv1 "github.com/slotd/slotd/proto/slotd/bus/v1"
)

func TestPublishGoesToEveryLinkedNode(t *testing.T) {
	s, links := detector(t)
	s.Publish([]byte("ch"), []byte("m1"))
	s.Publish([]byte("ch"), []byte("m2"))
	fx := s.TakeEffects()
	perLink := map[LinkID][]string{}
	for _, snd := range fx.Send {
		require.Equal(t, busv1.Type_TYPE_PUBLISH, snd.Frame.GetHeader().GetType())
		require.Equal(t, idA, snd.Frame.GetHeader().GetSender())
		require.Equal(t, "ch", string(snd.Frame.GetPublish().GetChannel()))
		perLink[snd.Link] = append(perLink[snd.Link], string(snd.Frame.GetPublish().GetMessage()))
	}
	require.Len(t, perLink, len(links), "one frame per message per node")
	for _, l := range links {
		require.Equal(t, []string{"m1", "m2"}, perLink[l], "in publish order")
	}
}

func TestReceivePublishDelivers(t *testing.T) {
	s, links := detector(t)
	f := pong(s, idB)
	f.Header.Type = busv1.Type_TYPE_PUBLISH
	f.Publish = &busv1.Publish{Channel: []byte("ch"), Message: []byte("hi")}
	s.Receive(t0, links[idB], f)
	sf := pong(s, idC)
	sf.Header.Type = busv1.Type_TYPE_SPUBLISH
	sf.Publish = &busv1.Publish{Channel: []byte("{s}"), Message: []byte("sh")}
	s.Receive(t0, links[idC], sf)
	fx := s.TakeEffects()
	require.Equal(t, []Delivery{{Channel: []byte("ch"), Message: []byte("hi")},
		{Channel: []byte("{s}"), Message: []byte("sh"), Shard: true}}, fx.Deliver)
	require.True(t, fx.Any())

	// Frames from unknown senders are dropped, as Redis does.
	u := pong(s, idB)
	u.Header.Type = busv1.Type_TYPE_PUBLISH
	u.Header.Sender = "0123456789012345678901234567890123456789"
	u.Publish = &busv1.Publish{Channel: []byte("ch"), Message: []byte("x")}
	id := s.Accept(t0, "10.0.0.1", "10.0.0.9")
	s.Receive(t0, id, u)
	require.Empty(t, s.TakeEffects().Deliver)
}
