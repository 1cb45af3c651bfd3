package bus

import (
	"sort"
	"strings"
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

// shardView loads a cluster of primaries A, B (replicas R1, R2) and C
// (replica R3) as seen by node me, with every outbound link connected.
func shardView(t *testing.T, me string) (*State, map[string]LinkID) {
	t.Helper()
	lines := map[string]string{
		idA:  " 10.0.0.1:7000@17000 master - 0 0 1 connected 0-5460\n",
		idB:  " 10.0.0.2:7000@17000 master - 0 0 2 connected 5461-10922\n",
		idC:  " 10.0.0.3:7000@17000 master - 0 0 3 connected 10923-16383\n",
		idR1: " 10.0.0.4:7000@17000 slave " + idB + " 0 0 2 connected\n",
		idR2: " 10.0.0.5:7000@17000 slave " + idB + " 0 0 2 connected\n",
		idR3: " 10.0.0.6:7000@17000 slave " + idC + " 0 0 3 connected\n",
	}
	conf := ""
	for _, id := range []string{idA, idB, idC, idR1, idR2, idR3} {
		l := lines[id]
		if id == me {
			l = strings.Replace(l, " master ", " myself,master ", 1)
			l = strings.Replace(l, " slave ", " myself,slave ", 1)
		}
		conf += id + l
	}
	s, err := Load(conf+"vars currentEpoch 3 lastVoteEpoch 0\n", t0, DefaultOptions(), constID(sh1))
	require.NoError(t, err)
	s.TakeEffects()
	s.Tick(t0)
	links := map[string]LinkID{}
	redial(s, t0, links)
	require.Len(t, links, 5)
	return s, links
}

// SPUBLISH goes to the publisher's shard only: a primary's replicas, or a
// replica's primary and sibling replicas.
func TestPublishShardStaysInTheShard(t *testing.T) {
	for _, tc := range []struct {
		me   string
		want []string
	}{
		{idB, []string{idR1, idR2}},
		{idR1, []string{idB, idR2}},
		{idA, nil},
		{idR3, []string{idC}},
	} {
		s, links := shardView(t, tc.me)
		s.PublishShard([]byte("{s}"), []byte("m"))
		var got []string
		for _, snd := range s.TakeEffects().Send {
			require.Equal(t, busv1.Type_TYPE_SPUBLISH, snd.Frame.GetHeader().GetType())
			require.Equal(t, "m", string(snd.Frame.GetPublish().GetMessage()))
			for id, l := range links {
				if l == snd.Link {
					got = append(got, id)
				}
			}
		}
		sort.Strings(got)
		sort.Strings(tc.want)
		require.Equal(t, tc.want, got, "publisher %s", tc.me)
	}
}

// DEBUG CLUSTERLINK KILL TO: a PUBLISH right after it misses the node
// (it has no link); once the next Tick dials again, a PUBLISH goes on the
// new link even before it is connected (written when it is up), and the
// first frame after the connection is still the PING.
func TestKillLinksAndPublishOnReconnectingLink(t *testing.T) {
	s, links := detector(t)
	require.False(t, s.KillLinks(t0, "0123456789012345678901234567890123456789", true, true), "unknown node")
	require.True(t, s.KillLinks(t0, idB, true, false))
	fx := s.TakeEffects()
	require.Equal(t, []LinkID{links[idB]}, fx.Close, "only B's outbound link is closed")
	s.Publish([]byte("ch"), []byte("lost"))
	for _, snd := range s.TakeEffects().Send {
		require.NotEqual(t, links[idB], snd.Link)
	}

	s.Tick(t0 + 100)
	fx = s.TakeEffects()
	require.Len(t, fx.Dial, 1)
	require.Equal(t, idB, fx.Dial[0].NodeID)
	l := fx.Dial[0].Link
	s.Publish([]byte("ch"), []byte("kept"))
	var got []busv1.Type
	for _, snd := range s.TakeEffects().Send {
		if snd.Link == l {
			got = append(got, snd.Frame.GetHeader().GetType())
			require.Equal(t, "kept", string(snd.Frame.GetPublish().GetMessage()))
		}
	}
	require.Equal(t, []busv1.Type{busv1.Type_TYPE_PUBLISH}, got)
	s.LinkConnected(t0+101, l)
	fx = s.TakeEffects()
	require.NotEmpty(t, fx.Send)
	require.Equal(t, busv1.Type_TYPE_PING, fx.Send[0].Frame.GetHeader().GetType())

	// FROM closes the inbound link only; the node stays known.
	in := s.Accept(t0+102, "10.0.0.1", "10.0.0.2")
	s.Receive(t0+102, in, pong(s, idB))
	s.TakeEffects()
	require.True(t, s.KillLinks(t0+103, idB, false, true))
	require.Equal(t, []LinkID{in}, s.TakeEffects().Close)
}
