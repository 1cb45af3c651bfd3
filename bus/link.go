package bus

import (
	"net"
	"slices"
	"strconv"

	busv1 "github.com/slotd/slotd/proto/slotd/bus/v1"
)

// LinkID names one bus connection. Ids are allocated by the State from a
// counter, so they are deterministic; they are never reused.
type LinkID uint64

// link is one bus connection as the state sees it. An outbound link is
// created for a node (Dial) and is up once LinkConnected reports it; an
// inbound link (Accept) is up at once and learns its node from the first
// frame that names a known sender.
type link struct {
	id       LinkID
	node     *Node
	inbound  bool
	up       bool
	closed   bool
	ctime    int64
	localIP  string // inbound: our address as the peer reached it
	remoteIP string // inbound: the peer's address
	// dataRecv is when the link last brought a frame it may carry (its
	// creation before that).
	dataRecv int64
	// met is the handshake node a MEET on this inbound link created: a
	// connection gets one pending handshake at a time.
	met *Node
}

// MaxStrangerLinks is how many inbound links not bound to a known node
// a node keeps: one more closes the oldest.
const MaxStrangerLinks = 128

// LinkInfo is one row of CLUSTER LINKS.
type LinkInfo struct {
	Link       LinkID
	Direction  string // "to" (outbound) or "from" (inbound)
	Node       string
	CreateTime int64
	// Events are the socket events the link waits for: "r" once connected,
	// "" while connecting. A shell that knows a link has output pending may
	// add "w".
	Events string
	// The state keeps no send buffer: the shell fills these in when it
	// knows them (0 otherwise).
	SendBufferAllocated int64
	SendBufferUsed      int64
}

func (s *State) newLink(now int64, n *Node, inbound bool) *link {
	s.lastLink++
	l := &link{id: s.lastLink, node: n, inbound: inbound, ctime: now, dataRecv: now}
	s.links[l.id] = l
	return l
}

// closeStrangers closes the oldest inbound links not bound to a node
// beyond MaxStrangerLinks (in link order: ids grow with time).
func (s *State) closeStrangers() {
	var ids []LinkID
	for id, lk := range s.links {
		if lk.inbound && lk.node == nil {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return
	}
	slices.Sort(ids)
	excess := len(ids) - MaxStrangerLinks
	for i, id := range ids {
		if i < excess {
			s.closeLink(s.links[id])
		}
	}
}

// Accept registers a connection accepted on the bus port and returns its
// id. localIP is this node's address on the connection (what the peer
// dialed: a MEET teaches this node its own IP from it, as Redis does with
// the socket's local address) and remoteIP the peer's address (a node that
// announces no IP is known by it). Both are bare IPs, without port or
// brackets.
func (s *State) Accept(now int64, localIP, remoteIP string) LinkID {
	s.tick(now)
	l := s.newLink(now, nil, true)
	l.up = true
	l.localIP, l.remoteIP = localIP, remoteIP
	s.closeStrangers()
	return l.id
}

// LinkConnected reports that the outbound link l, requested by a Dial
// effect, is established. The first frame goes out at once: MEET for a node
// met with CLUSTER MEET, else PING.
func (s *State) LinkConnected(now int64, l LinkID) {
	s.tick(now)
	lk := s.links[l]
	if lk == nil || lk.inbound || lk.up {
		return
	}
	lk.up = true
	n := lk.node
	n.Linked = true
	// A ping that was pending before the reconnection keeps its time, or
	// the node could never time out while links keep failing.
	old := n.PingSent
	if n.meet {
		s.sendPing(now, lk, busv1.Type_TYPE_MEET)
	} else {
		s.sendPing(now, lk, busv1.Type_TYPE_PING)
	}
	if old != 0 {
		n.PingSent = old
	}
	// Unlike Redis 7.0, the MEET flag stays until the node answers: a MEET
	// lost with its connection is sent again on the next one (Valkey).
}

// LinkClosed reports that link l failed, was closed by the peer, or (for an
// outbound link) could not be established. The next Tick dials again.
func (s *State) LinkClosed(now int64, l LinkID) {
	s.tick(now)
	lk := s.links[l]
	if lk == nil {
		return
	}
	if !lk.inbound && !lk.up && lk.node != nil && lk.node.PingSent == 0 {
		// A node we cannot even connect to must be able to time out: count
		// the attempt as a ping sent, as Redis does when connect() fails.
		lk.node.PingSent = now
	}
	s.dropLink(lk)
}

// dropLink forgets lk and detaches it from its node.
func (s *State) dropLink(lk *link) {
	lk.closed = true
	delete(s.links, lk.id)
	if n := lk.node; n != nil {
		if n.link == lk {
			n.link = nil
			n.Linked = false
		}
		if n.inLink == lk {
			n.inLink = nil
			n.inFreed = s.now
		}
	}
}

// closeLink forgets lk and asks the owner to close it.
func (s *State) closeLink(lk *link) {
	if lk == nil || lk.closed {
		return
	}
	s.dropLink(lk)
	s.fx.Close = append(s.fx.Close, lk.id)
}

// KillLinks closes node id's outbound link (to) and/or its inbound link
// (from), as DEBUG CLUSTERLINK KILL does: the next Tick dials the outbound
// link again, and the peer redials its own. It reports whether id is a
// known node; a node without such a link is left as it is.
func (s *State) KillLinks(now int64, id string, to, from bool) bool {
	s.tick(now)
	n := s.nodes[id]
	if n == nil {
		return false
	}
	if to {
		s.closeLink(n.link)
	}
	if from {
		s.closeLink(n.inLink)
	}
	return true
}

// dial opens the outbound link of n.
func (s *State) dial(now int64, n *Node) {
	lk := s.newLink(now, n, false)
	n.link = lk
	s.fx.Dial = append(s.fx.Dial, Dial{Link: lk.id, NodeID: n.ID, Addr: net.JoinHostPort(n.IP, strconv.Itoa(n.CPort))})
}

// attachInbound makes lk the inbound link of n, closing an older one: a
// peer may reconnect before we notice its previous connection died.
func (s *State) attachInbound(n *Node, lk *link) {
	if n.inLink != nil && n.inLink != lk {
		s.closeLink(n.inLink)
	}
	n.inLink = lk
	lk.node = n
}

// send queues f on lk and counts it.
func (s *State) send(lk *link, f *busv1.Frame) {
	if lk == nil || lk.closed || !lk.up {
		return
	}
	s.queue(lk, f)
}

// queue sends f on lk even while lk is still connecting: the link's owner
// writes it once the connection is up, as Redis keeps what is sent on a
// connecting link in its send buffer.
func (s *State) queue(lk *link, f *busv1.Frame) {
	if lk == nil || lk.closed {
		return
	}
	s.fx.Send = append(s.fx.Send, Send{Link: lk.id, Frame: f})
	s.CountSent(MsgTypeOf(f.GetHeader().GetType()))
}

// Links is CLUSTER LINKS: for every node (in id order) its outbound link,
// then its inbound link. Inbound links whose node is not known yet are not
// listed, as in Redis.
func (s *State) Links(now int64) []LinkInfo {
	s.tick(now)
	var out []LinkInfo
	row := func(n *Node, lk *link) {
		info := LinkInfo{Link: lk.id, Direction: "to", Node: n.ID, CreateTime: lk.ctime}
		if lk.inbound {
			info.Direction = "from"
		}
		if lk.up {
			info.Events = "r"
		}
		out = append(out, info)
	}
	for _, n := range s.sorted {
		if n.link != nil {
			row(n, n.link)
		}
		if n.inLink != nil {
			row(n, n.inLink)
		}
	}
	return out
}

// Forged is how many frames were not trusted because they named another
// node than their link's: on a link bound to a node, or on a second
// inbound connection claiming a node whose own link is alive.
func (s *State) Forged() uint64 { return s.forged }
