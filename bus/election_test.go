package bus

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	busv1 "github.com/slotd/slotd/proto/slotd/bus/v1"
	"github.com/slotd/slotd/slots"
)

const (
	idR1 = "a100000000000000000000000000000000000001"
	idR2 = "a200000000000000000000000000000000000002"
	idR3 = "a300000000000000000000000000000000000003"
)

// voter loads a primary (A, slots 0-8191, epoch 3) that knows a failed
// primary B (8192-12287, epoch 2) with replicas R1 and R2, and a healthy
// primary C (12288-16383, epoch 4) with replica R3; every outbound link
// is connected. It returns the state, the outbound link of each node and
// the links it has to each node.
func voter(t *testing.T) (*State, map[string]LinkID) {
	t.Helper()
	conf := idA + " 10.0.0.1:7000@17000 myself,master - 0 0 3 connected 0-8191\n" +
		idB + " 10.0.0.2:7000@17000 master,fail - 0 0 2 disconnected 8192-12287\n" +
		idC + " 10.0.0.3:7000@17000 master - 0 0 4 connected 12288-16383\n" +
		idR1 + " 10.0.0.4:7000@17000 slave " + idB + " 0 0 2 connected\n" +
		idR2 + " 10.0.0.5:7000@17000 slave " + idB + " 0 0 2 connected\n" +
		idR3 + " 10.0.0.6:7000@17000 slave " + idC + " 0 0 4 connected\n" +
		"vars currentEpoch 5 lastVoteEpoch 0\n"
	o := DefaultOptions()
	o.NodeTimeout = 1000
	s, err := Load(conf, t0, o, constID(sh1))
	require.NoError(t, err)
	s.TakeEffects()
	s.Tick(t0)
	links := map[string]LinkID{}
	for _, d := range s.TakeEffects().Dial {
		links[d.NodeID] = d.Link
		s.LinkConnected(t0, d.Link)
	}
	require.Len(t, links, 5)
	s.TakeEffects()
	return s, links
}

// recv delivers f on the sender's inbound link, opened from its known
// address the first time (each sender has its own).
func recv(s *State, now int64, f *busv1.Frame) {
	ip := "10.0.0.9"
	if n := s.nodes[f.Header.Sender]; n != nil {
		if n.inLink != nil && !n.inLink.closed {
			s.Receive(now, n.inLink.id, f)
			return
		}
		ip = n.IP
	}
	s.Receive(now, s.Accept(now, "10.0.0.1", ip), f)
}

func authRequest(from, primary string, cur, cfg uint64, claimed *slots.Set, force bool) *busv1.Frame {
	h := &busv1.Header{Type: busv1.Type_TYPE_FAILOVER_AUTH_REQUEST, Version: ProtoVersion, Sender: from,
		CurrentEpoch: cur, ConfigEpoch: cfg, Slots: SlotBitmap(claimed), Primary: primary, Flags: toWire(FlagSlave),
		Port: 7000, Cport: 17000}
	if force {
		h.Mflags = uint32(busv1.ManualFailoverFlag_MANUAL_FAILOVER_FLAG_FORCEACK)
	}
	return &busv1.Frame{Header: h}
}

// acks returns the links the pending effects send a FAILOVER_AUTH_ACK on,
// and whether they save first.
func acks(s *State) ([]LinkID, bool) {
	fx := s.TakeEffects()
	var out []LinkID
	for _, snd := range fx.Send {
		if snd.Frame.Header.Type == busv1.Type_TYPE_FAILOVER_AUTH_ACK {
			out = append(out, snd.Link)
		}
	}
	return out, fx.Save
}

func TestVoteRules(t *testing.T) {
	s, links := voter(t)
	bSlots := rangeSet(8192, 12287)
	now := t0 + 10

	// A replica of a failed primary, asking with the current claim: one
	// vote, saved before the ACK goes out, on our link to it.
	recv(s, now, authRequest(idR1, idB, 6, 2, bSlots, false))
	got, saved := acks(s)
	assert.Equal(t, []LinkID{links[idR1]}, got)
	assert.True(t, saved, "lastVoteEpoch saved with the ACK")
	assert.Equal(t, uint64(6), s.LastVoteEpoch())
	assert.Contains(t, s.Config(), "vars currentEpoch 6 lastVoteEpoch 6\n")
	assert.Contains(t, s.Info(), "cluster_stats_messages_auth-ack_sent:1\r\n")
	assert.Contains(t, s.Info(), "cluster_stats_messages_auth-req_received:1\r\n")

	// One vote per epoch.
	recv(s, now, authRequest(idR2, idB, 6, 2, bSlots, false))
	got, _ = acks(s)
	assert.Empty(t, got, "second vote in epoch 6")

	// No second vote for a replica of the same primary within 2 × node
	// timeout, even in a new epoch.
	recv(s, now+100, authRequest(idR2, idB, 7, 2, bSlots, false))
	got, _ = acks(s)
	assert.Empty(t, got, "vote for the same primary within 2 × node timeout")
	assert.Equal(t, uint64(7), s.CurrentEpoch())

	later := now + 2001
	// A request for an epoch below our currentEpoch is stale.
	recv(s, later, authRequest(idR2, idB, 6, 2, bSlots, false))
	got, _ = acks(s)
	assert.Empty(t, got, "epoch below currentEpoch")

	// A claim older than the configEpoch of a claimed slot's owner.
	recv(s, later, authRequest(idR2, idB, 8, 1, bSlots, false))
	got, _ = acks(s)
	assert.Empty(t, got, "claim older than the owner's configEpoch")
	withMine := *bSlots
	withMine.Add(0) // ours, at configEpoch 3
	recv(s, later, authRequest(idR2, idB, 9, 2, &withMine, false))
	got, _ = acks(s)
	assert.Empty(t, got, "claim of a slot served with a greater configEpoch")

	// The same request, properly made, gets the vote.
	recv(s, later, authRequest(idR2, idB, 10, 2, bSlots, false))
	got, saved = acks(s)
	assert.Equal(t, []LinkID{links[idR2]}, got)
	assert.True(t, saved)

	// The primary of R3 is not failing: no vote unless the request is
	// forced (manual failover).
	recv(s, later, authRequest(idR3, idC, 11, 4, rangeSet(12288, 16383), false))
	got, _ = acks(s)
	assert.Empty(t, got, "primary not failing")
	recv(s, later, authRequest(idR3, idC, 12, 4, rangeSet(12288, 16383), true))
	got, _ = acks(s)
	assert.Equal(t, []LinkID{links[idR3]}, got, "forced vote")

	// A primary cannot be voted for, nor can an unknown node.
	recv(s, later+5000, authRequest(idC, "", 13, 4, rangeSet(12288, 16383), true))
	got, _ = acks(s)
	assert.Empty(t, got, "requester is a primary")
	recv(s, later+5000, authRequest(strings.Repeat("e", 40), idB, 14, 2, bSlots, true))
	got, _ = acks(s)
	assert.Empty(t, got, "unknown requester")

	// Only a primary serving slots votes.
	require.NoError(t, s.FlushSlots(true))
	s.TakeEffects()
	recv(s, later+10000, authRequest(idR1, idB, 15, 2, bSlots, false))
	got, _ = acks(s)
	assert.Empty(t, got, "primary without slots")
}

// candidate loads R1, a replica of failed primary B (slots 0-8191, epoch
// 2), in a cluster with primaries A (8192-12287) and C (12288-16383).
func candidate(t *testing.T, o Options) *State {
	t.Helper()
	conf := idR1 + " 10.0.0.4:7000@17000 myself,slave " + idB + " 0 0 2 connected\n" +
		idB + " 10.0.0.2:7000@17000 master,fail - 0 0 2 disconnected 0-8191\n" +
		idA + " 10.0.0.1:7000@17000 master - 0 0 3 connected 8192-12287\n" +
		idC + " 10.0.0.3:7000@17000 master - 0 0 4 connected 12288-16383\n" +
		"vars currentEpoch 4 lastVoteEpoch 0\n"
	o.NodeTimeout = 1000
	s, err := Load(conf, t0, o, constID(sh1))
	require.NoError(t, err)
	s.TakeEffects()
	s.Tick(t0)
	for _, d := range s.TakeEffects().Dial {
		s.LinkConnected(t0, d.Link)
	}
	s.TakeEffects()
	return s
}

func ack(from string, cur uint64) *busv1.Frame {
	return &busv1.Frame{Header: &busv1.Header{Type: busv1.Type_TYPE_FAILOVER_AUTH_ACK, Version: ProtoVersion,
		Sender: from, CurrentEpoch: cur, Flags: toWire(FlagMaster)}}
}

func TestElection(t *testing.T) {
	s := candidate(t, DefaultOptions())
	// Within 500–1000 ms of the first tick (rank 0) the request goes out,
	// with currentEpoch+1, saved first.
	var reqAt int64
	for now := t0; now <= t0+1000; now += TickInterval {
		s.Tick(now)
		fx := s.TakeEffects()
		for _, snd := range fx.Send {
			if snd.Frame.Header.Type == busv1.Type_TYPE_FAILOVER_AUTH_REQUEST && reqAt == 0 {
				reqAt = now
				assert.True(t, fx.Save)
				assert.Equal(t, uint64(5), snd.Frame.Header.CurrentEpoch)
				assert.Equal(t, uint64(2), snd.Frame.Header.ConfigEpoch, "the primary's claim")
			}
		}
	}
	require.NotZero(t, reqAt)
	assert.GreaterOrEqual(t, reqAt, t0+500)
	assert.Equal(t, uint64(5), s.CurrentEpoch())

	// A stale ACK (an older epoch) and a repeated one do not count; two
	// distinct votes of three primaries win.
	recv(s, reqAt+10, ack(idA, 4))
	recv(s, reqAt+10, ack(idC, 5))
	recv(s, reqAt+11, ack(idC, 5))
	me := s.Myself()
	assert.True(t, me.IsReplica(), "one valid vote is no majority")
	recv(s, reqAt+12, ack(idA, 5))
	fx := s.TakeEffects()
	me = s.Myself()
	require.True(t, me.IsMaster())
	assert.True(t, fx.Promote)
	assert.True(t, fx.Save)
	assert.Equal(t, uint64(5), me.ConfigEpoch)
	assert.Equal(t, idR1, s.Owner(0))
	assert.Equal(t, idR1, s.Owner(8191))
	assert.True(t, s.OK())
}

func TestElectionStartConditions(t *testing.T) {
	// Each attempt takes a new epoch (currentEpoch 4 at start).
	run := func(s *State, from, to int64) {
		for now := from; now < to; now += TickInterval {
			s.Tick(now)
			s.TakeEffects()
		}
	}
	// cluster-replica-no-failover: never on its own.
	o := DefaultOptions()
	o.ReplicaNoFailover = true
	s := candidate(t, o)
	run(s, t0, t0+10000)
	assert.Equal(t, uint64(4), s.CurrentEpoch())

	// Data older than node timeout × validity factor + ping period.
	s = candidate(t, DefaultOptions())
	s.SetReplLinkDownSince(t0 - 1000 - 10*1000 - 10000 - 1)
	run(s, t0, t0+10000)
	assert.Equal(t, uint64(4), s.CurrentEpoch())
	// ... but CLUSTER FAILOVER FORCE goes ahead at once.
	require.NoError(t, s.Failover(t0+10000, FailoverForce))
	assert.Equal(t, uint64(5), s.CurrentEpoch())

	// Recent enough data: it does.
	s = candidate(t, DefaultOptions())
	s.SetReplLinkDownSince(t0 - 5000)
	run(s, t0, t0+1100)
	assert.Equal(t, uint64(5), s.CurrentEpoch())
	// A failed attempt is retried 4 × max(node timeout, 1 s) after it was
	// scheduled, with a new delay.
	run(s, t0+1100, t0+4900)
	assert.Equal(t, uint64(5), s.CurrentEpoch())
	run(s, t0+4900, t0+6300)
	assert.Equal(t, uint64(6), s.CurrentEpoch())
}

func TestFailoverCommandErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		mode FailoverMode
		err  string
	}{
		{nil, FailoverDefault, ""},
		{[]string{"FORCE"}, FailoverForce, ""},
		{[]string{"takeover"}, FailoverTakeover, ""},
		{[]string{"bogus"}, 0, "ERR syntax error"},
		{[]string{"force", "x"}, 0, "ERR unknown subcommand or wrong number of arguments for 'FAILOVER'. Try CLUSTER HELP."},
	} {
		mode, err := ParseFailover("FAILOVER", args(c.args...))
		if c.err != "" {
			require.Error(t, err)
			assert.Equal(t, c.err, err.Error())
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, c.mode, mode)
	}
	s := fresh(t)
	assert.EqualError(t, s.Failover(t0, FailoverDefault), "ERR You should send CLUSTER FAILOVER to a replica")
	r := candidate(t, DefaultOptions())
	assert.EqualError(t, r.Failover(t0, FailoverDefault), "ERR Master is down or failed, please use CLUSTER FAILOVER FORCE")
}
