package bus

import (
	"sort"
	"strconv"
	"strings"
)

// Nodes is the CLUSTER NODES text as this node sees the cluster: one line
// per known node, each ending in "\n":
//
//	<id> <ip>:<port>@<cport>[,<hostname>] <flags> <master-id|-> <ping-sent> <pong-recv> <config-epoch> <link> [<slot range>...]
//
// Slots are printed as maximal ranges; only the myself line adds the
// [slot->-id] (migrating) and [slot-<-id] (importing) markers.
func (s *State) Nodes() string {
	var b strings.Builder
	for _, n := range s.sorted {
		s.appendNode(&b, n, false)
	}
	return b.String()
}

// Config is the nodes.conf text: the CLUSTER NODES lines (handshake nodes
// left out), with the address field in the Redis 7.2 form
// "ip:port@cport,hostname,shard-id=<id>" so the shard id survives a restart,
// then "vars currentEpoch <n> lastVoteEpoch <m>".
func (s *State) Config() string {
	var b strings.Builder
	for _, n := range s.sorted {
		if n.Flags&FlagHandshake != 0 {
			continue
		}
		s.appendNode(&b, n, true)
	}
	b.WriteString("vars currentEpoch ")
	b.WriteString(strconv.FormatUint(s.currentEpoch, 10))
	b.WriteString(" lastVoteEpoch ")
	b.WriteString(strconv.FormatUint(s.lastVoteEpoch, 10))
	b.WriteByte('\n')
	return b.String()
}

func (s *State) appendNode(b *strings.Builder, n *Node, conf bool) {
	b.WriteString(n.ID)
	b.WriteByte(' ')
	b.WriteString(n.IP)
	b.WriteByte(':')
	b.WriteString(strconv.Itoa(n.Port))
	b.WriteByte('@')
	b.WriteString(strconv.Itoa(n.CPort))
	switch {
	case conf:
		b.WriteByte(',')
		b.WriteString(n.Hostname)
		if n.ShardID != "" {
			b.WriteString(",shard-id=")
			b.WriteString(n.ShardID)
		}
	case n.Hostname != "":
		b.WriteByte(',')
		b.WriteString(n.Hostname)
	}
	b.WriteByte(' ')
	b.WriteString(n.Flags.String())
	b.WriteByte(' ')
	if n.MasterID != "" && n.IsReplica() {
		b.WriteString(n.MasterID)
	} else {
		b.WriteByte('-')
	}
	b.WriteByte(' ')
	b.WriteString(strconv.FormatInt(n.PingSent, 10))
	b.WriteByte(' ')
	b.WriteString(strconv.FormatInt(n.PongRecv, 10))
	b.WriteByte(' ')
	b.WriteString(strconv.FormatUint(s.nodeEpoch(n), 10))
	if n.Linked || n == s.myself {
		b.WriteString(" connected")
	} else {
		b.WriteString(" disconnected")
	}
	for _, r := range n.Slots.Ranges() {
		b.WriteByte(' ')
		b.WriteString(r.String())
	}
	if n == s.myself {
		s.appendOpenSlots(b)
	}
	b.WriteByte('\n')
}

// appendOpenSlots writes the migrating/importing markers in slot order (a
// slot cannot be both; migrating wins if it were).
func (s *State) appendOpenSlots(b *strings.Builder) {
	if len(s.migrating) == 0 && len(s.importing) == 0 {
		return
	}
	open := make([]int, 0, len(s.migrating)+len(s.importing))
	for slot := range s.migrating {
		open = append(open, slot)
	}
	for slot := range s.importing {
		if _, dup := s.migrating[slot]; !dup {
			open = append(open, slot)
		}
	}
	sort.Ints(open)
	for _, slot := range open {
		b.WriteString(" [")
		b.WriteString(strconv.Itoa(slot))
		if n, ok := s.migrating[slot]; ok {
			b.WriteString("->-")
			b.WriteString(n.ID)
		} else {
			b.WriteString("-<-")
			b.WriteString(s.importing[slot].ID)
		}
		b.WriteByte(']')
	}
}

// Info is the CLUSTER INFO text (CRLF line ends). Per-type message counters
// appear only for types with a non-zero count, as in Redis.
func (s *State) Info() string {
	assigned, ok, pfail, fail := 0, 0, 0, 0
	for _, n := range s.owner {
		if n == nil {
			continue
		}
		assigned++
		switch {
		case n.Flags&FlagFail != 0:
			fail++
		case n.Flags&FlagPFail != 0:
			pfail++
		default:
			ok++
		}
	}
	state := "fail"
	if s.ok {
		state = "ok"
	}
	var b strings.Builder
	line := func(k, v string) {
		b.WriteString(k)
		b.WriteByte(':')
		b.WriteString(v)
		b.WriteString("\r\n")
	}
	u := func(n uint64) string { return strconv.FormatUint(n, 10) }
	line("cluster_state", state)
	line("cluster_slots_assigned", strconv.Itoa(assigned))
	line("cluster_slots_ok", strconv.Itoa(ok))
	line("cluster_slots_pfail", strconv.Itoa(pfail))
	line("cluster_slots_fail", strconv.Itoa(fail))
	line("cluster_known_nodes", strconv.Itoa(len(s.nodes)))
	line("cluster_size", strconv.Itoa(s.size))
	line("cluster_current_epoch", u(s.currentEpoch))
	line("cluster_my_epoch", u(s.nodeEpoch(s.myself)))
	var sent, recv uint64
	for t := MsgType(0); t < msgTypeCount; t++ {
		if c := s.stats.Sent[t]; c != 0 {
			line("cluster_stats_messages_"+t.String()+"_sent", u(c))
			sent += c
		}
	}
	line("cluster_stats_messages_sent", u(sent))
	for t := MsgType(0); t < msgTypeCount; t++ {
		if c := s.stats.Received[t]; c != 0 {
			line("cluster_stats_messages_"+t.String()+"_received", u(c))
			recv += c
		}
	}
	line("cluster_stats_messages_received", u(recv))
	line("total_cluster_links_buffer_limit_exceeded", u(s.stats.LinksBufferLimitExceeded))
	return b.String()
}
