package bus

import (
	"testing"

	"github.com/stretchr/testify/assert"

	busv1 "github.com/slotd/slotd/proto/slotd/bus/v1"
)

// Traces name a frame by what it says: type, sender, epochs, slots, and
// what its body is about.
func TestDescribeFrame(t *testing.T) {
	slots := make([]byte, SlotBitmapLen)
	slots[0], slots[1] = 0xff, 0x01
	h := &busv1.Header{Type: busv1.Type_TYPE_FAILOVER_AUTH_REQUEST, Sender: "07c3a1b2c3d4e5f6", CurrentEpoch: 5,
		ConfigEpoch: 2, Primary: "aabbccddeeff", Slots: slots,
		Mflags: uint32(busv1.ManualFailoverFlag_MANUAL_FAILOVER_FLAG_FORCEACK)}
	assert.Equal(t, "FAILOVER_AUTH_REQUEST from 07c3a1b2 epoch=5 config=2 replica-of=aabbccdd slots=9 forceack",
		Describe(&busv1.Frame{Header: h}))
	h = &busv1.Header{Type: busv1.Type_TYPE_PING, Sender: "n1", CurrentEpoch: 1}
	assert.Equal(t, "PING from n1 epoch=1 config=0 reports=deadbeef:pfail reports=cafe:fail",
		Describe(&busv1.Frame{Header: h, Gossip: []*busv1.Gossip{
			{Id: "deadbeef00", Flags: uint32(busv1.NodeFlag_NODE_FLAG_PFAIL)},
			{Id: "0123", Flags: uint32(busv1.NodeFlag_NODE_FLAG_PRIMARY)},
			{Id: "cafe", Flags: uint32(busv1.NodeFlag_NODE_FLAG_FAIL | busv1.NodeFlag_NODE_FLAG_PFAIL)}}}))
	h = &busv1.Header{Type: busv1.Type_TYPE_UPDATE, Sender: "n2", CurrentEpoch: 7, ConfigEpoch: 3}
	assert.Equal(t, "UPDATE from n2 epoch=7 config=3 node=60909e81 node-config=7 node-slots=9",
		Describe(&busv1.Frame{Header: h, Update: &busv1.Update{Id: "60909e81ff", ConfigEpoch: 7, Slots: slots}}))
	h = &busv1.Header{Type: busv1.Type_TYPE_FAIL, Sender: "n3"}
	assert.Equal(t, "FAIL from n3 epoch=0 config=0 about=-", Describe(&busv1.Frame{Header: h, Fail: &busv1.Fail{}}))
}
