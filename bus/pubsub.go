package bus

import (
	busv1 "github.com/slotd/slotd/proto/slotd/bus/v1"
)

// Pub/sub over the bus: a PUBLISH on any node is delivered to the
// subscribers of every node, so the publishing node sends a PUBLISH frame
// to every node it has a link to (as Redis's clusterPropagatePublish does),
// and a node receiving one hands it to its clients with a Deliver effect.
// Frames on one link stay in order, so one publisher's messages arrive in
// the order it sent them. Shard-channel messages (SPUBLISH) go to the
// nodes of the publisher's shard only.

// Delivery is a pub/sub message received from another node, for the local
// subscribers. Shard is set for SPUBLISH (shard channels).
type Delivery struct {
	Channel, Message []byte
	Shard            bool
}

// Publish sends channel/message to every other known node.
func (s *State) Publish(channel, message []byte) {
	s.publish(busv1.Type_TYPE_PUBLISH, channel, message, nil)
}

// PublishShard sends a shard-channel message to the other nodes of this
// node's shard: its primary (or itself) and that primary's replicas, as
// Redis 7.0 propagates SPUBLISH. The receivers deliver it to their own
// subscribers only.
func (s *State) PublishShard(channel, message []byte) {
	primary := s.myself.ID
	if s.myself.Flags&FlagSlave != 0 && s.myself.MasterID != "" {
		primary = s.myself.MasterID
	}
	s.publish(busv1.Type_TYPE_SPUBLISH, channel, message, func(n *Node) bool {
		return n.ID == primary || n.Flags&FlagSlave != 0 && n.MasterID == primary
	})
}

// publish sends a PUBLISH or SPUBLISH frame to every linked node (to those
// accepted by to, when set). A link that is being re-established gets it
// when it is up: only a node with no link at all misses the message.
func (s *State) publish(t busv1.Type, channel, message []byte, to func(*Node) bool) {
	var f *busv1.Frame
	for _, n := range s.sorted {
		if n == s.myself || n.Flags&FlagHandshake != 0 || n.link == nil || to != nil && !to(n) {
			continue
		}
		if f == nil {
			f = &busv1.Frame{Header: s.header(t), Publish: &busv1.Publish{Channel: channel, Message: message}}
		}
		s.queue(n.link, f)
	}
}

// receivePublish turns a PUBLISH or SPUBLISH frame from a known node into
// a Deliver effect.
func (s *State) receivePublish(sender *Node, f *busv1.Frame) {
	p := f.GetPublish()
	if sender == nil || p == nil {
		return
	}
	s.fx.Deliver = append(s.fx.Deliver, Delivery{Channel: p.Channel, Message: p.Message,
		Shard: f.GetHeader().GetType() == busv1.Type_TYPE_SPUBLISH})
}
