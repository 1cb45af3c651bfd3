package bus

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/slots"
)

// tableState: A (myself) 0-5460 and 5465, B 5461-10922 but 5465, C
// 10923-16382, 16383 unassigned.
func tableState(t testing.TB) *State {
	s, err := Load(idA+" 10.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-5460 5465\n"+
		idB+" 10.0.0.2:7001@17001 master - 0 0 2 connected 5461-5464 5466-10922\n"+
		idC+" 10.0.0.3:7002@17002 master - 0 0 3 connected 10923-16382\n"+
		"vars currentEpoch 3 lastVoteEpoch 0\n", 0, DefaultOptions(), constID(sh2))
	require.NoError(t, err)
	return s
}

func TestTableOwners(t *testing.T) {
	tb := tableState(t).Table()
	id := func(slot int) string {
		if tb.Owner[slot] == slots.NoOwner {
			return ""
		}
		return tb.Nodes[tb.Owner[slot]].ID
	}
	assert.Equal(t, idA, id(0))
	assert.Equal(t, idA, id(5460))
	assert.Equal(t, idB, id(5461))
	assert.Equal(t, idA, id(5465))
	assert.Equal(t, idB, id(5466))
	assert.Equal(t, idC, id(16382))
	assert.Equal(t, "", id(16383))
	assert.Equal(t, idA, tb.Nodes[tb.Self].ID)
	assert.Equal(t, -1, tb.Master)
}

// BenchmarkTable: every SETSLOT publishes a new routing table.
func BenchmarkTable(b *testing.B) {
	s := tableState(b)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = s.Table()
	}
}
