package bus

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/slots"
)

const idD = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

// multi is a four-node view from A: A is a master with open slots, B a
// master with a hostname, C B's replica, D a failed replica of A.
const multi = idA + " 10.0.0.1:7000@17000,,shard-id=" + sh1 + " myself,master - 0 0 5 connected 0-5460 [5461-<-" + idB + "] [17->-" + idB + "]\n" +
	idB + " 10.0.0.2:7001@17001,host-b,shard-id=" + sh2 + " master - 1700000000000 1700000000100 7 connected 5461-16383\n" +
	idC + " 10.0.0.3:7002@17002,,shard-id=" + sh2 + " slave " + idB + " 0 1700000000200 0 disconnected\n" +
	idD + " 10.0.0.4:7003@17003,,shard-id=" + sh1 + " slave,fail " + idA + " 0 0 0 disconnected\n" +
	"vars currentEpoch 9 lastVoteEpoch 3\n"

func loadMulti(t *testing.T, opts Options) *State {
	t.Helper()
	s, err := Load(multi, 42, opts, func() string { t.Fatal("no id needed"); return "" })
	require.NoError(t, err)
	return s
}

func TestNodesMultiNode(t *testing.T) {
	s := loadMulti(t, DefaultOptions())
	want := idC + " 10.0.0.3:7002@17002 slave " + idB + " 0 42 7 disconnected\n" +
		idD + " 10.0.0.4:7003@17003 slave,fail " + idA + " 0 0 5 disconnected\n" +
		idB + " 10.0.0.2:7001@17001,host-b master - 42 42 7 disconnected 5461-16383\n" +
		idA + " 10.0.0.1:7000@17000 myself,master - 0 0 5 connected 0-5460 [17->-" + idB + "] [5461-<-" + idB + "]\n"
	assert.Equal(t, want, s.Nodes())
	assert.Equal(t, uint64(9), s.CurrentEpoch())
	assert.Equal(t, uint64(3), s.LastVoteEpoch())
	assert.Equal(t, 4, s.KnownNodes())
	assert.True(t, s.OK())
	assert.Contains(t, s.Info(), "cluster_known_nodes:4\r\ncluster_size:2\r\ncluster_current_epoch:9\r\ncluster_my_epoch:5\r\n")
	c, ok := s.Lookup(idC)
	require.True(t, ok)
	assert.Equal(t, sh2, c.ShardID)
	_, ok = s.Lookup(strings.Repeat("9", 40))
	assert.False(t, ok)
}

func TestConfigRoundTrip(t *testing.T) {
	s := loadMulti(t, DefaultOptions())
	conf := s.Config()
	// Lines come in id order; the text reloads to the same text.
	want := idC + " 10.0.0.3:7002@17002,,shard-id=" + sh2 + " slave " + idB + " 0 42 7 disconnected\n" +
		idD + " 10.0.0.4:7003@17003,,shard-id=" + sh1 + " slave,fail " + idA + " 0 0 5 disconnected\n" +
		idB + " 10.0.0.2:7001@17001,host-b,shard-id=" + sh2 + " master - 42 42 7 disconnected 5461-16383\n" +
		idA + " 10.0.0.1:7000@17000,,shard-id=" + sh1 + " myself,master - 0 0 5 connected 0-5460 [17->-" + idB + "] [5461-<-" + idB + "]\n" +
		"vars currentEpoch 9 lastVoteEpoch 3\n"
	assert.Equal(t, want, conf)
	s2, err := Load(conf, 42, DefaultOptions(), nil)
	require.NoError(t, err)
	assert.Equal(t, conf, s2.Config())
	assert.Equal(t, s.Nodes(), s2.Nodes())
}

func TestConfigFresh(t *testing.T) {
	s := fresh(t)
	require.NoError(t, s.AddSlotsRange(args("0", "16383")))
	assert.Equal(t, idA+" :17311@27311,,shard-id="+sh1+" myself,master - 0 0 0 connected 0-16383\n"+
		"vars currentEpoch 0 lastVoteEpoch 0\n", s.Config())
}

func TestConfigLeavesOutHandshakeNodes(t *testing.T) {
	s, err := Load(idA+" :7000@17000 myself,master - 0 0 0 connected\n"+
		idB+" 10.0.0.2:7001@17001 handshake - 5 0 0 disconnected\n", 1, DefaultOptions(), constID(sh1))
	require.NoError(t, err)
	assert.Contains(t, s.Nodes(), idB+" 10.0.0.2:7001@17001 handshake - 1 0 0 disconnected\n")
	assert.NotContains(t, s.Config(), idB)
}

func TestLoadRedis70Config(t *testing.T) {
	// nodes.conf as redis-server 7.0.15 writes it: no aux fields, the
	// hostname after a comma when set, ":0@0" before the port is known.
	text := "d97a2951baaf5f53b2f1413f577a8c3f292f601a :0@0 myself,master - 0 0 0 connected\nvars currentEpoch 0 lastVoteEpoch 0\n"
	ids := []string{sh1, sh2}
	next := func() string { id := ids[0]; ids = ids[1:]; return id }
	s, err := Load(text, 0, DefaultOptions(), next)
	require.NoError(t, err)
	assert.Equal(t, idA, s.MyID())
	assert.Equal(t, sh1, s.MyShardID(), "a master saved without a shard id gets a new one")
	assert.False(t, s.OK())

	text = "b1df8dc89bfa33daeb21cb7a7aa8e389c77652d0 10.1.2.3:17312@27312,host-a.example myself,master - 0 0 0 connected 5\nvars currentEpoch 0 lastVoteEpoch 0\n"
	s, err = Load(text, 0, DefaultOptions(), next)
	require.NoError(t, err)
	me := s.Myself()
	assert.Equal(t, "10.1.2.3", me.IP)
	assert.Equal(t, 17312, me.Port)
	assert.Equal(t, 27312, me.CPort)
	assert.Equal(t, "host-a.example", me.Hostname)
	assert.True(t, me.Slots.Has(5))
	assert.Equal(t, 1, me.NumSlots())

	// A replica saved without a shard id follows its primary's.
	text = idA + " :7000@17000 myself,slave " + idB + " 0 0 0 connected\n" +
		idB + " 10.0.0.2:7001@17001,,shard-id=" + sh2 + " master - 0 0 1 connected 0-16383\n"
	s, err = Load(text, 0, DefaultOptions(), constID(sh1))
	require.NoError(t, err)
	assert.Equal(t, sh2, s.MyShardID())
}

func TestLoadRedis72Config(t *testing.T) {
	text := idA + " 192.168.3.222:7002@17002,,tls-port=0,shard-id=" + sh1 + " myself,master - 0 1733302987000 3 connected 10923-16383\n" +
		idB + " 192.168.3.222:7000@17000,,tls-port=0,shard-id=" + sh2 + " master - 0 1733302988000 1 connected 0-5460\n" +
		"vars currentEpoch 6 lastVoteEpoch 0\n"
	s, err := Load(text, 99, DefaultOptions(), nil)
	require.NoError(t, err)
	assert.Equal(t, sh1, s.MyShardID())
	b, _ := s.Lookup(idB)
	assert.Equal(t, sh2, b.ShardID)
	assert.Equal(t, int64(99), b.PongRecv)
	assert.Equal(t, uint64(6), s.CurrentEpoch())
	assert.False(t, s.OK(), "5461-10922 unassigned")

	// Without the bus port, it is port+10000; tcp-port overrides the port.
	s, err = Load(idA+" 10.0.0.1:7000,,tcp-port=7005,nodename=x myself,master - 0 0 0 connected\n", 0, DefaultOptions(), constID(sh1))
	require.NoError(t, err)
	me := s.Myself()
	assert.Equal(t, 7005, me.Port)
	assert.Equal(t, 17000, me.CPort)
}

func TestLoadRaisesCurrentEpoch(t *testing.T) {
	s, err := Load(idA+" :7000@17000 myself,master - 0 0 12 connected\nvars currentEpoch 3 lastVoteEpoch 2\n", 0, DefaultOptions(), constID(sh1))
	require.NoError(t, err)
	assert.Equal(t, uint64(12), s.CurrentEpoch())
	assert.Equal(t, uint64(2), s.LastVoteEpoch())
}

func TestLoadErrors(t *testing.T) {
	me := idA + " :7000@17000 myself,master - 0 0 0 connected"
	for _, c := range []struct{ text, line string }{
		{idB + " :7000@17000 master - 0 0 0 connected\n", idB + " :7000@17000 master - 0 0 0 connected"},
		{"vars currentEpoch 1 lastVoteEpoch\n" + me, "vars currentEpoch 1 lastVoteEpoch"},
		{"vars currentEpoch x\n" + me, "vars currentEpoch x"},
		{idA + " :7000@17000 myself,master - 0 0 0\n", idA + " :7000@17000 myself,master - 0 0 0"},
		{"short :7000@17000 myself,master - 0 0 0 connected\n", "short :7000@17000 myself,master - 0 0 0 connected"},
		{idA + " 7000@17000 myself,master - 0 0 0 connected\n", idA + " 7000@17000 myself,master - 0 0 0 connected"},
		{idA + " :x@17000 myself,master - 0 0 0 connected\n", idA + " :x@17000 myself,master - 0 0 0 connected"},
		{idA + " :7000@x myself,master - 0 0 0 connected\n", idA + " :7000@x myself,master - 0 0 0 connected"},
		{idA + " :7000@17000,,bogus=1 myself,master - 0 0 0 connected\n", idA + " :7000@17000,,bogus=1 myself,master - 0 0 0 connected"},
		{idA + " :7000@17000,,shard-id=short myself,master - 0 0 0 connected\n", idA + " :7000@17000,,shard-id=short myself,master - 0 0 0 connected"},
		{idA + " :7000@17000,,noequals myself,master - 0 0 0 connected\n", idA + " :7000@17000,,noequals myself,master - 0 0 0 connected"},
		{idA + " :7000@17000 myself,boss - 0 0 0 connected\n", idA + " :7000@17000 myself,boss - 0 0 0 connected"},
		{idA + " :7000@17000 myself,slave nothex 0 0 0 connected\n", idA + " :7000@17000 myself,slave nothex 0 0 0 connected"},
		{idA + " :7000@17000 myself,master - 0 0 x connected\n", idA + " :7000@17000 myself,master - 0 0 x connected"},
		{idA + " :7000@17000 myself,master - 0 0 0 connected 16384\n", idA + " :7000@17000 myself,master - 0 0 0 connected 16384"},
		{idA + " :7000@17000 myself,master - 0 0 0 connected 5-x\n", idA + " :7000@17000 myself,master - 0 0 0 connected 5-x"},
		{idA + " :7000@17000 myself,master - 0 0 0 connected [5->-short]\n", idA + " :7000@17000 myself,master - 0 0 0 connected [5->-short]"},
		{idA + " :7000@17000 myself,master - 0 0 0 connected [5=>-" + idB + "]\n", idA + " :7000@17000 myself,master - 0 0 0 connected [5=>-" + idB + "]"},
		{idA + " :7000@17000 myself,master - 0 0 0 connected [5->-" + idB + "\n", idA + " :7000@17000 myself,master - 0 0 0 connected [5->-" + idB},
		{me + "\n" + idB + " :7001@17001 myself,master - 0 0 0 connected\n", idB + " :7001@17001 myself,master - 0 0 0 connected"},
		{"\n\n", ""},
	} {
		_, err := Load(c.text, 0, DefaultOptions(), constID(sh1))
		require.Error(t, err, "%q", c.text)
		assert.Equal(t, `Unrecoverable error: corrupted cluster config file "`+c.line+`".`, err.Error(), "%q", c.text)
	}
	// Unknown vars and blank lines are fine.
	_, err := Load("\n"+me+"\n\nvars currentEpoch 1 someday 5 lastVoteEpoch 0\n", 0, DefaultOptions(), constID(sh1))
	assert.NoError(t, err)
}

func TestSlotsView(t *testing.T) {
	s := fresh(t)
	assert.Nil(t, s.Slots())
	require.NoError(t, s.AddSlots(args("0", "1", "2", "5", "7")))
	require.NoError(t, s.AddSlotsRange(args("100", "200", "300", "300")))
	// Same ranges, in the same order, as redis-server 7.0.15 replies.
	node := SlotNode{Endpoint: "", Port: 17311, ID: idA}
	assert.Equal(t, []SlotRange{
		{0, 2, []SlotNode{node}}, {5, 5, []SlotNode{node}}, {7, 7, []SlotNode{node}},
		{100, 200, []SlotNode{node}}, {300, 300, []SlotNode{node}},
	}, s.Slots())

	m := loadMulti(t, DefaultOptions())
	a := SlotNode{Endpoint: "10.0.0.1", Port: 7000, ID: idA}
	b := SlotNode{Endpoint: "10.0.0.2", Port: 7001, ID: idB, Metadata: [][2]string{{"hostname", "host-b"}}}
	c := SlotNode{Endpoint: "10.0.0.3", Port: 7002, ID: idC}
	// C, B's replica, has announced no replication offset yet (it is
	// loading, as far as we know) and D, A's replica, is failed: both are
	// left out.
	assert.Equal(t, []SlotRange{{0, 5460, []SlotNode{a}}, {5461, 16383, []SlotNode{b}}}, m.Slots())
	m.nodes[idC].replOffset = 77
	assert.Equal(t, []SlotRange{{0, 5460, []SlotNode{a}}, {5461, 16383, []SlotNode{b, c}}}, m.Slots())

	o := DefaultOptions()
	o.PreferredEndpoint = EndpointHostname
	m.SetOptions(o)
	sl := m.Slots()
	assert.Equal(t, SlotNode{Endpoint: "?", Port: 7000, ID: idA, Metadata: [][2]string{{"ip", "10.0.0.1"}}}, sl[0].Nodes[0])
	assert.Equal(t, SlotNode{Endpoint: "host-b", Port: 7001, ID: idB, Metadata: [][2]string{{"ip", "10.0.0.2"}}}, sl[1].Nodes[0])
	o.PreferredEndpoint = EndpointUnknown
	m.SetOptions(o)
	sl = m.Slots()
	assert.Equal(t, SlotNode{NullEndpoint: true, Port: 7001, ID: idB,
		Metadata: [][2]string{{"ip", "10.0.0.2"}, {"hostname", "host-b"}}}, sl[1].Nodes[0])
}

func TestShardsView(t *testing.T) {
	s := fresh(t)
	assert.Equal(t, []Shard{{Nodes: []ShardNode{{ID: idA, Port: 17311, Role: "master", Health: "online"}}}}, s.Shards(0))
	require.NoError(t, s.AddSlots(args("0", "1", "2", "5", "7")))
	sh := s.Shards(123)
	assert.Equal(t, []slots.Range{{Start: 0, End: 2}, {Start: 5, End: 5}, {Start: 7, End: 7}}, sh[0].Slots)
	assert.Equal(t, int64(123), sh[0].Nodes[0].ReplicationOffset)

	m := loadMulti(t, DefaultOptions())
	sh = m.Shards(5)
	require.Len(t, sh, 2)
	// Masters in id order: B then A.
	assert.Equal(t, Shard{Slots: []slots.Range{{Start: 5461, End: 16383}}, Nodes: []ShardNode{
		{ID: idB, Port: 7001, IP: "10.0.0.2", Endpoint: "10.0.0.2", Hostname: "host-b", Role: "master", Health: "online"},
		{ID: idC, Port: 7002, IP: "10.0.0.3", Endpoint: "10.0.0.3", Role: "replica", Health: "loading"},
	}}, sh[0])
	assert.Equal(t, Shard{Slots: []slots.Range{{Start: 0, End: 5460}}, Nodes: []ShardNode{
		{ID: idA, Port: 7000, IP: "10.0.0.1", Endpoint: "10.0.0.1", Role: "master", ReplicationOffset: 5, Health: "online"},
		{ID: idD, Port: 7003, IP: "10.0.0.4", Endpoint: "10.0.0.4", Role: "replica", Health: "fail"},
	}}, sh[1])
	// Other nodes' offsets are the ones their frames announce: a replica in
	// sync is online everywhere, not only in its own view.
	m.nodes[idB].replOffset, m.nodes[idC].replOffset = 900, 880
	sh = m.Shards(5)
	assert.Equal(t, []ShardNode{
		{ID: idB, Port: 7001, IP: "10.0.0.2", Endpoint: "10.0.0.2", Hostname: "host-b", Role: "master", ReplicationOffset: 900, Health: "online"},
		{ID: idC, Port: 7002, IP: "10.0.0.3", Endpoint: "10.0.0.3", Role: "replica", ReplicationOffset: 880, Health: "online"},
	}, sh[0].Nodes)
}
