package bus

import (
	"encoding/binary"

	busv1 "github.com/slotd/slotd/proto/slotd/bus/v1"
	"github.com/slotd/slotd/slots"
)

// ProtoVersion is the bus protocol version in every header; frames with
// another version are ignored, as Redis ignores other CLUSTER_PROTO_VERs.
const ProtoVersion = 1

// SlotBitmapLen is the length of a header or UPDATE slot bitmap.
const SlotBitmapLen = slots.NumSlots / 8

// MsgTypeOf is a frame type's number in Redis's message numbering (the
// CLUSTER INFO counters, DEBUG DROP-CLUSTER-PACKET-FILTER); beyond the
// known types for anything else.
func MsgTypeOf(t busv1.Type) MsgType {
	switch t {
	case busv1.Type_TYPE_PING:
		return MsgPing
	case busv1.Type_TYPE_PONG:
		return MsgPong
	case busv1.Type_TYPE_MEET:
		return MsgMeet
	case busv1.Type_TYPE_FAIL:
		return MsgFail
	case busv1.Type_TYPE_UPDATE:
		return MsgUpdate
	case busv1.Type_TYPE_FAILOVER_AUTH_REQUEST:
		return MsgFailoverAuthRequest
	case busv1.Type_TYPE_FAILOVER_AUTH_ACK:
		return MsgFailoverAuthAck
	case busv1.Type_TYPE_MFSTART:
		return MsgMFStart
	case busv1.Type_TYPE_PUBLISH:
		return MsgPublish
	case busv1.Type_TYPE_SPUBLISH:
		return MsgPublishShard
	}
	return msgTypeCount
}

var wireFlags = [...]struct {
	f Flags
	w busv1.NodeFlag
}{
	{FlagMaster, busv1.NodeFlag_NODE_FLAG_PRIMARY},
	{FlagSlave, busv1.NodeFlag_NODE_FLAG_REPLICA},
	{FlagPFail, busv1.NodeFlag_NODE_FLAG_PFAIL},
	{FlagFail, busv1.NodeFlag_NODE_FLAG_FAIL},
	{FlagMyself, busv1.NodeFlag_NODE_FLAG_MYSELF},
	{FlagHandshake, busv1.NodeFlag_NODE_FLAG_HANDSHAKE},
	{FlagNoAddr, busv1.NodeFlag_NODE_FLAG_NOADDR},
	{FlagNoFailover, busv1.NodeFlag_NODE_FLAG_NOFAILOVER},
}

// toWire converts node flags to NodeFlag bits.
func toWire(f Flags) uint32 {
	var w uint32
	for _, m := range wireFlags {
		if f&m.f != 0 {
			w |= uint32(m.w)
		}
	}
	return w
}

// fromWire converts NodeFlag bits to node flags (unknown bits are dropped).
func fromWire(w uint32) Flags {
	var f Flags
	for _, m := range wireFlags {
		if w&uint32(m.w) != 0 {
			f |= m.f
		}
	}
	return f
}

// SlotBitmap encodes a slot set as the 2048-byte wire bitmap: slot i is bit
// i%8 of byte i/8, as in Redis's clusterMsg.myslots.
func SlotBitmap(set *slots.Set) []byte {
	b := make([]byte, SlotBitmapLen)
	for i, w := range set {
		binary.LittleEndian.PutUint64(b[i*8:], w)
	}
	return b
}

// ParseSlotBitmap decodes a wire bitmap; ok is false unless it has exactly
// SlotBitmapLen bytes.
func ParseSlotBitmap(b []byte) (set slots.Set, ok bool) {
	if len(b) != SlotBitmapLen {
		return set, false
	}
	for i := range set {
		set[i] = binary.LittleEndian.Uint64(b[i*8:])
	}
	return set, true
}

// headerSlots returns the bitmap of the slots of n, cached until the slot
// table changes: frames share it (they are immutable once emitted).
func (s *State) headerSlots(n *Node) []byte {
	if s.hdrSlots == nil || s.hdrNode != n || s.hdrGen != s.slotGen {
		s.hdrSlots, s.hdrNode, s.hdrGen = SlotBitmap(&n.Slots), n, s.slotGen
	}
	return s.hdrSlots
}

// header describes myself the way Redis's clusterBuildMessageHdr does: a
// replica sends its primary's slots and configEpoch (and is flagged as a
// replica, so receivers know it does not serve them).
func (s *State) header(t busv1.Type) *busv1.Header {
	me := s.myself
	cfg := me
	if m := s.master(me); m != nil {
		cfg = m
	}
	h := &busv1.Header{
		Type:         t,
		Version:      ProtoVersion,
		Sender:       me.ID,
		CurrentEpoch: s.currentEpoch,
		ConfigEpoch:  cfg.ConfigEpoch,
		ReplOffset:   s.replOffset,
		Slots:        s.headerSlots(cfg),
		Ip:           s.announcedIP,
		Hostname:     me.Hostname,
		Port:         uint32(me.Port),
		Cport:        uint32(me.CPort),
		Flags:        toWire(me.Flags),
		StateOk:      s.ok,
		ShardId:      me.ShardID,
	}
	if me.IsReplica() {
		h.Primary = me.MasterID
	}
	if me.IsMaster() && s.mf.end != 0 && s.mf.paused {
		// Writes are paused for a manual failover: the offset is final.
		h.Mflags |= uint32(busv1.ManualFailoverFlag_MANUAL_FAILOVER_FLAG_PAUSED)
	}
	return h
}

// SetReplOffset sets the replication offset announced in headers.
func (s *State) SetReplOffset(off uint64) { s.replOffset = off }

// ReplOffset is the replication offset last set.
func (s *State) ReplOffset() uint64 { return s.replOffset }

// gossipEntry describes n for a gossip section.
func gossipEntry(n *Node) *busv1.Gossip {
	return &busv1.Gossip{
		Id:           n.ID,
		PingSent:     n.PingSent,
		PongReceived: n.PongRecv,
		Ip:           n.IP,
		Port:         uint32(n.Port),
		Cport:        uint32(n.CPort),
		Flags:        toWire(n.Flags),
		Hostname:     n.Hostname,
	}
}

// sendPing sends a PING, PONG or MEET on lk with a gossip section, as
// Redis's clusterSendPing: about a tenth of the known nodes, at least 3
// (fewer if not that many are eligible), picked at random among the nodes
// other than myself and the receiver that are not in handshake, have an
// address, and are linked or serve slots. A PING on an outbound link starts
// the node's pending-ping clock.
func (s *State) sendPing(now int64, lk *link, t busv1.Type) {
	if lk == nil || lk.closed || !lk.up {
		return
	}
	if !lk.inbound && t == busv1.Type_TYPE_PING {
		lk.node.PingSent = now
		lk.node.pingAt = now
	}
	if !lk.inbound && t == busv1.Type_TYPE_MEET {
		lk.node.meetSent = now
	}
	f := &busv1.Frame{Header: s.header(t)}
	total := len(s.sorted)
	fresh := total - 2
	wanted := max(total/10, 3)
	wanted = min(wanted, fresh)
	if wanted > 0 {
		f.Gossip = make([]*busv1.Gossip, 0, wanted)
	}
	for iter := wanted * 3; fresh > 0 && len(f.Gossip) < wanted && iter > 0; iter-- {
		n := s.sorted[s.rng.IntN(total)]
		if n == s.myself || n == lk.node {
			continue
		}
		if n.Flags&FlagPFail != 0 {
			continue // appended below, all of them
		}
		if n.Flags&(FlagHandshake|FlagNoAddr) != 0 || (n.link == nil && n.numSlots == 0) {
			fresh--
			continue
		}
		dup := false
		for _, g := range f.Gossip {
			if g.Id == n.ID {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		f.Gossip = append(f.Gossip, gossipEntry(n))
		fresh--
	}
	s.appendPFailGossip(f)
	s.send(lk, f)
}

// appendPFailGossip adds every node flagged PFAIL to a gossip section, so
// failure reports spread fast (Redis does the same).
func (s *State) appendPFailGossip(f *busv1.Frame) {
	for _, n := range s.sorted {
		if n.Flags&FlagPFail != 0 && n.Flags&(FlagHandshake|FlagNoAddr) == 0 {
			f.Gossip = append(f.Gossip, gossipEntry(n))
		}
	}
}

// sendUpdate tells the peer on lk the slot configuration of n.
func (s *State) sendUpdate(lk *link, n *Node) {
	set := n.Slots
	// Slots n stopped claiming are not advertised.
	for i := range set {
		set[i] &^= s.notClaiming[i]
	}
	f := &busv1.Frame{Header: s.header(busv1.Type_TYPE_UPDATE),
		Update: &busv1.Update{Id: n.ID, ConfigEpoch: n.ConfigEpoch, Slots: SlotBitmap(&set)}}
	s.send(lk, f)
}
