package bus

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// threeMasters: A (myself) owns 0-99 with configEpoch 1, B 100-199 (epoch
// 2), C is a replica of B.
func threeMasters(t *testing.T) *State {
	t.Helper()
	conf := idA + " 10.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-99\n" +
		idB + " 10.0.0.2:7001@17001 master - 0 0 2 connected 100-199\n" +
		idC + " 10.0.0.3:7002@17002 slave " + idB + " 0 0 2 connected\n" +
		"vars currentEpoch 2 lastVoteEpoch 0\n"
	s, err := Load(conf, 0, DefaultOptions(), constID(sh2))
	require.NoError(t, err)
	s.TakeEffects()
	return s
}

func noKeys(int) int64 { return 0 }

func TestSetSlotErrors(t *testing.T) {
	s := threeMasters(t)
	cases := []struct {
		args []string
		err  string
	}{
		{[]string{"1"}, "ERR wrong number of arguments for 'cluster|setslot' command"},
		{[]string{"x", "stable"}, "ERR Invalid or out of range slot"},
		{[]string{"16384", "stable"}, "ERR Invalid or out of range slot"},
		{[]string{"-1", "stable"}, "ERR Invalid or out of range slot"},
		{[]string{"1", "foo"}, "ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP"},
		{[]string{"1", "stable", "x"}, "ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP"},
		{[]string{"1", "migrating", idB, "nope", "3"},
			"ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP"},
		{[]string{"1", "migrating", idB, "timeout"}, "ERR Missing timeout value"},
		{[]string{"1", "stable", "TIMEOUT", "x"}, "ERR timeout is not an integer or out of range"},
		{[]string{"1", "migrating", idB, "timeout", "-1"}, "ERR timeout is negative"},
		{[]string{"1", "migrating"}, "ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP"},
		{[]string{"1", "migrating", "abc"}, "ERR I don't know about node abc"},
		{[]string{"1", "migrating", idC}, "ERR Target node is not a master"},
		{[]string{"150", "migrating", idB}, "ERR I'm not the owner of hash slot 150"},
		{[]string{"1", "importing", idB}, "ERR I'm already the owner of hash slot 1"},
		{[]string{"150", "importing", "abc"}, "ERR I don't know about node abc"},
		{[]string{"1", "node", "abc"}, "ERR Unknown node abc"},
		{[]string{"1", "node", idC}, "ERR Target node is not a master"},
	}
	for _, c := range cases {
		err := s.SetSlot(0, args(c.args...), noKeys)
		require.Error(t, err, c.args)
		assert.Equal(t, c.err, err.Error(), c.args)
	}
	err := s.SetSlot(0, args("1", "node", idB), func(int) int64 { return 3 })
	require.Error(t, err)
	assert.Equal(t, "ERR Can't assign hashslot 1 to a different node while I still hold keys for this hash slot.",
		err.Error())
	assert.Equal(t, Effects{}, s.TakeEffects(), "failed SETSLOT changes nothing")
}

func TestSetSlotReplicaRefused(t *testing.T) {
	conf := idA + " 10.0.0.1:7000@17000 myself,slave " + idB + " 0 0 2 connected\n" +
		idB + " 10.0.0.2:7001@17001 master - 0 0 2 connected 0-16383\n"
	s, err := Load(conf, 0, DefaultOptions(), constID(sh2))
	require.NoError(t, err)
	err = s.SetSlot(0, args("x"), noKeys) // checked before anything else
	require.Error(t, err)
	assert.Equal(t, "ERR Please use SETSLOT only with masters.", err.Error())
}

func myselfLine(s *State) string {
	for _, l := range strings.Split(s.Nodes(), "\n") {
		if strings.Contains(l, "myself") {
			return l
		}
	}
	return ""
}

func TestSetSlotMigratingImportingStable(t *testing.T) {
	s := threeMasters(t)
	require.NoError(t, s.SetSlot(0, args("5", "MIGRATING", idB), noKeys))
	require.NoError(t, s.SetSlot(0, args("150", "importing", idB), noKeys))
	fx := s.TakeEffects()
	assert.True(t, fx.Save)
	assert.True(t, fx.Publish)
	assert.True(t, strings.HasSuffix(myselfLine(s), " 0-99 [5->-"+idB+"] [150-<-"+idB+"]"), myselfLine(s))
	tb := s.Table()
	// Nodes by id: C, B, A.
	assert.Equal(t, map[int]int{5: 1}, tb.Migrating)
	assert.Equal(t, map[int]int{150: 1}, tb.Importing)

	// The markers survive a restart.
	s2, err := Load(s.Config(), 0, DefaultOptions(), constID(sh2))
	require.NoError(t, err)
	assert.Equal(t, myselfLine(s), myselfLine(s2))

	require.NoError(t, s.SetSlot(0, args("5", "stable"), noKeys))
	require.NoError(t, s.SetSlot(0, args("150", "stable"), noKeys))
	assert.True(t, strings.HasSuffix(myselfLine(s), " 0-99"), myselfLine(s))
	assert.Nil(t, s.Table().Migrating)
	assert.Nil(t, s.Table().Importing)
}

func TestSetSlotNodeImportBumpsEpoch(t *testing.T) {
	s := threeMasters(t)
	require.NoError(t, s.SetSlot(0, args("150", "importing", idB), noKeys))
	s.TakeEffects()
	require.NoError(t, s.SetSlot(0, args("150", "node", idA), noKeys))
	fx := s.TakeEffects()
	assert.True(t, fx.Save)
	assert.True(t, fx.Publish)
	assert.Equal(t, idA, s.Owner(150))
	assert.Equal(t, uint64(3), s.Myself().ConfigEpoch, "configEpoch bumped without agreement")
	assert.Equal(t, uint64(3), s.CurrentEpoch())
	assert.True(t, strings.HasSuffix(myselfLine(s), " 0-99 150"), myselfLine(s))

	// Closing a second import: A already has the greatest epoch, so it
	// keeps it (clusterBumpConfigEpochWithoutConsensus).
	require.NoError(t, s.SetSlot(0, args("151", "importing", idB), noKeys))
	require.NoError(t, s.SetSlot(0, args("151", "node", idA), noKeys))
	assert.Equal(t, uint64(3), s.Myself().ConfigEpoch)
}

func TestSetSlotNodeSourceSide(t *testing.T) {
	s := threeMasters(t)
	require.NoError(t, s.SetSlot(0, args("5", "migrating", idB), noKeys))
	// With keys left the slot stays ours.
	require.Error(t, s.SetSlot(0, args("5", "node", idB), func(int) int64 { return 1 }))
	require.NoError(t, s.SetSlot(0, args("5", "node", idB), noKeys))
	assert.Equal(t, idB, s.Owner(5))
	assert.Nil(t, s.Table().Migrating, "the migrating state is closed")
	assert.Equal(t, uint64(1), s.Myself().ConfigEpoch, "no bump on the source")

	// Giving away the last slot turns a primary into a replica of the
	// taker (cluster-allow-replica-migration).
	for slot := 0; slot < 100; slot++ {
		if slot != 5 {
			require.NoError(t, s.SetSlot(0, args(strconv.Itoa(slot), "node", idB), noKeys))
		}
	}
	me := s.Myself()
	assert.True(t, me.IsReplica())
	assert.Equal(t, idB, me.MasterID)
	assert.Equal(t, idB, s.TakeEffects().Replicate)
}

func TestRepairOpenSlots(t *testing.T) {
	s := threeMasters(t)
	require.NoError(t, s.SetSlot(0, args("5", "migrating", idB), noKeys))
	s.TakeEffects()
	s.RepairOpenSlots(idB, idC)
	m, _ := s.OpenSlots()
	assert.Equal(t, map[int]string{5: idC}, m)
	assert.True(t, s.TakeEffects().Save)
}

func TestSetSlotNodeImportStillGreatest(t *testing.T) {
	// B holds the greatest configEpoch already: closing an import keeps it.
	conf := idB + " 10.0.0.2:7001@17001 myself,master - 0 0 2 connected 100-199\n" +
		idA + " 10.0.0.1:7000@17000 master - 0 0 1 connected 0-99\n" +
		"vars currentEpoch 2 lastVoteEpoch 0\n"
	s, err := Load(conf, 0, DefaultOptions(), constID(sh2))
	require.NoError(t, err)
	require.NoError(t, s.SetSlot(0, args("5", "importing", idA), noKeys))
	require.NoError(t, s.SetSlot(0, args("5", "node", idB), noKeys))
	assert.Equal(t, uint64(2), s.Myself().ConfigEpoch)
	assert.Equal(t, idB, s.Owner(5))
}

func TestParseSetSlotTimeout(t *testing.T) {
	s := threeMasters(t)
	cmd, err := s.ParseSetSlot(0, args("5", "migrating", idB), noKeys)
	require.NoError(t, err)
	assert.Equal(t, int64(DefaultSetSlotTimeout), cmd.Timeout)
	assert.Len(t, cmd.Args, 3)
	cmd, err = s.ParseSetSlot(0, args("5", "stable", "timeout", "0"), noKeys)
	require.NoError(t, err)
	assert.Equal(t, int64(0), cmd.Timeout, "0: no limit")
	cmd, err = s.ParseSetSlot(0, args("5", "node", idB, "TIMEOUT", "150"), noKeys)
	require.NoError(t, err)
	assert.Equal(t, SetSlotCmd{Slot: 5, Action: "node", Node: idB, Timeout: 150, Args: args("5", "node", idB)}, cmd)
	assert.Equal(t, Effects{}, s.TakeEffects(), "parsing changes nothing")

	// The state moved between the check and the run: checked again.
	cmd, err = s.ParseSetSlot(0, args("5", "migrating", idB), noKeys)
	require.NoError(t, err)
	require.NoError(t, s.SetSlot(0, args("5", "node", idB), noKeys))
	err = s.ApplySetSlot(0, cmd, noKeys)
	require.Error(t, err)
	assert.Equal(t, "ERR I'm not the owner of hash slot 5", err.Error())
}

// TestReplicaSetSlot: C, B's replica, applies what B streams.
func TestReplicaSetSlot(t *testing.T) {
	conf := idC + " 10.0.0.3:7002@17002 myself,slave " + idB + " 0 0 2 connected\n" +
		idA + " 10.0.0.1:7000@17000 master - 0 0 1 connected 0-99\n" +
		idB + " 10.0.0.2:7001@17001 master - 0 0 2 connected 100-199\n" +
		"vars currentEpoch 2 lastVoteEpoch 0\n"
	s, err := Load(conf, 0, DefaultOptions(), constID(sh2))
	require.NoError(t, err)
	s.TakeEffects()
	err = s.SetSlot(0, args("150", "migrating", idA), noKeys)
	require.Error(t, err, "clients may not")
	assert.Equal(t, "ERR Please use SETSLOT only with masters.", err.Error())

	require.NoError(t, s.ReplicaSetSlot(0, args("150", "migrating", idA), noKeys))
	require.NoError(t, s.ReplicaSetSlot(0, args("5", "importing", idA), noKeys))
	fx := s.TakeEffects()
	assert.True(t, fx.Save)
	assert.True(t, fx.Publish)
	tb := s.Table()
	assert.Len(t, tb.Migrating, 1)
	assert.Len(t, tb.Importing, 1)
	assert.True(t, strings.HasSuffix(myselfLine(s), " connected [5-<-"+idA+"] [150->-"+idA+"]"), myselfLine(s))

	// The import closes on B: the replica binds the slot to B.
	require.NoError(t, s.ReplicaSetSlot(0, args("5", "node", idB), noKeys))
	assert.Equal(t, idB, s.Owner(5))
	_, imp := s.OpenSlots()
	assert.Empty(t, imp)
	// The migration closes: B gives 150 away.
	require.NoError(t, s.ReplicaSetSlot(0, args("150", "node", idA), noKeys))
	assert.Equal(t, idA, s.Owner(150))
	m, _ := s.OpenSlots()
	assert.Empty(t, m)

	require.Error(t, s.ReplicaSetSlot(0, args("1", "node", "nobody"), noKeys))
}
