package bus

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/slots"
)

const (
	idA = "d97a2951baaf5f53b2f1413f577a8c3f292f601a"
	idB = "b1df8dc89bfa33daeb21cb7a7aa8e389c77652d0"
	idC = "01d85f997f3b0f057bfbf71b19325a4c8e7feff9"
	sh1 = "1111111111111111111111111111111111111111"
	sh2 = "2222222222222222222222222222222222222222"
)

func args(s ...string) [][]byte {
	out := make([][]byte, len(s))
	for i, a := range s {
		out[i] = []byte(a)
	}
	return out
}

func seqArgs(lo, hi int) [][]byte {
	var out [][]byte
	for i := lo; i <= hi; i++ {
		out = append(out, []byte(strconv.Itoa(i)))
	}
	return out
}

// fresh returns a fresh node announced on port 17311 with its start-up
// effects drained.
func fresh(t *testing.T) *State {
	t.Helper()
	s := New(idA, sh1, DefaultOptions())
	s.SetAnnounce(DeriveAnnounce(17311, 0, 0, 0, "", ""))
	s.TakeEffects()
	return s
}

func TestNewNode(t *testing.T) {
	s := New(idA, sh1, DefaultOptions())
	assert.Equal(t, Effects{Save: true, Publish: true}, s.TakeEffects(), "a new node must be saved and published")
	assert.Equal(t, Effects{}, s.TakeEffects(), "TakeEffects drains")
	assert.Equal(t, idA, s.MyID())
	assert.Equal(t, sh1, s.MyShardID())
	assert.Equal(t, 1, s.KnownNodes())
	assert.False(t, s.OK())
	assert.Equal(t, 0, s.Size())
	me := s.Myself()
	assert.Equal(t, FlagMyself|FlagMaster, me.Flags)
	assert.Equal(t, idA+" :0@0 myself,master - 0 0 0 connected\n", s.Nodes())
}

func TestFreshInfoMatchesRedis(t *testing.T) {
	s := fresh(t)
	// redis-server 7.0.15 --cluster-enabled yes, fresh node (after its
	// start-up delay): CLUSTER INFO byte for byte.
	want := "cluster_state:fail\r\ncluster_slots_assigned:0\r\ncluster_slots_ok:0\r\ncluster_slots_pfail:0\r\n" +
		"cluster_slots_fail:0\r\ncluster_known_nodes:1\r\ncluster_size:0\r\ncluster_current_epoch:0\r\n" +
		"cluster_my_epoch:0\r\ncluster_stats_messages_sent:0\r\ncluster_stats_messages_received:0\r\n" +
		"total_cluster_links_buffer_limit_exceeded:0\r\n"
	assert.Equal(t, want, s.Info())
	assert.Equal(t, idA+" :17311@27311 myself,master - 0 0 0 connected\n", s.Nodes())
}

func TestInfoMessageCounters(t *testing.T) {
	s := fresh(t)
	s.CountSent(MsgPing)
	s.CountSent(MsgPing)
	s.CountSent(MsgMeet)
	s.CountReceived(MsgPong)
	s.CountReceived(MsgPublishShard)
	info := s.Info()
	assert.Contains(t, info, "cluster_my_epoch:0\r\ncluster_stats_messages_ping_sent:2\r\n"+
		"cluster_stats_messages_meet_sent:1\r\ncluster_stats_messages_sent:3\r\n"+
		"cluster_stats_messages_pong_received:1\r\ncluster_stats_messages_publishshard_received:1\r\n"+
		"cluster_stats_messages_received:2\r\ntotal_cluster_links_buffer_limit_exceeded:0\r\n")
	assert.Equal(t, "auth-req", MsgFailoverAuthRequest.String())
	assert.Equal(t, "unknown", MsgType(200).String())
}

func TestAddSlotsAllMakesClusterOK(t *testing.T) {
	s := fresh(t)
	require.NoError(t, s.AddSlots(seqArgs(0, 16383)))
	assert.Equal(t, Effects{Save: true, Publish: true}, s.TakeEffects())
	assert.True(t, s.OK())
	assert.Equal(t, 1, s.Size())
	assert.Equal(t, idA+" :17311@27311 myself,master - 0 0 0 connected 0-16383\n", s.Nodes())
	assert.True(t, strings.HasPrefix(s.Info(), "cluster_state:ok\r\ncluster_slots_assigned:16384\r\ncluster_slots_ok:16384\r\n"))
	assert.Contains(t, s.Info(), "\r\ncluster_size:1\r\n")
	assert.Equal(t, idA, s.Owner(0))
	assert.Equal(t, idA, s.Owner(16383))
}

func TestAddSlotsErrors(t *testing.T) {
	s := fresh(t)
	require.NoError(t, s.AddSlots(args("0", "1", "2", "5", "7")))
	s.TakeEffects()
	before := s.Nodes()
	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{"16384"}, "ERR Invalid or out of range slot"},
		{[]string{"-1"}, "ERR Invalid or out of range slot"},
		{[]string{"abc"}, "ERR Invalid or out of range slot"},
		{[]string{"01"}, "ERR Invalid or out of range slot"},
		{[]string{"+3"}, "ERR Invalid or out of range slot"},
		{[]string{""}, "ERR Invalid or out of range slot"},
		{[]string{"0"}, "ERR Slot 0 is already busy"},
		{[]string{"3", "3"}, "ERR Slot 3 specified multiple times"},
		// Every argument is parsed before any is checked.
		{[]string{"0", "x"}, "ERR Invalid or out of range slot"},
		// Checks go in argument order.
		{[]string{"9", "9", "0"}, "ERR Slot 9 specified multiple times"},
		{[]string{"9", "0", "9"}, "ERR Slot 0 is already busy"},
		{nil, "ERR wrong number of arguments for 'cluster|addslots' command"},
	} {
		err := s.AddSlots(args(c.args...))
		require.Error(t, err, "%v", c.args)
		assert.Equal(t, c.err, err.Error(), "%v", c.args)
		assert.Equal(t, Effects{}, s.TakeEffects(), "a failed command has no effects: %v", c.args)
		assert.Equal(t, before, s.Nodes(), "a failed command changes nothing: %v", c.args)
	}
}

func TestAddSlotsRange(t *testing.T) {
	s := fresh(t)
	require.NoError(t, s.AddSlots(args("0", "1", "2", "5", "7")))
	require.NoError(t, s.AddSlotsRange(args("100", "200", "300", "300")))
	assert.Equal(t, idA+" :17311@27311 myself,master - 0 0 0 connected 0-2 5 7 100-200 300\n", s.Nodes())
	s.TakeEffects()
	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{"5", "4"}, "ERR start slot number 5 is greater than end slot number 4"},
		{[]string{"10", "20", "30"}, "ERR wrong number of arguments for 'cluster|addslotsrange' command"},
		{nil, "ERR wrong number of arguments for 'cluster|addslotsrange' command"},
		{[]string{"10", "16384"}, "ERR Invalid or out of range slot"},
		{[]string{"x", "1"}, "ERR Invalid or out of range slot"},
		{[]string{"3", "6"}, "ERR Slot 5 is already busy"},
		{[]string{"10", "20", "15", "25"}, "ERR Slot 15 specified multiple times"},
		// Pairs are parsed and checked one after the other.
		{[]string{"0", "1", "x", "y"}, "ERR Slot 0 is already busy"},
		{[]string{"8", "9", "x", "y"}, "ERR Invalid or out of range slot"},
	} {
		err := s.AddSlotsRange(args(c.args...))
		require.Error(t, err, "%v", c.args)
		assert.Equal(t, c.err, err.Error(), "%v", c.args)
		assert.Equal(t, Effects{}, s.TakeEffects())
	}
	assert.False(t, s.OK())
	require.NoError(t, s.AddSlotsRange(args("3", "4", "6", "6", "8", "99", "201", "299", "301", "16383")))
	assert.True(t, s.OK())
	assert.Equal(t, idA+" :17311@27311 myself,master - 0 0 0 connected 0-16383\n", s.Nodes())
}

func TestDelSlots(t *testing.T) {
	s := fresh(t)
	require.NoError(t, s.AddSlotsRange(args("0", "16383")))
	s.TakeEffects()
	require.NoError(t, s.DelSlots(args("0")))
	assert.Equal(t, Effects{Save: true, Publish: true}, s.TakeEffects())
	assert.False(t, s.OK())
	assert.Equal(t, "", s.Owner(0))
	assert.Equal(t, idA+" :17311@27311 myself,master - 0 0 0 connected 1-16383\n", s.Nodes())

	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{"0"}, "ERR Slot 0 is already unassigned"},
		{[]string{"5", "5"}, "ERR Slot 5 specified multiple times"},
		{[]string{"5", "abc"}, "ERR Invalid or out of range slot"},
		{nil, "ERR wrong number of arguments for 'cluster|delslots' command"},
	} {
		err := s.DelSlots(args(c.args...))
		require.Error(t, err)
		assert.Equal(t, c.err, err.Error(), "%v", c.args)
	}
	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{"0", "10"}, "ERR Slot 0 is already unassigned"},
		{[]string{"10", "5"}, "ERR start slot number 10 is greater than end slot number 5"},
		{[]string{"1"}, "ERR wrong number of arguments for 'cluster|delslotsrange' command"},
		{[]string{"1", "1", "1", "2"}, "ERR Slot 1 specified multiple times"},
	} {
		err := s.DelSlotsRange(args(c.args...))
		require.Error(t, err)
		assert.Equal(t, c.err, err.Error(), "%v", c.args)
	}
	assert.Equal(t, Effects{}, s.TakeEffects())
	require.NoError(t, s.DelSlotsRange(args("1", "5460", "10923", "16383")))
	assert.Equal(t, idA+" :17311@27311 myself,master - 0 0 0 connected 5461-10922\n", s.Nodes())
	assert.Contains(t, s.Info(), "cluster_slots_assigned:5462\r\n")
}

func TestFlushSlots(t *testing.T) {
	s := fresh(t)
	require.NoError(t, s.AddSlotsRange(args("0", "16383")))
	s.TakeEffects()
	err := s.FlushSlots(false)
	require.Error(t, err)
	assert.Equal(t, "ERR DB must be empty to perform CLUSTER FLUSHSLOTS.", err.Error())
	assert.Equal(t, Effects{}, s.TakeEffects())
	assert.True(t, s.OK())

	require.NoError(t, s.FlushSlots(true))
	assert.Equal(t, Effects{Save: true, Publish: true}, s.TakeEffects())
	assert.False(t, s.OK())
	me := s.Myself()
	assert.Equal(t, 0, me.NumSlots())
	assert.Equal(t, idA+" :17311@27311 myself,master - 0 0 0 connected\n", s.Nodes())
	require.NoError(t, s.FlushSlots(true), "flushing no slots is fine")
}

func TestStateRules(t *testing.T) {
	// Full coverage required (default): ok only with every slot assigned.
	s := fresh(t)
	require.NoError(t, s.AddSlotsRange(args("0", "16382")))
	assert.False(t, s.OK())
	require.NoError(t, s.AddSlots(args("16383")))
	assert.True(t, s.OK())

	// Without full coverage: ok as soon as a majority of the slot-serving
	// masters is reachable — but a node serving nothing, with no master
	// that does, is still down (as Redis: size 0 is a minority).
	o := s.Options()
	o.RequireFullCoverage = false
	s2 := New(idA, sh1, o)
	assert.False(t, s2.OK())
	require.NoError(t, s2.AddSlots(args("5")))
	assert.True(t, s2.OK())
	assert.Equal(t, 1, s2.Size())
	require.NoError(t, s2.DelSlots(args("5")))
	assert.False(t, s2.OK())
	assert.Equal(t, 0, s2.Size())

	// Changing the option recomputes the state and republishes.
	s3 := fresh(t)
	require.NoError(t, s3.AddSlots(args("1")))
	s3.TakeEffects()
	assert.False(t, s3.OK())
	s3.SetOptions(Options{RequireFullCoverage: false})
	assert.True(t, s3.OK())
	assert.Equal(t, Effects{Publish: true}, s3.TakeEffects())
	s3.SetOptions(Options{RequireFullCoverage: false})
	assert.Equal(t, Effects{}, s3.TakeEffects(), "same options: nothing to do")
	s3.SetOptions(Options{RequireFullCoverage: true})
	assert.False(t, s3.OK())
}

func TestStateRuleFailedMasters(t *testing.T) {
	// Three masters share the slots; one failing breaks coverage, and
	// without full coverage a reachable majority (2 of 3) keeps it ok.
	conf := idA + " 10.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-5460\n" +
		idB + " 10.0.0.2:7000@17000 master - 0 0 2 connected 5461-10922\n" +
		idC + " 10.0.0.3:7000@17000 master,fail - 0 0 3 disconnected 10923-16383\n"
	s, err := Load(conf, 1000, DefaultOptions(), constID(sh2))
	require.NoError(t, err)
	assert.False(t, s.OK())
	assert.Equal(t, 3, s.Size())
	assert.Contains(t, s.Info(), "cluster_slots_assigned:16384\r\ncluster_slots_ok:10923\r\ncluster_slots_pfail:0\r\ncluster_slots_fail:5461\r\n")
	s.SetOptions(Options{RequireFullCoverage: false})
	assert.True(t, s.OK())

	conf2 := strings.Replace(conf, "10.0.0.2:7000@17000 master", "10.0.0.2:7000@17000 master,fail?", 1)
	s2, err := Load(conf2, 1000, Options{}, constID(sh2))
	require.NoError(t, err)
	assert.False(t, s2.OK(), "one reachable master of three is a minority")
	assert.Contains(t, s2.Info(), "cluster_slots_ok:5461\r\ncluster_slots_pfail:5462\r\ncluster_slots_fail:5461\r\n")
}

func TestFlags(t *testing.T) {
	assert.Equal(t, "noflags", Flags(0).String())
	assert.Equal(t, "myself,master", (FlagMaster | FlagMyself).String())
	all := FlagMyself | FlagMaster | FlagSlave | FlagPFail | FlagFail | FlagHandshake | FlagNoAddr | FlagNoFailover
	assert.Equal(t, "myself,master,slave,fail?,fail,handshake,noaddr,nofailover", all.String())
	f, ok := ParseFlags("myself,master,slave,fail?,fail,handshake,noaddr,nofailover")
	assert.True(t, ok)
	assert.Equal(t, all, f)
	f, ok = ParseFlags("noflags")
	assert.True(t, ok)
	assert.Zero(t, f)
	f, ok = ParseFlags("MASTER")
	assert.True(t, ok)
	assert.Equal(t, FlagMaster, f)
	_, ok = ParseFlags("master,bogus")
	assert.False(t, ok)
}

func TestValidID(t *testing.T) {
	assert.True(t, ValidID(idA))
	assert.True(t, ValidID(strings.Repeat("z", 40)), "Redis accepts a-z")
	assert.False(t, ValidID(strings.ToUpper(idA)))
	assert.False(t, ValidID(idA[:39]))
	assert.False(t, ValidID(idA+"0"))
	assert.False(t, ValidID(strings.Repeat("-", 40)))
}

func TestDeriveAnnounce(t *testing.T) {
	assert.Equal(t, Announce{Port: 7000, CPort: 17000}, DeriveAnnounce(7000, 0, 0, 0, "", ""))
	assert.Equal(t, Announce{Port: 7000, CPort: 7100}, DeriveAnnounce(7000, 7100, 0, 0, "", ""))
	// The default bus port follows the real port, not the announced one.
	assert.Equal(t, Announce{Port: 8000, CPort: 17000}, DeriveAnnounce(7000, 0, 8000, 0, "", ""))
	assert.Equal(t, Announce{IP: "10.1.2.3", Port: 8000, CPort: 9000, Hostname: "h"},
		DeriveAnnounce(7000, 7100, 8000, 9000, "10.1.2.3", "h"))
}

func TestSetAnnounce(t *testing.T) {
	s := fresh(t)
	s.SetAnnounce(DeriveAnnounce(17311, 0, 0, 0, "", ""))
	assert.Equal(t, Effects{}, s.TakeEffects(), "no change, no effects")

	s.SetAnnounce(DeriveAnnounce(17311, 0, 0, 0, "10.1.2.3", "host-a.example"))
	assert.Equal(t, Effects{Save: true, Publish: true}, s.TakeEffects())
	require.NoError(t, s.AddSlots(args("5")))
	// Byte for byte what redis-server 7.0.15 prints after CONFIG SET
	// cluster-announce-ip / cluster-announce-hostname.
	assert.Equal(t, idA+" 10.1.2.3:17311@27311,host-a.example myself,master - 0 0 0 connected 5\n", s.Nodes())

	// Clearing the announce ip forgets the address (it is learned again).
	s.SetAnnounce(DeriveAnnounce(17311, 0, 0, 0, "", ""))
	assert.Equal(t, "", s.Myself().IP)

	// An address learned from peers (here: loaded) survives as long as no
	// announce ip is configured.
	l, err := Load(idA+" 10.9.9.9:1@2 myself,master - 0 0 0 connected\n", 0, DefaultOptions(), constID(sh1))
	require.NoError(t, err)
	l.SetAnnounce(DeriveAnnounce(7000, 0, 0, 0, "", ""))
	assert.Equal(t, "10.9.9.9", l.Myself().IP)
	assert.Equal(t, 7000, l.Myself().Port)
	assert.Equal(t, 17000, l.Myself().CPort)
}

func TestTable(t *testing.T) {
	s := fresh(t)
	tb := s.Table()
	assert.True(t, tb.Cluster)
	assert.False(t, tb.OK)
	require.Len(t, tb.Nodes, 1)
	assert.Equal(t, 0, tb.Self)
	assert.Equal(t, -1, tb.Master)
	assert.Equal(t, slots.Node{ID: idA, IP: "", Port: 17311}, tb.Nodes[0])
	for _, o := range tb.Owner {
		require.Equal(t, int16(slots.NoOwner), o)
	}
	require.NoError(t, s.AddSlotsRange(args("0", "16383")))
	tb = s.Table()
	assert.True(t, tb.OK)
	assert.Equal(t, int16(0), tb.Owner[0])
	assert.Equal(t, int16(0), tb.Owner[16383])
	assert.Nil(t, tb.Migrating)
	assert.Nil(t, tb.Importing)

	s.SetOptions(Options{RequireFullCoverage: true, AllowReadsWhenDown: true})
	assert.True(t, s.Table().AllowReadsWhenDown)
}

func TestTableMultiNode(t *testing.T) {
	conf := idA + " 10.0.0.1:7000@17000,host-a myself,slave " + idB + " 0 0 0 connected [50->-" + idC + "]\n" +
		idB + " 10.0.0.2:7001@17001,host-b master - 0 0 2 connected 0-100\n" +
		idC + " 10.0.0.3:7002@17002 master - 0 0 3 connected 101-16383\n"
	s, err := Load(conf, 0, DefaultOptions(), constID(sh2))
	require.NoError(t, err)
	tb := s.Table()
	require.Len(t, tb.Nodes, 3)
	// Nodes are sorted by id: C (01d8…), B (b1df…), A (d97a…).
	assert.Equal(t, []string{idC, idB, idA}, []string{tb.Nodes[0].ID, tb.Nodes[1].ID, tb.Nodes[2].ID})
	assert.Equal(t, 2, tb.Self)
	assert.Equal(t, 1, tb.Master)
	assert.Equal(t, int16(1), tb.Owner[0])
	assert.Equal(t, int16(0), tb.Owner[101])
	assert.Equal(t, "10.0.0.2:7001", tb.Nodes[1].Endpoint())
	assert.Equal(t, map[int]int{50: 0}, tb.Migrating)
	assert.Nil(t, tb.Importing)

	o := DefaultOptions()
	o.PreferredEndpoint = EndpointHostname
	s.SetOptions(o)
	tb = s.Table()
	assert.Equal(t, "host-b:7001", tb.Nodes[1].Endpoint())
	assert.Equal(t, "?:7002", tb.Nodes[0].Endpoint())
	o.PreferredEndpoint = EndpointUnknown
	s.SetOptions(o)
	assert.Equal(t, ":7001", s.Table().Nodes[1].Endpoint())
}

func TestParseEndpointType(t *testing.T) {
	assert.Equal(t, EndpointIP, ParseEndpointType("ip"))
	assert.Equal(t, EndpointHostname, ParseEndpointType("hostname"))
	assert.Equal(t, EndpointUnknown, ParseEndpointType("unknown-endpoint"))
	assert.Equal(t, EndpointIP, ParseEndpointType("bogus"))
}

func constID(id string) func() string { return func() string { return id } }

// A primary that just started stays cluster_state:fail for WritableDelay
// even when every slot is served (Redis's CLUSTER_WRITABLE_DELAY), then
// turns ok on a tick.
func TestWritableDelayAfterStart(t *testing.T) {
	conf := idA + " 10.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-16383\n" +
		"vars currentEpoch 1 lastVoteEpoch 0\n"
	o := DefaultOptions()
	o.WritableDelay = WritableDelay
	s, err := Load(conf, t0, o, constID(sh1))
	require.NoError(t, err)
	s.Tick(t0)
	require.False(t, s.OK(), "just started")
	s.Tick(t0 + WritableDelay - 100)
	require.False(t, s.OK())
	s.Tick(t0 + WritableDelay)
	require.True(t, s.OK(), "the delay is over")
}
