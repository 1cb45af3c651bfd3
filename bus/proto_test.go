package bus

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	busv1 "github.com/slotd/slotd/proto/slotd/bus/v1"
	"github.com/slotd/slotd/slots"
)

const t0 = int64(1_700_000_000_000)

// peer is a node under test with the address it is reachable at.
type peer struct {
	*State
	ip   string
	port int
}

func newPeer(t *testing.T, id, ip string, port int) *peer {
	t.Helper()
	o := DefaultOptions()
	o.NodeTimeout = 2000
	o.Rand = rand.New(rand.NewPCG(1, uint64(port)))
	s := New(id, strings.Repeat(id[:1], 40), o)
	s.SetAnnounce(DeriveAnnounce(port, 0, 0, 0, "", ""))
	s.TakeEffects()
	return &peer{State: s, ip: ip, port: port}
}

// sends returns the frames of the pending effects (draining them).
func sends(s *State) ([]Send, Effects) {
	fx := s.TakeEffects()
	return fx.Send, fx
}

func onlySend(t *testing.T, s *State, typ busv1.Type) (LinkID, *busv1.Frame, Effects) {
	t.Helper()
	ss, fx := sends(s)
	require.Len(t, ss, 1, "one frame expected")
	require.Equal(t, typ, ss[0].Frame.Header.Type)
	return ss[0].Link, ss[0].Frame, fx
}

// handshake makes a meet b and runs the exchange to completion, returning
// the links: a's outbound (and b's inbound) and b's outbound (a's inbound).
func handshake(t *testing.T, a, b *peer, now int64) {
	t.Helper()
	require.NoError(t, a.Meet(now, b.ip, b.port, b.port+PortIncr))
	fx := a.TakeEffects()
	require.Len(t, fx.Dial, 1)
	assert.Equal(t, b.ip+":"+strconv.Itoa(b.port+PortIncr), fx.Dial[0].Addr)
	aOut := fx.Dial[0].Link
	a.LinkConnected(now, aOut)
	_, meet, _ := onlySend(t, a.State, busv1.Type_TYPE_MEET)
	bIn := b.Accept(now, b.ip, a.ip)
	b.Receive(now+1, bIn, meet)
	_, pong, bfx := onlySend(t, b.State, busv1.Type_TYPE_PONG)
	assert.True(t, bfx.Save, "a new handshake node is saved")
	a.Receive(now+2, aOut, pong)
	afx := a.TakeEffects()
	assert.True(t, afx.Save)
	// b dials back its handshake node for a.
	b.Tick(now + 100)
	fx = b.TakeEffects()
	require.Len(t, fx.Dial, 1)
	assert.Equal(t, a.ip+":"+strconv.Itoa(a.port+PortIncr), fx.Dial[0].Addr)
	bOut := fx.Dial[0].Link
	b.LinkConnected(now+100, bOut)
	_, ping, _ := onlySend(t, b.State, busv1.Type_TYPE_PING)
	aIn := a.Accept(now+100, a.ip, b.ip)
	a.Receive(now+101, aIn, ping)
	_, pong, _ = onlySend(t, a.State, busv1.Type_TYPE_PONG)
	b.Receive(now+102, bOut, pong)
	b.TakeEffects()
}

func TestHandshake(t *testing.T) {
	a := newPeer(t, idA, "10.0.0.1", 7000)
	b := newPeer(t, idB, "10.0.0.2", 7001)

	require.NoError(t, a.Meet(t0, "10.0.0.2", 7001, 17001))
	fx := a.TakeEffects()
	require.Len(t, fx.Dial, 1)
	assert.False(t, fx.Save, "handshake nodes are not saved")
	hs := fx.Dial[0].NodeID
	assert.True(t, ValidID(hs))
	assert.Contains(t, a.Nodes(), hs+" 10.0.0.2:7001@17001 handshake - 0 0 0 disconnected\n")
	assert.NotContains(t, a.Config(), hs, "nodes.conf leaves handshake nodes out")

	a.LinkConnected(t0, fx.Dial[0].Link)
	_, meet, _ := onlySend(t, a.State, busv1.Type_TYPE_MEET)
	h := meet.Header
	assert.Equal(t, uint32(ProtoVersion), h.Version)
	assert.Equal(t, idA, h.Sender)
	assert.Equal(t, uint32(7000), h.Port)
	assert.Equal(t, uint32(17000), h.Cport)
	assert.Len(t, h.Slots, SlotBitmapLen)
	assert.Equal(t, uint32(busv1.NodeFlag_NODE_FLAG_PRIMARY|busv1.NodeFlag_NODE_FLAG_MYSELF), h.Flags)
	assert.Equal(t, "", h.Ip, "no announced ip: receivers use the link's address")
	assert.Equal(t, 1, int(a.Stats().Sent[MsgMeet]))

	bIn := b.Accept(t0, "10.0.0.2", "10.0.0.1")
	b.Receive(t0+1, bIn, meet)
	assert.Equal(t, "10.0.0.2", b.Myself().IP, "a MEET teaches b its own address")
	_, pong, _ := onlySend(t, b.State, busv1.Type_TYPE_PONG)
	require.Equal(t, 2, b.KnownNodes())
	var bsA Node
	for _, n := range b.NodeList() {
		if n.ID != idB {
			bsA = n
		}
	}
	assert.Equal(t, FlagHandshake, bsA.Flags)
	assert.Equal(t, "10.0.0.1", bsA.IP, "the link's remote address")
	assert.Equal(t, 7000, bsA.Port)

	a.Receive(t0+2, fx.Dial[0].Link, pong)
	fxa := a.TakeEffects()
	assert.True(t, fxa.Save)
	n, ok := a.Lookup(idB)
	require.True(t, ok, "the handshake node took b's real id")
	assert.Equal(t, FlagMaster, n.Flags)
	assert.Equal(t, t0+2, n.PongRecv)
	assert.True(t, n.Linked)
	_, ok = a.Lookup(hs)
	assert.False(t, ok)
	assert.Equal(t, 2, a.KnownNodes())

	// b completes its side the same way.
	b.Tick(t0 + 100)
	fx = b.TakeEffects()
	require.Len(t, fx.Dial, 1)
	b.LinkConnected(t0+100, fx.Dial[0].Link)
	_, ping, _ := onlySend(t, b.State, busv1.Type_TYPE_PING)
	aIn := a.Accept(t0+100, "10.0.0.1", "10.0.0.2")
	a.Receive(t0+101, aIn, ping)
	assert.Equal(t, "10.0.0.1", a.Myself().IP, "a PING teaches an address-less node its address")
	_, pong, _ = onlySend(t, a.State, busv1.Type_TYPE_PONG)
	b.Receive(t0+102, fx.Dial[0].Link, pong)
	_, ok = b.Lookup(idA)
	require.True(t, ok)
	assert.Equal(t, 2, b.KnownNodes())
	require.NoError(t, b.Verify())
	require.NoError(t, a.Verify())

	assert.Equal(t, idB+" 10.0.0.2:7001@17001 master - 0 "+strconv.FormatInt(t0+2, 10)+" 0 connected\n"+
		idA+" 10.0.0.1:7000@17000 myself,master - 0 0 0 connected\n", a.Nodes())

	links := a.Links(t0 + 200)
	require.Len(t, links, 2)
	assert.Equal(t, LinkInfo{Link: links[0].Link, Direction: "to", Node: idB, CreateTime: t0, Events: "r"}, links[0])
	assert.Equal(t, LinkInfo{Link: aIn, Direction: "from", Node: idB, CreateTime: t0 + 100, Events: "r"}, links[1])
}

func TestUnknownSenders(t *testing.T) {
	a := newPeer(t, idA, "10.0.0.1", 7000)
	b := newPeer(t, idB, "10.0.0.2", 7001)
	l := a.Accept(t0, "10.0.0.1", "10.0.0.2")
	ping := &busv1.Frame{Header: b.header(busv1.Type_TYPE_PING)}

	// A PING from an unknown node is answered but does not admit it.
	a.Receive(t0, l, ping)
	onlySend(t, a.State, busv1.Type_TYPE_PONG)
	assert.Equal(t, 1, a.KnownNodes())

	// Anything else from an unknown node is dropped.
	for _, f := range []*busv1.Frame{
		{Header: b.header(busv1.Type_TYPE_PONG)},
		{Header: b.header(busv1.Type_TYPE_FAIL), Fail: &busv1.Fail{Id: idA}},
		{Header: b.header(busv1.Type_TYPE_UPDATE), Update: &busv1.Update{Id: idA, ConfigEpoch: 9}},
		{Header: b.header(busv1.Type_TYPE_PUBLISH), Publish: &busv1.Publish{Channel: []byte("c")}},
	} {
		a.Receive(t0, l, f)
		assert.Equal(t, Effects{}, a.TakeEffects(), "%s", f.Header.Type)
	}
	assert.Equal(t, 1, a.KnownNodes())
	assert.Equal(t, uint64(0), a.Myself().ConfigEpoch)

	// Gossip from an unknown node adds nobody, even in a MEET.
	meet := &busv1.Frame{Header: b.header(busv1.Type_TYPE_MEET),
		Gossip: []*busv1.Gossip{{Id: idC, Ip: "10.0.0.3", Port: 7002, Cport: 17002, Flags: 1}}}
	a.Receive(t0, l, meet)
	_, ok := a.Lookup(idC)
	assert.False(t, ok)
	assert.Equal(t, 2, a.KnownNodes(), "only the MEET's sender, in handshake")

	// Malformed frames are counted and ignored.
	a.TakeEffects()
	for _, f := range []*busv1.Frame{
		{},
		{Header: &busv1.Header{Type: busv1.Type_TYPE_PING, Version: 2, Sender: idB}},
		{Header: &busv1.Header{Type: busv1.Type_TYPE_PING, Version: 1, Sender: "nope"}},
	} {
		a.Receive(t0, l, f)
		assert.Equal(t, Effects{}, a.TakeEffects())
	}
	a.Receive(t0, 999, ping)
	assert.Equal(t, Effects{}, a.TakeEffects(), "unknown link")
}

func TestMeetErrors(t *testing.T) {
	a := newPeer(t, idA, "10.0.0.1", 7000)
	// Texts as redis-server 7.0.15 replies them.
	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{"1.2.3.4", "abc"}, "ERR Invalid TCP base port specified: abc"},
		{[]string{"1.2.3.4", "1", "x"}, "ERR Invalid TCP bus port specified: x"},
		{[]string{"1.2.3.4", "+7000"}, "ERR Invalid TCP base port specified: +7000"},
		{[]string{"1.2.3.4", "07000"}, "ERR Invalid TCP base port specified: 07000"},
		{[]string{"1.2.3.4"}, "ERR wrong number of arguments for 'cluster|meet' command"},
		{[]string{"1.2.3.4", "0"}, "ERR Invalid node address specified: 1.2.3.4:0"},
		{[]string{"1.2.3.04", "7000"}, "ERR Invalid node address specified: 1.2.3.04:7000"},
		{[]string{"fe80::1%lo", "7000"}, "ERR Invalid node address specified: fe80::1%lo:7000"},
		{[]string{"1.2.3.4", "70000"}, "ERR Invalid node address specified: 1.2.3.4:70000"},
		{[]string{"1.2.3.4", "7000", "0"}, "ERR Invalid node address specified: 1.2.3.4:7000"},
		{[]string{"1.2.3.4", "-5"}, "ERR Invalid node address specified: 1.2.3.4:-5"},
		{[]string{"localhost", "7000"}, "ERR Invalid node address specified: localhost:7000"},
		{[]string{"1.2.3.4", "99999999999"}, "ERR Invalid node address specified: 1.2.3.4:99999999999"},
	} {
		ip, port, cport, err := ParseMeet(args(c.args...))
		if err == nil {
			err = a.Meet(t0, ip, port, cport)
		}
		require.Error(t, err, "%v", c.args)
		assert.Equal(t, c.err, err.Error(), "%v", c.args)
	}
	assert.Equal(t, Effects{}, a.TakeEffects())

	ip, port, cport, err := ParseMeet(args("::1", "7001"))
	require.NoError(t, err)
	assert.Equal(t, 17001, cport)
	require.NoError(t, a.Meet(t0, ip, port, cport))
	require.NoError(t, a.Meet(t0, "0:0::1", 7001, 17001), "a handshake in progress is not started twice")
	fx := a.TakeEffects()
	require.Len(t, fx.Dial, 1)
	assert.Equal(t, "[::1]:17001", fx.Dial[0].Addr)
	assert.Equal(t, 2, a.KnownNodes())
}

func TestHandshakeTimeout(t *testing.T) {
	a := newPeer(t, idA, "10.0.0.1", 7000)
	require.NoError(t, a.Meet(t0, "10.0.0.2", 7001, 17001))
	dial := a.TakeEffects().Dial[0]
	a.LinkConnected(t0, dial.Link)
	a.TakeEffects()
	a.Tick(t0 + 2000)
	assert.Equal(t, 2, a.KnownNodes(), "node timeout not exceeded yet")
	fx := a.TakeEffects()
	require.Len(t, fx.Send, 1, "the unanswered MEET is repeated")
	assert.Equal(t, busv1.Type_TYPE_MEET, fx.Send[0].Frame.Header.Type)
	a.Tick(t0 + 2001)
	assert.Equal(t, 1, a.KnownNodes())
	fx = a.TakeEffects()
	assert.Equal(t, []LinkID{dial.Link}, fx.Close)
	assert.False(t, fx.Save)

	// With a tiny node timeout the handshake still gets 1 s.
	o := a.Options()
	o.NodeTimeout = 100
	a.SetOptions(o)
	require.NoError(t, a.Meet(t0, "10.0.0.2", 7001, 17001))
	a.Tick(t0 + 1000)
	assert.Equal(t, 2, a.KnownNodes())
	a.Tick(t0 + 1001)
	assert.Equal(t, 1, a.KnownNodes())
}

func TestPongFromAnotherNodeMarksNoAddr(t *testing.T) {
	a := newPeer(t, idA, "10.0.0.1", 7000)
	b := newPeer(t, idB, "10.0.0.2", 7001)
	c := newPeer(t, idC, "10.0.0.2", 7001) // took over b's address
	handshake(t, a, b, t0)
	out, _ := a.Lookup(idB)
	require.NotNil(t, out.link)
	a.Receive(t0+500, out.link.id, &busv1.Frame{Header: c.header(busv1.Type_TYPE_PONG)})
	fx := a.TakeEffects()
	assert.Equal(t, []LinkID{out.link.id}, fx.Close)
	assert.True(t, fx.Save)
	n, _ := a.Lookup(idB)
	assert.Equal(t, FlagMaster|FlagNoAddr, n.Flags)
	assert.Equal(t, "", n.IP)
	a.Tick(t0 + 600)
	assert.Empty(t, a.TakeEffects().Dial, "no address, no dial")
}

func TestAddressChangeFromPing(t *testing.T) {
	a := newPeer(t, idA, "10.0.0.1", 7000)
	b := newPeer(t, idB, "10.0.0.2", 7001)
	handshake(t, a, b, t0)
	old, _ := a.Lookup(idB)
	// b restarts elsewhere (its old connection to a closes) and pings a on
	// a new connection.
	a.LinkClosed(t0+900, old.inLink.id)
	l := a.Accept(t0+1000, "10.0.0.1", "10.9.9.9")
	a.Receive(t0+1000, l, &busv1.Frame{Header: b.header(busv1.Type_TYPE_PING)})
	fx := a.TakeEffects()
	assert.True(t, fx.Save)
	assert.True(t, fx.Publish)
	assert.Contains(t, fx.Close, old.link.id, "the link to the old address is dropped")
	n, _ := a.Lookup(idB)
	assert.Equal(t, "10.9.9.9", n.IP)
	a.Tick(t0 + 1100)
	fx = a.TakeEffects()
	require.Len(t, fx.Dial, 1)
	assert.Equal(t, "10.9.9.9:17001", fx.Dial[0].Addr)

	// An announced address wins over the link's.
	b.SetAnnounce(DeriveAnnounce(7001, 0, 0, 0, "192.168.1.2", "host-b"))
	a.Receive(t0+1200, l, &busv1.Frame{Header: b.header(busv1.Type_TYPE_PING)})
	n, _ = a.Lookup(idB)
	assert.Equal(t, "192.168.1.2", n.IP)
	assert.Equal(t, "host-b", n.Hostname)
}

func TestForget(t *testing.T) {
	a := newPeer(t, idA, "10.0.0.1", 7000)
	b := newPeer(t, idB, "10.0.0.2", 7001)
	c := newPeer(t, idC, "10.0.0.3", 7002)
	handshake(t, a, b, t0)
	handshake(t, a, c, t0)
	handshake(t, b, c, t0)

	for _, tc := range []struct{ id, err string }{
		{"abc", "ERR Unknown node abc"},
		{idD, "ERR Unknown node " + idD},
		{idA, "ERR I tried hard but I can't forget myself..."},
	} {
		err := a.Forget(t0, tc.id)
		require.Error(t, err)
		assert.Equal(t, tc.err, err.Error())
	}
	require.NoError(t, a.Forget(t0+1000, idC))
	fx := a.TakeEffects()
	assert.True(t, fx.Save)
	assert.Len(t, fx.Close, 2, "both links to c are closed")
	_, ok := a.Lookup(idC)
	assert.False(t, ok)

	// b still gossips about c: a ignores it for 60 s.
	bl, _ := a.Lookup(idB)
	gossip := func(now int64) {
		a.Receive(now, bl.inLink.id, &busv1.Frame{Header: b.header(busv1.Type_TYPE_PING),
			Gossip: []*busv1.Gossip{gossipEntry(b.nodes[idC])}})
		a.TakeEffects()
	}
	gossip(t0 + 1000 + BanTTL)
	_, ok = a.Lookup(idC)
	assert.False(t, ok, "banned for 60 s")
	// c itself calls with a MEET: still banned.
	l := a.Accept(t0+30000, "10.0.0.1", "10.0.0.3")
	a.Receive(t0+30000, l, &busv1.Frame{Header: c.header(busv1.Type_TYPE_MEET)})
	assert.Equal(t, 2, a.KnownNodes())
	gossip(t0 + 1001 + BanTTL)
	n, ok := a.Lookup(idC)
	require.True(t, ok, "the ban is over")
	assert.Equal(t, "10.0.0.3", n.IP)
	assert.Equal(t, FlagMaster, n.Flags)

	// A replica cannot forget its primary.
	require.NoError(t, a.Forget(t0+2000+BanTTL, idC))
	a.myself.Flags = FlagMyself | FlagSlave
	a.myself.MasterID = idB
	err := a.Forget(t0, idB)
	require.Error(t, err)
	assert.Equal(t, "ERR Can't forget my master!", err.Error())
}

func TestResetAndEpochCommands(t *testing.T) {
	a := newPeer(t, idA, "10.0.0.1", 7000)

	// SET-CONFIG-EPOCH on a fresh node.
	for _, c := range []struct{ arg, err string }{
		{"-1", "ERR Invalid config epoch specified: -1"},
		{"abc", "ERR value is not an integer or out of range"},
		{"18446744073709551615", "ERR value is not an integer or out of range"},
	} {
		_, err := ParseConfigEpoch([]byte(c.arg))
		require.Error(t, err)
		assert.Equal(t, c.err, err.Error())
	}
	e, err := ParseConfigEpoch([]byte("5"))
	require.NoError(t, err)
	require.NoError(t, a.SetConfigEpoch(e))
	assert.True(t, a.TakeEffects().Save)
	assert.Equal(t, uint64(5), a.CurrentEpoch())
	err = a.SetConfigEpoch(6)
	require.Error(t, err)
	assert.Equal(t, "ERR Node config epoch is already non-zero", err.Error())

	// BUMPEPOCH: still the greatest epoch → STILL.
	bumped, epoch := a.BumpEpoch()
	assert.False(t, bumped)
	assert.Equal(t, uint64(5), epoch)

	b := newPeer(t, idB, "10.0.0.2", 7001)
	handshake(t, a, b, t0)
	err = b.SetConfigEpoch(3)
	require.Error(t, err)
	assert.Equal(t, "ERR The user can assign a config epoch only when the node does not know any other node.",
		err.Error())
	// b learned currentEpoch 5 from a: its bump takes 6.
	bumped, epoch = b.BumpEpoch()
	assert.True(t, bumped)
	assert.Equal(t, uint64(6), epoch)
	assert.True(t, b.TakeEffects().Save)

	// RESET: a primary with keys refuses.
	require.NoError(t, a.AddSlots(args("1", "2")))
	a.TakeEffects()
	err = a.Reset(t0, false, false)
	require.Error(t, err)
	assert.Equal(t, "ERR CLUSTER RESET can't be called with master nodes containing keys", err.Error())
	require.NoError(t, a.Reset(t0, false, true))
	fx := a.TakeEffects()
	assert.True(t, fx.Save)
	assert.True(t, fx.Publish)
	assert.Len(t, fx.Close, 2)
	assert.Equal(t, 1, a.KnownNodes())
	me := a.Myself()
	assert.Equal(t, 0, me.NumSlots())
	assert.Equal(t, idA, a.MyID(), "soft reset keeps the id")
	assert.Equal(t, uint64(5), a.Myself().ConfigEpoch, "and the epochs")

	// A replica resets into an empty primary.
	b.myself.Flags = FlagMyself | FlagSlave
	b.myself.MasterID = idA
	require.NoError(t, b.Reset(t0, true, false), "a replica may hold keys")
	assert.NotEqual(t, idB, b.MyID(), "hard reset: new id")
	assert.True(t, ValidID(b.MyID()))
	assert.NotEqual(t, strings.Repeat("b", 40), b.MyShardID())
	assert.Equal(t, uint64(0), b.CurrentEpoch())
	assert.Equal(t, uint64(0), b.Myself().ConfigEpoch)
	assert.Equal(t, FlagMyself|FlagMaster, b.Myself().Flags)
	assert.Equal(t, "", b.Myself().MasterID)
	require.NoError(t, b.Verify())
	require.NoError(t, b.SetConfigEpoch(0), "fresh again")
}

func TestEpochsAndCollision(t *testing.T) {
	a := newPeer(t, idA, "10.0.0.1", 7000) // d97a…
	b := newPeer(t, idB, "10.0.0.2", 7001) // b1df…: smaller
	handshake(t, a, b, t0)
	// Both had configEpoch 0: b, with the smaller id, took a new one while
	// the handshake ran; a did not.
	assert.Equal(t, uint64(1), b.Myself().ConfigEpoch)
	assert.Equal(t, uint64(1), b.CurrentEpoch())
	assert.Equal(t, uint64(0), a.Myself().ConfigEpoch)

	// a hears of it: currentEpoch and b's configEpoch follow, saved.
	al, _ := a.Lookup(idB)
	a.Receive(t0+600, al.inLink.id, &busv1.Frame{Header: b.header(busv1.Type_TYPE_PING)})
	fx := a.TakeEffects()
	assert.True(t, fx.Save)
	assert.Equal(t, uint64(1), a.CurrentEpoch())
	n, _ := a.Lookup(idB)
	assert.Equal(t, uint64(1), n.ConfigEpoch)

	// Collide again at 1: only b moves, to currentEpoch+1, and saves before
	// anything announces it.
	a.myself.ConfigEpoch = 1
	a.Receive(t0+700, al.inLink.id, &busv1.Frame{Header: b.header(busv1.Type_TYPE_PING)})
	a.TakeEffects()
	assert.Equal(t, uint64(1), a.Myself().ConfigEpoch, "the greater id keeps its epoch")
	bl, _ := b.Lookup(idA)
	b.Receive(t0+800, bl.link.id, &busv1.Frame{Header: a.header(busv1.Type_TYPE_PONG)})
	fx = b.TakeEffects()
	assert.True(t, fx.Save)
	assert.Equal(t, uint64(2), b.Myself().ConfigEpoch)
	assert.Equal(t, uint64(2), b.CurrentEpoch())

	// Replicas never collide.
	b.myself.Flags = FlagMyself | FlagSlave
	b.myself.ConfigEpoch = 1
	b.Receive(t0+900, bl.link.id, &busv1.Frame{Header: a.header(busv1.Type_TYPE_PONG)})
	b.TakeEffects()
	assert.Equal(t, uint64(1), b.Myself().ConfigEpoch)
}

// ownedBy builds a header from p claiming set with epoch.
func claim(p *peer, t busv1.Type, epoch uint64, ranges ...int) *busv1.Frame {
	h := p.header(t)
	var set slots.Set
	for i := 0; i < len(ranges); i += 2 {
		set.AddRange(ranges[i], ranges[i+1])
	}
	h.Slots = SlotBitmap(&set)
	h.ConfigEpoch = epoch
	h.CurrentEpoch = max(h.CurrentEpoch, epoch)
	return &busv1.Frame{Header: h}
}

func TestSlotConfigRules(t *testing.T) {
	a := newPeer(t, idA, "10.0.0.1", 7000)
	b := newPeer(t, idB, "10.0.0.2", 7001)
	c := newPeer(t, idC, "10.0.0.3", 7002)
	handshake(t, a, b, t0)
	handshake(t, a, c, t0)
	require.NoError(t, a.AddSlotsRange(args("0", "99")))
	a.myself.ConfigEpoch = 5
	a.currentEpoch = 5
	a.TakeEffects()
	bl, _ := a.Lookup(idB)
	cl, _ := a.Lookup(idC)
	bIn, cIn := bl.inLink.id, cl.inLink.id

	// Rule 1: unassigned slots claimed are taken.
	a.Receive(t0+1000, bIn, claim(b, busv1.Type_TYPE_PING, 3, 100, 199))
	fx := a.TakeEffects()
	assert.True(t, fx.Save)
	assert.True(t, fx.Publish)
	assert.Equal(t, idB, a.Owner(150))

	// A claim with a smaller epoch than the owner's loses, and the sender
	// gets an UPDATE about the owner.
	a.Receive(t0+1100, cIn, claim(c, busv1.Type_TYPE_PING, 2, 150, 160))
	fx = a.TakeEffects()
	assert.Equal(t, idB, a.Owner(150))
	require.Len(t, fx.Send, 2, "PONG, then UPDATE")
	up := fx.Send[1]
	assert.Equal(t, cIn, up.Link, "on the link the claim came from")
	require.Equal(t, busv1.Type_TYPE_UPDATE, up.Frame.Header.Type)
	assert.Equal(t, idB, up.Frame.Update.Id)
	assert.Equal(t, uint64(3), up.Frame.Update.ConfigEpoch)
	set, ok := ParseSlotBitmap(up.Frame.Update.Slots)
	require.True(t, ok)
	assert.Equal(t, []slots.Range{{Start: 100, End: 199}}, set.Ranges())

	// Rule 2: a greater epoch rebinds, even slots of myself: their keys must
	// go (DropSlots), but a still serves others, so it stays a primary.
	a.Receive(t0+1200, cIn, claim(c, busv1.Type_TYPE_PING, 7, 50, 150))
	fx = a.TakeEffects()
	assert.Equal(t, idC, a.Owner(50))
	assert.Equal(t, idC, a.Owner(150))
	assert.Equal(t, idA, a.Owner(49))
	assert.Equal(t, idB, a.Owner(151))
	require.Len(t, fx.DropSlots, 50)
	assert.Equal(t, 50, fx.DropSlots[0])
	assert.Equal(t, "", fx.Replicate)
	assert.Equal(t, uint64(7), a.CurrentEpoch())

	// A sender no longer claiming a slot keeps it, but anyone may take it.
	a.Receive(t0+1300, bIn, claim(b, busv1.Type_TYPE_PING, 3, 151, 198))
	a.TakeEffects()
	assert.Equal(t, idB, a.Owner(199), "still bound to b")
	a.Receive(t0+1400, cIn, claim(c, busv1.Type_TYPE_PING, 7, 50, 150, 199, 199))
	a.TakeEffects()
	assert.Equal(t, idC, a.Owner(199), "taken without a greater epoch")

	// UPDATE about b: a newer config of b wins, except for a slot a is
	// importing (the operator closes those).
	update := func(now int64, epoch uint64) Effects {
		h := b.header(busv1.Type_TYPE_UPDATE)
		h.CurrentEpoch = epoch
		a.Receive(now, bIn, &busv1.Frame{Header: h,
			Update: &busv1.Update{Id: idB, ConfigEpoch: epoch, Slots: SlotBitmap(rangeSet(0, 49))}})
		return a.TakeEffects()
	}
	a.importing[10] = a.nodes[idB]
	fx = update(t0+1500, 9)
	assert.Equal(t, idA, a.Owner(10))
	assert.Equal(t, idB, a.Owner(11))
	assert.Equal(t, "", fx.Replicate)
	// Losing the last slot makes a follow the new owner.
	delete(a.importing, 10)
	fx = update(t0+1500, 10)
	assert.Equal(t, idB, fx.Replicate)
	assert.True(t, fx.Save)
	me := a.Myself()
	assert.Equal(t, FlagMyself|FlagSlave, me.Flags)
	assert.Equal(t, idB, me.MasterID)
	assert.Equal(t, b.MyShardID(), a.MyShardID())
	n, _ := a.Lookup(idB)
	assert.Equal(t, uint64(10), n.ConfigEpoch)
	assert.Equal(t, idB, a.Owner(10))
	require.NoError(t, a.Verify())
	// As a replica it announces its primary's slots and epoch.
	h := a.header(busv1.Type_TYPE_PING)
	assert.Equal(t, idB, h.Primary)
	assert.Equal(t, uint64(10), h.ConfigEpoch)
	assert.Equal(t, uint32(busv1.NodeFlag_NODE_FLAG_REPLICA|busv1.NodeFlag_NODE_FLAG_MYSELF), h.Flags)

	// A stale UPDATE changes nothing.
	a.Receive(t0+1600, bIn, &busv1.Frame{Header: b.header(busv1.Type_TYPE_UPDATE),
		Update: &busv1.Update{Id: idB, ConfigEpoch: 8, Slots: SlotBitmap(rangeSet(0, 16383))}})
	assert.Equal(t, Effects{}, a.TakeEffects())
}

func rangeSet(lo, hi int) *slots.Set {
	var s slots.Set
	s.AddRange(lo, hi)
	return &s
}

func TestRoleChanges(t *testing.T) {
	a := newPeer(t, idA, "10.0.0.1", 7000)
	b := newPeer(t, idB, "10.0.0.2", 7001)
	c := newPeer(t, idC, "10.0.0.3", 7002)
	handshake(t, a, b, t0)
	handshake(t, a, c, t0)
	bl, _ := a.Lookup(idB)
	a.Receive(t0+100, bl.inLink.id, claim(b, busv1.Type_TYPE_PING, 1, 0, 9))
	a.TakeEffects()
	assert.Equal(t, idB, a.Owner(0))
	// b announces itself as c's replica: its slots are released.
	h := b.header(busv1.Type_TYPE_PING)
	h.Primary = idC
	h.Flags = uint32(busv1.NodeFlag_NODE_FLAG_REPLICA)
	a.Receive(t0+200, bl.inLink.id, &busv1.Frame{Header: h})
	fx := a.TakeEffects()
	assert.True(t, fx.Save)
	n, _ := a.Lookup(idB)
	assert.Equal(t, FlagSlave, n.Flags)
	assert.Equal(t, idC, n.MasterID)
	assert.Equal(t, "", a.Owner(0))
	lines, err := a.Replicas(idC)
	require.NoError(t, err)
	require.Len(t, lines, 1)
	assert.True(t, strings.HasPrefix(lines[0], idB+" 10.0.0.2:7001@17001 slave "+idC+" "), lines[0])
	_, err = a.Replicas(idB)
	assert.EqualError(t, err, "ERR The specified node is not a master")
	_, err = a.Replicas("x")
	assert.EqualError(t, err, "ERR Unknown node x")
	lines, err = a.Replicas(idA)
	require.NoError(t, err)
	assert.Empty(t, lines)
	// And back to primary.
	a.Receive(t0+300, bl.inLink.id, &busv1.Frame{Header: b.header(busv1.Type_TYPE_PING)})
	n, _ = a.Lookup(idB)
	assert.Equal(t, FlagMaster, n.Flags)
	assert.Equal(t, "", n.MasterID)
}

func TestGossip(t *testing.T) {
	a := newPeer(t, idA, "10.0.0.1", 7000)
	b := newPeer(t, idB, "10.0.0.2", 7001)
	handshake(t, a, b, t0)
	bl, _ := a.Lookup(idB)
	ids := []string{}
	var entries []*busv1.Gossip
	for i := range 30 {
		id := strings.Repeat(strconv.Itoa(i%10), 39) + string(rune('a'+i/10))
		ids = append(ids, id)
		entries = append(entries, &busv1.Gossip{Id: id, Ip: "10.1.0." + strconv.Itoa(i), Port: 7000, Cport: 17000,
			Flags: uint32(busv1.NodeFlag_NODE_FLAG_PRIMARY), PongReceived: t0 + 400})
	}
	// Entries that must not add a node.
	entries = append(entries,
		&busv1.Gossip{Id: idD, Flags: uint32(busv1.NodeFlag_NODE_FLAG_NOADDR), Ip: "1.1.1.1"},
		&busv1.Gossip{Id: "bad", Ip: "1.1.1.1"},
		&busv1.Gossip{Id: strings.Repeat("e", 40)},
	)
	a.Receive(t0+500, bl.inLink.id, &busv1.Frame{Header: b.header(busv1.Type_TYPE_PING), Gossip: entries})
	fx := a.TakeEffects()
	assert.True(t, fx.Save)
	assert.Equal(t, 32, a.KnownNodes())
	n, ok := a.Lookup(ids[7])
	require.True(t, ok)
	assert.Equal(t, FlagMaster, n.Flags)
	assert.Equal(t, "10.1.0.7", n.IP)

	// The next Tick dials them all.
	a.Tick(t0 + 600)
	fx = a.TakeEffects()
	assert.Len(t, fx.Dial, 30)
	for _, d := range fx.Dial {
		a.LinkConnected(t0+600, d.Link)
	}
	fx = a.TakeEffects()
	require.Len(t, fx.Send, 30)

	// Gossip sections: max(3, 32/10) = 3 entries, never myself or the
	// receiver, no duplicates; handshake nodes and unreachable slot-less
	// nodes are left out.
	require.NoError(t, a.Meet(t0, "10.2.0.1", 7000, 17000))
	for range 50 {
		a.sendPing(t0+700, bl.link, busv1.Type_TYPE_PING)
		ss, _ := sends(a.State)
		require.Len(t, ss, 1)
		g := ss[0].Frame.Gossip
		assert.Len(t, g, 3)
		seen := map[string]bool{}
		for _, e := range g {
			assert.NotEqual(t, idA, e.Id)
			assert.NotEqual(t, idB, e.Id)
			assert.False(t, seen[e.Id])
			seen[e.Id] = true
			assert.Zero(t, e.Flags&uint32(busv1.NodeFlag_NODE_FLAG_HANDSHAKE))
		}
	}

	// Failure reports from a primary, withdrawn by a later good word, and
	// expiring after 2 × node timeout.
	c := a.nodes[ids[0]]
	report := func(now int64, flags busv1.NodeFlag) {
		g := gossipEntry(c)
		g.Flags = uint32(flags | busv1.NodeFlag_NODE_FLAG_PRIMARY)
		a.Receive(now, bl.inLink.id, &busv1.Frame{Header: b.header(busv1.Type_TYPE_PING), Gossip: []*busv1.Gossip{g}})
		a.TakeEffects()
	}
	report(t0+1000, busv1.NodeFlag_NODE_FLAG_PFAIL)
	cnt, err := a.CountFailureReports(ids[0])
	require.NoError(t, err)
	assert.Equal(t, 1, cnt)
	report(t0+1100, 0)
	cnt, _ = a.CountFailureReports(ids[0])
	assert.Equal(t, 0, cnt)
	report(t0+1200, busv1.NodeFlag_NODE_FLAG_FAIL)
	a.Tick(t0 + 1200 + 4001)
	cnt, _ = a.CountFailureReports(ids[0])
	assert.Equal(t, 0, cnt, "expired")
	_, err = a.CountFailureReports("nope")
	assert.EqualError(t, err, "ERR Unknown node nope")
}

func TestTickPings(t *testing.T) {
	a := newPeer(t, idA, "10.0.0.1", 7000)
	b := newPeer(t, idB, "10.0.0.2", 7001)
	handshake(t, a, b, t0)
	bl, _ := a.Lookup(idB)
	out := bl.link.id
	// Answered recently: nothing to do for 9 ticks, then the random ping.
	now := t0
	for i := 1; a.iteration%10 != 9; i++ {
		a.Tick(now)
		assert.Empty(t, a.TakeEffects().Send)
	}
	now += 100
	a.Tick(now)
	_, ping, _ := onlySend(t, a.State, busv1.Type_TYPE_PING)
	assert.Equal(t, busv1.Type_TYPE_PING, ping.Header.Type)
	n, _ := a.Lookup(idB)
	assert.Equal(t, now, n.PingSent)

	// No PONG for half the node timeout and no traffic at all: the link is
	// replaced (once it is older than the node timeout).
	a.Tick(now + 2001)
	fx := a.TakeEffects()
	assert.Equal(t, []LinkID{out}, fx.Close)
	require.Len(t, fx.Dial, 1)
	a.LinkConnected(now+2002, fx.Dial[0].Link)
	_, ping, _ = onlySend(t, a.State, busv1.Type_TYPE_PING)
	n, _ = a.Lookup(idB)
	assert.Equal(t, now, n.PingSent, "the pending ping keeps its time")

	// A PONG clears it; with none for half the node timeout, ping again.
	a.Receive(now+2003, fx.Dial[0].Link, &busv1.Frame{Header: b.header(busv1.Type_TYPE_PONG)})
	a.TakeEffects()
	n, _ = a.Lookup(idB)
	assert.Zero(t, n.PingSent)
	a.iteration = 100 // not a random-ping tick
	a.Tick(now + 2003 + 1001)
	_, _, _ = onlySend(t, a.State, busv1.Type_TYPE_PING)

	// A failed connection counts as a ping sent, so the node can time out.
	a.LinkClosed(now+4000, fx.Dial[0].Link)
	assert.Equal(t, Effects{}, a.TakeEffects())
	a.Tick(now + 4100)
	fx = a.TakeEffects()
	require.Len(t, fx.Dial, 1)
	a.nodes[idB].PingSent = 0
	a.LinkClosed(now+4200, fx.Dial[0].Link)
	n, _ = a.Lookup(idB)
	assert.Equal(t, now+4200, n.PingSent)
	assert.False(t, n.Linked)
}

func TestMeetRepeatedForPeerThatForgotUs(t *testing.T) {
	a := newPeer(t, idA, "10.0.0.1", 7000)
	b := newPeer(t, idB, "10.0.0.2", 7001)
	handshake(t, a, b, t0)
	// b's connection to a goes away and does not come back.
	al, _ := a.Lookup(idB)
	out := al.link.id
	a.LinkClosed(t0+500, al.inLink.id)
	a.TakeEffects()
	a.iteration = 100
	a.nodes[idB].PongRecv = t0 + 2600 // no ping due
	a.Tick(t0 + 2600)
	assert.Empty(t, a.TakeEffects().Send, "the cron never sends a MEET on its own")
	pong := &busv1.Frame{Header: b.header(busv1.Type_TYPE_PONG)}
	a.Receive(t0+2500, out, pong)
	assert.Empty(t, a.TakeEffects().Send, "within the handshake timeout")
	// b answers under the id we know but still does not connect: it forgot us.
	a.Receive(t0+2501, out, pong)
	_, meet, _ := onlySend(t, a.State, busv1.Type_TYPE_MEET)
	assert.Equal(t, idA, meet.Header.Sender)
	a.Receive(t0+3000, out, pong)
	assert.Empty(t, a.TakeEffects().Send, "one MEET per handshake timeout")
	// A later connection to b starts with a PING, not a remembered MEET.
	a.LinkClosed(t0+3100, out)
	a.Tick(t0 + 3200)
	fx := a.TakeEffects()
	require.Len(t, fx.Dial, 1)
	a.LinkConnected(t0+3200, fx.Dial[0].Link)
	onlySend(t, a.State, busv1.Type_TYPE_PING)
}

// A node that took a new id (CLUSTER RESET HARD) at a known address is not
// met on the old node's behalf: it would learn us and gossip the old id back.
func TestNoMeetForNewIDAtKnownAddress(t *testing.T) {
	a := newPeer(t, idA, "10.0.0.1", 7000)
	b := newPeer(t, idB, "10.0.0.2", 7001)
	c := newPeer(t, idC, "10.0.0.2", 7001) // b after a hard reset
	handshake(t, a, b, t0)
	al, _ := a.Lookup(idB)
	out := al.link.id
	a.LinkClosed(t0+500, al.inLink.id)
	a.TakeEffects()
	a.Receive(t0+5000, out, &busv1.Frame{Header: c.header(busv1.Type_TYPE_PONG)})
	assert.Empty(t, a.TakeEffects().Send)
	a.Tick(t0 + 5100)
	for _, snd := range a.TakeEffects().Send {
		assert.NotEqual(t, busv1.Type_TYPE_MEET, snd.Frame.Header.Type)
	}
}
