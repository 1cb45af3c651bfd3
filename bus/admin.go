package bus

import (
	"net/netip"
	"strconv"
	"strings"
)

// parseLL parses an integer the way Redis's string2ll does: optional '-',
// no '+', no leading zeros, no spaces, within int64.
func parseLL(b []byte) (int64, bool) {
	v, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil || strconv.FormatInt(v, 10) != string(b) {
		return 0, false
	}
	return v, true
}

// ParseMeet parses the arguments of CLUSTER MEET ip port [cport] (after
// the subcommand) with Redis's error texts: ports that are not integers,
// then ports out of 1..65535 (reported as an invalid address, naming the
// port as given). The IP is checked by Meet.
func ParseMeet(args [][]byte) (ip string, port, cport int, err error) {
	if len(args) != 2 && len(args) != 3 {
		return "", 0, 0, errArity("meet")
	}
	p, ok := parseLL(args[1])
	if !ok {
		return "", 0, 0, Error("ERR Invalid TCP base port specified: " + string(args[1]))
	}
	c := p + PortIncr
	if len(args) == 3 {
		if c, ok = parseLL(args[2]); !ok {
			return "", 0, 0, Error("ERR Invalid TCP bus port specified: " + string(args[2]))
		}
	}
	if p <= 0 || p > 65535 || c <= 0 || c > 65535 {
		return "", 0, 0, errMeetAddr(string(args[0]), string(args[1]))
	}
	return string(args[0]), int(p), int(c), nil
}

func errMeetAddr(ip, port string) Error {
	return Error("ERR Invalid node address specified: " + ip + ":" + port)
}

// Meet is CLUSTER MEET: start a handshake with the node at ip:port (bus
// port cport). ip must be a literal IPv4 or IPv6 address (no host names,
// no zone) and both ports within 1..65535, else "ERR Invalid node address
// specified: ip:port". A handshake already in progress with that address
// is not started twice (still OK, as in Redis). The handshake node gets a
// random id until the peer's PONG names it; it is dialed at once.
func (s *State) Meet(now int64, ip string, port, cport int) error {
	s.tick(now)
	addr, err := netip.ParseAddr(ip)
	if err != nil || addr.Zone() != "" || port <= 0 || port > 65535 || cport <= 0 || cport > 65535 {
		return errMeetAddr(ip, strconv.Itoa(port))
	}
	norm := addr.String()
	if s.handshakeWith(norm, port, cport) {
		return nil
	}
	n := &Node{ID: s.randomID(), Flags: FlagHandshake, IP: norm, Port: port, CPort: cport, ctime: now, inFreed: now,
		meet: true}
	s.addNode(n)
	s.dial(now, n)
	return nil
}

// handshakeWith reports a handshake in progress with that address.
func (s *State) handshakeWith(ip string, port, cport int) bool {
	for _, n := range s.sorted {
		if n.Flags&FlagHandshake != 0 && strings.EqualFold(n.IP, ip) && n.Port == port && n.CPort == cport {
			return true
		}
	}
	return false
}

// Forget is CLUSTER FORGET: remove node id and keep gossip from adding it
// back for BanTTL (60 s).
func (s *State) Forget(now int64, id string) error {
	s.tick(now)
	n := s.nodes[id]
	switch {
	case n == nil:
		return Error("ERR Unknown node " + id)
	case n == s.myself:
		return Error("ERR I tried hard but I can't forget myself...")
	case s.myself.IsReplica() && s.myself.MasterID == n.ID:
		return Error("ERR Can't forget my master!")
	}
	s.ban(now, id)
	s.delNode(n)
	s.fx.Save = true
	s.fx.Publish = true
	return nil
}

// Reset is CLUSTER RESET SOFT|HARD: forget every other node, release all
// slots (open ones too) and turn into a primary; a hard reset also takes a
// new node id (and shard id) and sets every epoch to 0. A primary holding
// keys (dbEmpty false) refuses. When myself was a replica, the owner must
// also stop replicating and flush its data set, as Redis does.
func (s *State) Reset(now int64, hard bool, dbEmpty bool) error {
	s.tick(now)
	me := s.myself
	if me.IsMaster() && !dbEmpty {
		return Error("ERR CLUSTER RESET can't be called with master nodes containing keys")
	}
	s.setNodeAsMaster(me)
	clear(s.migrating)
	clear(s.importing)
	for slot := range s.owner {
		s.delSlot(slot)
	}
	for _, n := range append([]*Node(nil), s.sorted...) {
		if n != me {
			s.delNode(n)
		}
	}
	if hard {
		s.currentEpoch = 0
		s.lastVoteEpoch = 0
		me.ConfigEpoch = 0
		s.renameNode(me, s.randomID())
		me.ShardID = s.randomID()
	}
	s.saveDurable()
	s.fx.Publish = true
	s.updateState()
	return nil
}

// ParseConfigEpoch parses the argument of CLUSTER SET-CONFIG-EPOCH with
// Redis's error texts.
func ParseConfigEpoch(arg []byte) (uint64, error) {
	v, ok := parseLL(arg)
	if !ok {
		return 0, Error("ERR value is not an integer or out of range")
	}
	if v < 0 {
		return 0, Error("ERR Invalid config epoch specified: " + strconv.FormatInt(v, 10))
	}
	return uint64(v), nil
}

// SetConfigEpoch is CLUSTER SET-CONFIG-EPOCH: allowed only on a node that
// knows no other node and has configEpoch 0 (cluster creation tools use it
// to give each primary its own epoch without waiting for collisions to be
// resolved). currentEpoch is raised to it.
func (s *State) SetConfigEpoch(epoch uint64) error {
	switch {
	case len(s.nodes) > 1:
		return Error("ERR The user can assign a config epoch only when the node does not know any other node.")
	case s.myself.ConfigEpoch != 0:
		return Error("ERR Node config epoch is already non-zero")
	}
	s.myself.ConfigEpoch = epoch
	if s.currentEpoch < epoch {
		s.currentEpoch = epoch
	}
	s.saveDurable()
	return nil
}

// maxEpoch is the greatest configEpoch known, or currentEpoch if greater.
func (s *State) maxEpoch() uint64 {
	m := s.currentEpoch
	for _, n := range s.sorted {
		m = max(m, n.ConfigEpoch)
	}
	return m
}

// BumpEpoch is CLUSTER BUMPEPOCH: unless myself already has the greatest
// configEpoch (and it is not 0), take currentEpoch+1 without consensus.
// The reply is "+BUMPED <epoch>" or "+STILL <epoch>".
func (s *State) BumpEpoch() (bumped bool, epoch uint64) {
	me := s.myself
	if me.ConfigEpoch != 0 && me.ConfigEpoch == s.maxEpoch() {
		return false, me.ConfigEpoch
	}
	s.currentEpoch++
	me.ConfigEpoch = s.currentEpoch
	s.saveDurable()
	return true, me.ConfigEpoch
}

// Replicas is CLUSTER REPLICAS (SLAVES) id: the CLUSTER NODES line (without
// the newline) of each replica of primary id.
func (s *State) Replicas(id string) ([]string, error) {
	n := s.nodes[id]
	if n == nil {
		return nil, Error("ERR Unknown node " + id)
	}
	if n.IsReplica() {
		return nil, Error("ERR The specified node is not a master")
	}
	var out []string
	for _, r := range s.replicas(n) {
		var b strings.Builder
		s.appendNode(&b, r, false)
		out = append(out, strings.TrimSuffix(b.String(), "\n"))
	}
	return out, nil
}
