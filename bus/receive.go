package bus

import (
	busv1 "github.com/slotd/slotd/proto/slotd/bus/v1"
	"github.com/slotd/slotd/slots"
)

// Receive processes a frame that arrived on link l, following Redis's
// clusterProcessPacket:
//
//   - The sender is the node of the link, or the known (non-handshake) node
//     the header names; an inbound link is bound to that node from then on.
//   - A known sender's currentEpoch and configEpoch raise ours.
//   - PING and MEET are always answered with a PONG on the same link, even
//     from an unknown sender; only a MEET admits an unknown sender (as a
//     handshake node, completed when our own link gets its PONG). A MEET
//     (or any PING while this node has no address) teaches this node its
//     own IP from the link's local address, unless cluster-announce-ip is
//     set.
//   - A PONG on an outbound link completes a handshake (the random id is
//     replaced by the real one) or, if it names another node than the link
//     was opened for, marks that node NOADDR and drops the link.
//   - From a known sender: address changes (PING on its inbound link), role
//     changes, slot claims (rules 1 and 2 of the spec), UPDATEs for stale
//     claims, configEpoch collisions, and the gossip section.
//   - FAIL and UPDATE are accepted only from known senders, and so are the
//     failover messages (FAILOVER_AUTH_REQUEST/ACK, MFSTART, HANDOFF:
//     election.go, manual.go, handoff.go); every frame from a known sender tells its replication
//     offset.
func (s *State) Receive(now int64, l LinkID, f *busv1.Frame) {
	s.tick(now)
	lk := s.links[l]
	if lk == nil || f == nil {
		return
	}
	h := f.GetHeader()
	if t := MsgTypeOf(h.GetType()); t < msgTypeCount {
		s.CountReceived(t)
	}
	if h == nil || h.Version != ProtoVersion || !ValidID(h.Sender) {
		return
	}
	if h.Sender == s.myself.ID {
		// Our own frames come back only when we met our own address: answer
		// (and learn our address from) the MEET, and drop the handshake
		// node that stands for ourselves when its PONG arrives.
		switch {
		case lk.inbound && (h.Type == busv1.Type_TYPE_MEET || h.Type == busv1.Type_TYPE_PING):
			s.learnMyIP(lk, h.Type)
			s.sendPing(now, lk, busv1.Type_TYPE_PONG)
		case !lk.inbound && lk.node != nil && lk.node.Flags&FlagHandshake != 0:
			s.delNode(lk.node)
		}
		return
	}
	if b := lk.node; b != nil && b.Flags&FlagHandshake == 0 && b.ID != h.Sender && !(!lk.inbound && isPing(h.Type)) {
		// The link speaks for b: a frame naming another node on it is a
		// stranger's (or a confused peer's), not that node's. Only our own
		// link's PING/PONG exchange may say another node answers at b's
		// address (receivePing).
		s.forged++
		return
	}
	lk.dataRecv = now
	sender := s.senderOf(lk, h)
	if sender != nil {
		sender.dataRecv = now
		// It talks to us: it knows us, no more MEETs needed.
		sender.meet = false
		if sender.Flags&FlagHandshake == 0 {
			s.learnEpochs(sender, h)
			s.learnOffset(now, sender, h)
		}
	}
	switch h.Type {
	case busv1.Type_TYPE_PING, busv1.Type_TYPE_PONG, busv1.Type_TYPE_MEET:
		s.receivePing(now, lk, sender, f)
	case busv1.Type_TYPE_FAIL:
		s.receiveFail(now, sender, f.GetFail())
	case busv1.Type_TYPE_UPDATE:
		s.receiveUpdate(sender, f.GetUpdate())
	case busv1.Type_TYPE_FAILOVER_AUTH_REQUEST:
		s.receiveAuthRequest(now, sender, h)
	case busv1.Type_TYPE_FAILOVER_AUTH_ACK:
		s.receiveAuthAck(now, sender, h)
	case busv1.Type_TYPE_MFSTART:
		s.receiveMFStart(now, sender)
	case busv1.Type_TYPE_HANDOFF:
		s.receiveHandOff(now, sender) // handoff.go
	case busv1.Type_TYPE_PUBLISH, busv1.Type_TYPE_SPUBLISH:
		s.receivePublish(sender, f)
	}
}

// senderOf finds the node a frame comes from (nil if unknown), binding an
// inbound link to it.
func (s *State) senderOf(lk *link, h *busv1.Header) *Node {
	if lk.node != nil && lk.node.Flags&FlagHandshake == 0 {
		return lk.node
	}
	n := s.nodes[h.Sender]
	if n == nil || n.Flags&FlagHandshake != 0 {
		return nil
	}
	if lk.node == nil && lk.inbound {
		if old := n.inLink; old != nil && old != lk && s.now-old.dataRecv <= s.nodeTimeout() {
			// n is connected to us and talking on its link: a second
			// connection claiming its id speaks for no one until that one
			// dies or goes silent for the node timeout.
			s.forged++
			return nil
		}
		s.attachInbound(n, lk)
	}
	return n
}

func isPing(t busv1.Type) bool {
	return t == busv1.Type_TYPE_PING || t == busv1.Type_TYPE_PONG || t == busv1.Type_TYPE_MEET
}

// learnEpochs adopts a greater currentEpoch, and the sender's configEpoch
// when it announces a greater one.
func (s *State) learnEpochs(sender *Node, h *busv1.Header) {
	// A sane sender's currentEpoch is at least its configEpoch; take the
	// greater anyway so no known epoch ever exceeds ours.
	if e := max(h.CurrentEpoch, h.ConfigEpoch); e > s.currentEpoch {
		s.currentEpoch = e
		s.fx.Save = true
	}
	if h.ConfigEpoch > sender.ConfigEpoch {
		sender.ConfigEpoch = h.ConfigEpoch
		s.fx.Save = true
	}
}

func (s *State) receivePing(now int64, lk *link, sender *Node, f *busv1.Frame) {
	h := f.Header
	t := h.Type
	if t == busv1.Type_TYPE_PING || t == busv1.Type_TYPE_MEET {
		s.learnMyIP(lk, t)
		if sender == nil && t == busv1.Type_TYPE_MEET {
			// Trusted because of the message type; the real id, flags and
			// role arrive with the PONG to our own PING. A repeated MEET
			// (the sender retries until it hears from us) does not start a
			// second handshake with the same address, and a node CLUSTER
			// FORGET banned is not taken back on its own initiative.
			// One connection has one pending handshake at a time: a
			// stranger cannot fill the node table (each handshake node is
			// dialled and saved) with MEETs naming other addresses.
			pending := lk.met != nil && lk.met.Flags&FlagHandshake != 0 && s.nodes[lk.met.ID] == lk.met
			ip := s.peerIP(lk, h)
			if ip != "" && !pending && !s.handshakeWith(ip, int(h.Port), int(h.Cport)) && !s.isBanned(h.Sender) {
				n := &Node{ID: s.randomID(), Flags: FlagHandshake, IP: ip, Port: int(h.Port),
					CPort: int(h.Cport), ctime: now, inFreed: now}
				s.addNode(n)
				lk.met = n
				s.fx.Save = true
			}
			s.processGossip(now, nil, f.Gossip)
		}
		s.sendPing(now, lk, busv1.Type_TYPE_PONG)
	}

	if !lk.inbound {
		n := lk.node
		if n.Flags&FlagHandshake != 0 {
			if sender != nil {
				// We met a node we already know: fix its address if it
				// moved, and drop the handshake entry (and this link).
				s.updateAddress(sender, lk, h)
				s.delNode(n)
				return
			}
			if other := s.nodes[h.Sender]; other != nil {
				// Only another handshake could carry that (random) id.
				s.delNode(other)
			}
			s.renameNode(n, h.Sender)
			n.Flags &^= FlagHandshake
			n.Flags |= fromWire(h.Flags) & (FlagMaster | FlagSlave)
			n.meet = false
			n.inFreed = now
			s.fx.Save = true
			// Redis processes the rest of this frame as coming from an
			// unknown node; using it at once only saves a round trip.
			sender = n
			s.learnEpochs(sender, h)
		} else if n.ID != h.Sender {
			// Another node answers at this address now: we no longer know
			// where n is.
			n.Flags |= FlagNoAddr
			n.IP, n.Port, n.CPort = "", 0, 0
			s.closeLink(lk)
			s.fx.Save = true
			s.fx.Publish = true
			return
		}
	}

	if sender != nil {
		nofailover := fromWire(h.Flags) & FlagNoFailover
		if sender.Flags&FlagNoFailover != nofailover {
			sender.Flags = sender.Flags&^FlagNoFailover | nofailover
			s.fx.Save = true
		}
		if t == busv1.Type_TYPE_PING {
			s.updateAddress(sender, lk, h)
		}
	}

	if !lk.inbound && t == busv1.Type_TYPE_PONG {
		n := lk.node
		n.PongRecv = now
		n.pongAt = now
		n.PingSent = 0
		s.meetIfForgotten(now, lk, n)
		if n.Flags&FlagPFail != 0 {
			n.Flags &^= FlagPFail
			s.fx.Save = true
			s.updateState()
		} else if n.Failed() {
			s.clearFailureIfNeeded(now, n)
		}
	}

	if sender == nil {
		return
	}
	s.updateRole(sender, h.Primary)
	s.updateAnnounced(sender, h)

	claimed, ok := ParseSlotBitmap(h.Slots)
	if !ok && len(h.Slots) != 0 {
		return // malformed: claims nothing we could trust
	}
	senderMaster := sender
	if !sender.IsMaster() {
		senderMaster = s.master(sender)
	}
	dirty := senderMaster != nil && senderMaster.Slots != claimed
	if sender.IsMaster() && dirty {
		s.updateSlotsConfigWith(sender, h.ConfigEpoch, &claimed)
	}
	if dirty {
		// The sender claims slots that a node with a newer config serves:
		// tell it (one UPDATE per frame is enough; more follow with its
		// next pings).
		s.checkStaleClaims(lk, sender, h.ConfigEpoch, &claimed)
	}
	if s.myself.IsMaster() && sender.IsMaster() && h.ConfigEpoch == s.myself.ConfigEpoch {
		s.handleEpochCollision(sender)
	}
	s.followShardPrimary(sender, h.ConfigEpoch)
	s.processGossip(now, sender, f.Gossip)
}

// meetIfForgotten sends a MEET on lk when n, which just answered our PING
// under the id we know it by, has not connected back to us for a handshake
// timeout: it does not know us (its side of the handshake timed out, or it
// forgot us), and the MEET makes it take us back (Valkey's fix for
// one-sided handshakes). Only a PONG under the known id proves the address
// still belongs to n: a node that took a new id (CLUSTER RESET HARD) or
// another node at that address must not be met on n's behalf, or it would
// learn us and then gossip back ids that no longer exist. The MEET is sent
// once per handshake timeout, not remembered for later connections.
func (s *State) meetIfForgotten(now int64, lk *link, n *Node) {
	timeout := s.handshakeTimeout()
	if n.Flags&(FlagHandshake|FlagNoAddr) != 0 || n.inLink != nil ||
		now-n.inFreed <= timeout || now-n.meetSent <= timeout {
		return
	}
	s.sendPing(now, lk, busv1.Type_TYPE_MEET)
}

// learnMyIP takes this node's address from the local end of an inbound
// link that carried a MEET (or a PING while we have no address): peers
// reach us there. cluster-announce-ip overrides it.
func (s *State) learnMyIP(lk *link, t busv1.Type) {
	if (t == busv1.Type_TYPE_MEET || s.myself.IP == "") && s.announcedIP == "" &&
		lk.inbound && lk.localIP != "" && lk.localIP != s.myself.IP {
		s.myself.IP = lk.localIP
		s.fx.Save = true
		s.fx.Publish = true
	}
}

// peerIP is the address of the node at the other end of lk: the one it
// announces, else the link's remote address.
func (s *State) peerIP(lk *link, h *busv1.Header) string {
	if h.Ip != "" {
		return h.Ip
	}
	if lk.inbound {
		return lk.remoteIP
	}
	if lk.node != nil {
		return lk.node.IP
	}
	return ""
}

// updateAddress applies the address a node announces on a link other than
// our outbound link to it (Redis's nodeUpdateAddressIfNeeded): when it
// moved, the outbound link is dropped and the next Tick dials the new
// address.
func (s *State) updateAddress(n *Node, lk *link, h *busv1.Header) {
	if lk == n.link || n.Flags&FlagHandshake != 0 {
		return
	}
	ip := s.peerIP(lk, h)
	if ip == "" {
		return
	}
	port, cport := int(h.Port), int(h.Cport)
	if n.IP == ip && n.Port == port && n.CPort == cport {
		return
	}
	n.IP, n.Port, n.CPort = ip, port, cport
	n.Flags &^= FlagNoAddr
	s.closeLink(n.link)
	s.fx.Save = true
	s.fx.Publish = true
	s.updateState()
}

// updateRole follows the role a node announces: a primary, or a replica of
// primary (a primary turning replica loses its slots).
func (s *State) updateRole(n *Node, primary string) {
	if primary == "" {
		s.setNodeAsMaster(n)
		return
	}
	if n.IsMaster() || n.Flags&FlagSlave == 0 {
		s.delNodeSlots(n)
		n.migrateTo = false
		n.Flags = n.Flags&^FlagMaster | FlagSlave
		s.fx.Save = true
		s.fx.Publish = true
		s.updateState()
	}
	if m := s.nodes[primary]; m != nil && m != n && n.MasterID != m.ID {
		m.migrateTo = true
		n.MasterID = m.ID
		s.fx.Save = true
		s.fx.Publish = true
	}
}

// setNodeAsMaster records that n now acts as a primary.
func (s *State) setNodeAsMaster(n *Node) {
	if n.IsMaster() && n.Flags&FlagSlave == 0 {
		return
	}
	if n.IsReplica() && n != s.myself {
		// It took over from a primary that had replicas: it should have
		// some too.
		n.migrateTo = true
	}
	n.Flags = n.Flags&^FlagSlave | FlagMaster
	n.MasterID = ""
	s.fx.Save = true
	s.fx.Publish = true
	s.updateState()
}

// delNodeSlots unassigns every slot of n.
func (s *State) delNodeSlots(n *Node) {
	if n.numSlots == 0 {
		return
	}
	owned := n.Slots
	owned.ForEach(func(slot int) { s.delSlot(slot) })
	s.slotsChanged()
}

// updateAnnounced takes the hostname and shard id a node announces.
func (s *State) updateAnnounced(n *Node, h *busv1.Header) {
	if n.Hostname != h.Hostname {
		n.Hostname = h.Hostname
		s.fx.Save = true
		s.fx.Publish = true
	}
	if h.ShardId != "" && ValidID(h.ShardId) && n.ShardID != h.ShardId {
		n.ShardID = h.ShardId
		s.fx.Save = true
	}
	if me := s.myself; me.IsReplica() && me.MasterID == n.ID && n.ShardID != "" && me.ShardID != n.ShardID {
		// A replica is in its primary's shard (we may have attached before
		// we knew it).
		me.ShardID = n.ShardID
		s.fx.Save = true
	}
}

// checkStaleClaims sends an UPDATE about the first slot owner whose
// configEpoch beats the one the sender claims the slot with.
func (s *State) checkStaleClaims(lk *link, sender *Node, epoch uint64, claimed *slots.Set) {
	for slot := 0; slot < len(s.owner); slot++ {
		if claimed[slot>>6] == 0 {
			slot |= 63
			continue
		}
		if !claimed.Has(slot) {
			continue
		}
		o := s.owner[slot]
		if o == sender || s.unclaimed(slot) {
			continue
		}
		if o.ConfigEpoch > epoch {
			s.sendUpdate(lk, o)
			return
		}
	}
}

// unclaimed reports a slot nobody serves, or whose owner stopped claiming
// it.
func (s *State) unclaimed(slot int) bool {
	return s.owner[slot] == nil || s.notClaiming.Has(slot)
}

// handleEpochCollision resolves two primaries sharing a configEpoch: the
// one with the smaller id takes a new, greater one (Redis's
// clusterHandleConfigEpochCollision), so eventually every primary has its
// own.
func (s *State) handleEpochCollision(sender *Node) {
	me := s.myself
	if sender.ConfigEpoch != me.ConfigEpoch || !sender.IsMaster() || !me.IsMaster() {
		return
	}
	if sender.ID <= me.ID {
		return
	}
	s.currentEpoch++
	me.ConfigEpoch = s.currentEpoch
	s.saveDurable()
}

// receiveFail flags a node FAIL on a known sender's word.
func (s *State) receiveFail(now int64, sender *Node, f *busv1.Fail) {
	if sender == nil || f == nil {
		return
	}
	n := s.nodes[f.Id]
	if n == nil || n.Flags&(FlagFail|FlagMyself) != 0 {
		return
	}
	n.Flags = n.Flags&^FlagPFail | FlagFail
	n.failTime = now
	s.fx.Save = true
	s.updateState()
}

// receiveUpdate applies a newer configuration of the node an UPDATE is
// about: it becomes a primary with that configEpoch and those slots.
func (s *State) receiveUpdate(sender *Node, u *busv1.Update) {
	if sender == nil || u == nil {
		return
	}
	n := s.nodes[u.Id]
	// An UPDATE about myself is discarded (Redis only logs it, after
	// taking its epoch).
	if n == nil || n == s.myself || n.Flags&FlagHandshake != 0 || n.ConfigEpoch >= u.ConfigEpoch {
		return
	}
	claimed, ok := ParseSlotBitmap(u.Slots)
	if !ok {
		return
	}
	if n.IsReplica() {
		s.setNodeAsMaster(n)
	}
	n.ConfigEpoch = u.ConfigEpoch
	s.currentEpoch = max(s.currentEpoch, u.ConfigEpoch)
	s.fx.Save = true
	s.updateSlotsConfigWith(n, u.ConfigEpoch, &claimed)
}

// clearFailureIfNeeded lifts the FAIL flag of a node we can reach again: at
// once for a replica or a primary without slots, else only when nobody
// took its slots over for a while (2 × node timeout).
func (s *State) clearFailureIfNeeded(now int64, n *Node) {
	if n.IsReplica() || n.numSlots == 0 || now-n.failTime > 2*s.nodeTimeout() {
		n.Flags &^= FlagFail
		s.fx.Save = true
		s.updateState()
	}
}
