package bus

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	busv1 "github.com/slotd/slotd/proto/slotd/bus/v1"
)

// detector loads primary A (0-5460) knowing primaries B (5461-10922) and C
// (10923-16383), and R, a replica of B; every outbound link is connected
// and every node answered a first PING at t0.
func detector(t *testing.T) (*State, map[string]LinkID) {
	t.Helper()
	conf := idA + " 10.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-5460\n" +
		idB + " 10.0.0.2:7000@17000 master - 0 0 2 connected 5461-10922\n" +
		idC + " 10.0.0.3:7000@17000 master - 0 0 3 connected 10923-16383\n" +
		idR1 + " 10.0.0.4:7000@17000 slave " + idB + " 0 0 2 connected\n" +
		"vars currentEpoch 3 lastVoteEpoch 0\n"
	o := DefaultOptions()
	o.NodeTimeout = 1000
	s, err := Load(conf, t0, o, constID(sh1))
	require.NoError(t, err)
	s.Tick(t0)
	links := map[string]LinkID{}
	for _, d := range s.TakeEffects().Dial {
		links[d.NodeID] = d.Link
		s.LinkConnected(t0, d.Link)
	}
	for id, l := range links {
		s.Receive(t0, l, pong(s, id))
	}
	s.TakeEffects()
	require.True(t, s.OK())
	return s, links
}

// redial connects the links the pending effects dial (a link silent for
// long is replaced) and returns the effects.
func redial(s *State, now int64, links map[string]LinkID) Effects {
	fx := s.TakeEffects()
	for _, d := range fx.Dial {
		links[d.NodeID] = d.Link
		s.LinkConnected(now, d.Link)
		more := s.TakeEffects()
		fx.Send = append(fx.Send, more.Send...)
	}
	return fx
}

// pong is the PONG node id would send, as A knows it.
func pong(s *State, id string) *busv1.Frame {
	n := s.nodes[id]
	h := &busv1.Header{Type: busv1.Type_TYPE_PONG, Version: ProtoVersion, Sender: id, CurrentEpoch: 3,
		ConfigEpoch: n.ConfigEpoch, Flags: toWire(n.Flags &^ (FlagPFail | FlagFail)), Port: 7000, Cport: 17000}
	if n.IsReplica() {
		h.Primary = n.MasterID
		m := s.nodes[n.MasterID]
		h.Slots = SlotBitmap(&m.Slots)
		h.ConfigEpoch = m.ConfigEpoch
	} else {
		h.Slots = SlotBitmap(&n.Slots)
	}
	return &busv1.Frame{Header: h}
}

// gossipAbout is a PING from id whose gossip flags node about with flags.
func gossipAbout(s *State, id, about string, flags Flags) *busv1.Frame {
	f := pong(s, id)
	f.Header.Type = busv1.Type_TYPE_PING
	f.Gossip = []*busv1.Gossip{{Id: about, Flags: toWire(flags), Ip: "10.0.0.9", Port: 7000, Cport: 17000}}
	return f
}

func flagsOf(s *State, id string) Flags { return s.nodes[id].Flags }

func TestFailureDetection(t *testing.T) {
	s, links := detector(t)
	// Every tick pings whoever has not answered for half the node timeout;
	// only C and R keep answering.
	now := t0
	for ; now <= t0+1800; now += TickInterval {
		s.Tick(now)
		for _, snd := range redial(s, now, links).Send {
			if snd.Frame.Header.Type == busv1.Type_TYPE_PING && snd.Link != links[idB] {
				for id, l := range links {
					if l == snd.Link {
						s.Receive(now+1, l, pong(s, id))
					}
				}
			}
		}
	}
	assert.Equal(t, FlagMaster|FlagPFail, flagsOf(s, idB), "no PONG for longer than the node timeout")
	assert.Equal(t, FlagMaster, flagsOf(s, idC))
	assert.True(t, s.OK(), "PFAIL is only a suspicion; 2 of 3 primaries are reachable")
	assert.Contains(t, s.Info(), "cluster_slots_pfail:5462\r\n")

	// A report from a replica does not count; one from primary C does, and
	// with ours it is a majority of 3: FAIL, broadcast to every link.
	recv(s, now, gossipAbout(s, idR1, idB, FlagMaster|FlagPFail))
	s.TakeEffects()
	assert.Equal(t, FlagMaster|FlagPFail, flagsOf(s, idB))
	recv(s, now, gossipAbout(s, idC, idB, FlagMaster|FlagPFail))
	fx := s.TakeEffects()
	assert.Equal(t, FlagMaster|FlagFail, flagsOf(s, idB))
	assert.True(t, fx.Save)
	var failTo []LinkID
	for _, snd := range fx.Send {
		if snd.Frame.Header.Type == busv1.Type_TYPE_FAIL {
			assert.Equal(t, idB, snd.Frame.Fail.Id)
			failTo = append(failTo, snd.Link)
		}
	}
	assert.ElementsMatch(t, []LinkID{links[idB], links[idC], links[idR1]}, failTo)
	assert.Contains(t, s.Info(), "cluster_stats_messages_fail_sent:3\r\n")
	n, err := s.CountFailureReports(idB)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	// Reports expire after 2 × node timeout.
	s.tick(now + 2001)
	n, _ = s.CountFailureReports(idB)
	assert.Zero(t, n)

	// A primary that still serves its slots is reachable again: the FAIL
	// stays until 2 × node timeout passed without a failover.
	s.Receive(now+500, links[idB], pong(s, idB))
	assert.Equal(t, FlagMaster|FlagFail, flagsOf(s, idB))
	s.Receive(now+2001, links[idB], pong(s, idB))
	assert.Equal(t, FlagMaster, flagsOf(s, idB))

	// A replica's FAIL (forced by a FAIL message) is lifted as soon as it
	// answers.
	fail := pong(s, idC)
	fail.Header.Type = busv1.Type_TYPE_FAIL
	fail.Fail = &busv1.Fail{Id: idR1}
	recv(s, now+2100, fail)
	assert.Equal(t, FlagSlave|FlagFail, flagsOf(s, idR1))
	s.Receive(now+2101, links[idR1], pong(s, idR1))
	assert.Equal(t, FlagSlave, flagsOf(s, idR1))
}

func TestMinorityAndRejoinDelay(t *testing.T) {
	s, links := detector(t)
	// Nobody answers: B and C turn PFAIL, we are a minority.
	var failedAt int64
	now := t0
	for ; now <= t0+3000; now += TickInterval {
		s.Tick(now)
		redial(s, now, links)
		if !s.OK() && failedAt == 0 {
			failedAt = now
		}
	}
	assert.NotZero(t, failedAt)
	assert.LessOrEqual(t, failedAt, t0+1700)
	assert.False(t, s.Table().OK, "the loops answer -CLUSTERDOWN")
	// The majority is back: still fail for the rejoin delay (the node
	// timeout, 1 s here).
	back := now
	for _, id := range []string{idB, idC, idR1} {
		s.Receive(back, links[id], pong(s, id))
	}
	assert.False(t, s.OK())
	for now = back; now < back+1000-TickInterval; now += TickInterval {
		s.Tick(now)
		redial(s, now, links)
		assert.False(t, s.OK(), "at +%d ms", now-back)
	}
	s.Tick(back + 1000)
	assert.True(t, s.OK())
	assert.True(t, s.TakeEffects().Publish)
}
