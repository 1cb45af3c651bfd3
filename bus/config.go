package bus

import (
	"strconv"
	"strings"

	"github.com/slotd/slotd/slots"
)

// LoadError reports a nodes.conf that cannot be used; Redis refuses to start
// with the same message.
type LoadError struct{ Line string }

func (e *LoadError) Error() string {
	return "Unrecoverable error: corrupted cluster config file \"" + e.Line + "\"."
}

// Load rebuilds a State from nodes.conf text (as written by [State.Config],
// by Redis 7.0 — no aux fields — or by Redis 7.2+ — aux fields after the
// hostname). now (unix ms) stands for the non-zero ping-sent/pong-received
// times, which are not meaningful across a restart. newID supplies shard ids
// for masters saved without one; replicas without one take their primary's.
//
// Blank lines are skipped; the "vars" line sets currentEpoch and
// lastVoteEpoch (unknown variables are ignored). Every other line needs at
// least eight fields. currentEpoch is raised to the largest configEpoch
// seen. Links start disconnected (myself is always connected).
func Load(text string, now int64, opts Options, newID func() string) (*State, error) {
	s := newState(opts)
	var lastLine string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		lastLine = line
		if err := s.loadLine(line, now); err != nil {
			return nil, err
		}
	}
	if s.myself == nil {
		return nil, &LoadError{Line: lastLine}
	}
	for _, n := range s.sorted {
		if n.ShardID == "" && !n.IsReplica() {
			n.ShardID = newID()
		}
	}
	for _, n := range s.sorted {
		if n.ShardID == "" {
			if m := s.master(n); m != nil {
				n.ShardID = m.ShardID
			} else {
				n.ShardID = newID()
			}
		}
		if n.ConfigEpoch > s.currentEpoch {
			s.currentEpoch = n.ConfigEpoch
		}
		if m := s.master(n); m != nil {
			m.migrateTo = true
		}
	}
	s.myself.Linked = true
	s.seedRand()
	s.tick(now)
	for _, n := range s.sorted {
		n.ctime = now
		n.inFreed = now
		if n.Failed() {
			n.failTime = now // as Redis: the FAIL flag counts from the restart
		}
	}
	s.fx.Publish = true
	s.updateState()
	return s, nil
}

func (s *State) loadLine(line string, now int64) error {
	bad := &LoadError{Line: line}
	f := strings.Fields(line)
	if strings.EqualFold(f[0], "vars") {
		if len(f)%2 == 0 {
			return bad
		}
		for i := 1; i < len(f); i += 2 {
			v, err := strconv.ParseUint(f[i+1], 10, 64)
			switch {
			case strings.EqualFold(f[i], "currentEpoch"):
				if err != nil {
					return bad
				}
				s.currentEpoch = v
			case strings.EqualFold(f[i], "lastVoteEpoch"):
				if err != nil {
					return bad
				}
				s.lastVoteEpoch = v
			}
		}
		return nil
	}
	if len(f) < 8 || !ValidID(f[0]) {
		return bad
	}
	n := s.nodeOrCreate(f[0])
	if !s.parseAddr(n, f[1]) {
		return bad
	}
	flags, ok := ParseFlags(f[2])
	if !ok {
		return bad
	}
	if flags&FlagMyself != 0 {
		if s.myself != nil && s.myself != n {
			return bad
		}
		s.myself = n
	}
	n.Flags = flags
	if f[3] != "-" {
		if !ValidID(f[3]) {
			return bad
		}
		s.nodeOrCreate(f[3])
		n.MasterID = f[3]
	}
	if f[4] != "0" {
		n.PingSent = now
	}
	if f[5] != "0" {
		n.PongRecv = now
	}
	epoch, err := strconv.ParseUint(f[6], 10, 64)
	if err != nil {
		return bad
	}
	n.ConfigEpoch = epoch
	for _, tok := range f[8:] {
		if !s.loadSlotToken(n, tok) {
			return bad
		}
	}
	return nil
}

// parseAddr reads "ip:port[@cport][,hostname[,aux=value...]]".
func (s *State) parseAddr(n *Node, field string) bool {
	parts := strings.Split(field, ",")
	addr := parts[0]
	colon := strings.LastIndexByte(addr, ':')
	if colon < 0 {
		return false
	}
	n.IP = addr[:colon]
	portStr, cportStr, hasBus := strings.Cut(addr[colon+1:], "@")
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return false
	}
	n.Port = port
	n.CPort = port + PortIncr
	if hasBus {
		cport, err := strconv.Atoi(cportStr)
		if err != nil || cport < 0 || cport > 65535 {
			return false
		}
		n.CPort = cport
	}
	n.Hostname = ""
	if len(parts) > 1 {
		n.Hostname = parts[1]
	}
	for _, aux := range parts[min(2, len(parts)):] {
		k, v, ok := strings.Cut(aux, "=")
		if !ok {
			return false
		}
		switch k {
		case "shard-id":
			if !ValidID(v) {
				return false
			}
			n.ShardID = v
		case "tcp-port":
			p, err := strconv.Atoi(v)
			if err != nil || p < 0 || p > 65535 {
				return false
			}
			n.Port = p
		case "tls-port", "nodename":
			// Written by Redis 7.2+; slotd has no TLS or node names yet.
		default:
			return false
		}
	}
	return true
}

// loadSlotToken reads one slot field: "n", "a-b", "[n->-id]" or "[n-<-id]".
func (s *State) loadSlotToken(n *Node, tok string) bool {
	if strings.HasPrefix(tok, "[") {
		if !strings.HasSuffix(tok, "]") {
			return false
		}
		body := tok[1 : len(tok)-1]
		var slotStr, id string
		var migrating bool
		if a, b, ok := strings.Cut(body, "->-"); ok {
			slotStr, id, migrating = a, b, true
		} else if a, b, ok := strings.Cut(body, "-<-"); ok {
			slotStr, id = a, b
		} else {
			return false
		}
		slot, ok := slots.ParseSlot([]byte(slotStr))
		if !ok || !ValidID(id) {
			return false
		}
		peer := s.nodeOrCreate(id)
		if migrating {
			s.migrating[slot] = peer
		} else {
			s.importing[slot] = peer
		}
		return true
	}
	lo, hi, isRange := strings.Cut(tok, "-")
	start, ok := slots.ParseSlot([]byte(lo))
	if !ok {
		return false
	}
	end := start
	if isRange {
		if end, ok = slots.ParseSlot([]byte(hi)); !ok {
			return false
		}
	}
	for slot := start; slot <= end; slot++ {
		s.addSlot(n, slot)
	}
	return true
}
