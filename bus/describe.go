package bus

import (
	"math/bits"
	"strconv"
	"strings"

	busv1 "github.com/slotd/slotd/proto/slotd/bus/v1"
)

// FrameName is a frame type's name in the cluster specification's terms
// (PING, FAILOVER_AUTH_ACK, UPDATE, …).
func FrameName(t busv1.Type) string { return strings.TrimPrefix(t.String(), "TYPE_") }

// Describe says what a frame is in protocol terms, for traces: type,
// sender, epochs, the slots it claims, and what its body names (the failing
// node, the updated node, failure reports in the gossip). Node ids are
// shortened to 8 characters.
func Describe(f *busv1.Frame) string {
	h := f.GetHeader()
	var b strings.Builder
	b.WriteString(FrameName(h.GetType()))
	b.WriteString(" from ")
	b.WriteString(ShortID(h.GetSender()))
	b.WriteString(" epoch=" + strconv.FormatUint(h.GetCurrentEpoch(), 10))
	b.WriteString(" config=" + strconv.FormatUint(h.GetConfigEpoch(), 10))
	if p := h.GetPrimary(); p != "" {
		b.WriteString(" replica-of=" + ShortID(p))
	}
	if n := countBits(h.GetSlots()); n > 0 {
		b.WriteString(" slots=" + strconv.Itoa(n))
	}
	if h.GetMflags()&uint32(busv1.ManualFailoverFlag_MANUAL_FAILOVER_FLAG_FORCEACK) != 0 {
		b.WriteString(" forceack")
	}
	if fl := f.GetFail(); fl != nil {
		b.WriteString(" about=" + ShortID(fl.GetId()))
	}
	if u := f.GetUpdate(); u != nil {
		b.WriteString(" node=" + ShortID(u.GetId()) + " node-config=" + strconv.FormatUint(u.GetConfigEpoch(), 10) +
			" node-slots=" + strconv.Itoa(countBits(u.GetSlots())))
	}
	for _, g := range f.GetGossip() {
		switch {
		case g.GetFlags()&uint32(busv1.NodeFlag_NODE_FLAG_FAIL) != 0:
			b.WriteString(" reports=" + ShortID(g.GetId()) + ":fail")
		case g.GetFlags()&uint32(busv1.NodeFlag_NODE_FLAG_PFAIL) != 0:
			b.WriteString(" reports=" + ShortID(g.GetId()) + ":pfail")
		}
	}
	return b.String()
}

// ShortID is a node id as traces print it: its first 8 characters.
func ShortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	if id == "" {
		return "-"
	}
	return id
}

func countBits(bm []byte) int {
	n := 0
	for _, c := range bm {
		n += bits.OnesCount8(c)
	}
	return n
}
