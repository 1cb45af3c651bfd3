package bus

import "github.com/slotd/slotd/slots"

// SlotNode is one node entry of a CLUSTER SLOTS range:
// [endpoint, port, id, metadata].
type SlotNode struct {
	Endpoint     string
	NullEndpoint bool // unknown-endpoint mode: the endpoint is a null
	Port         int
	ID           string
	// Metadata are the networking details that are not the endpoint
	// ("ip" unless the endpoint is the ip, "hostname" when there is one and
	// it is not the endpoint), in that order.
	Metadata [][2]string
}

// SlotRange is one element of CLUSTER SLOTS: a maximal run of slots served
// by one master, with the master first and then its available replicas:
// not failed, and with a replication offset (a replica announces 0 while
// it full-syncs or loads, and is left out meanwhile, as in Redis).
type SlotRange struct {
	Start, End int
	Nodes      []SlotNode
}

// Slots is the CLUSTER SLOTS data, in slot order.
func (s *State) Slots() []SlotRange {
	var out []SlotRange
	for slot := 0; slot < slots.NumSlots; {
		n := s.owner[slot]
		end := slot
		for end+1 < slots.NumSlots && s.owner[end+1] == n {
			end++
		}
		if n != nil {
			r := SlotRange{Start: slot, End: end, Nodes: []SlotNode{s.slotNode(n)}}
			for _, rep := range s.replicas(n) {
				if !rep.Failed() && s.offsetOf(rep, int64(s.replOffset)) != 0 {
					r.Nodes = append(r.Nodes, s.slotNode(rep))
				}
			}
			out = append(out, r)
		}
		slot = end + 1
	}
	return out
}

func (s *State) slotNode(n *Node) SlotNode {
	ep, null := s.endpoint(n)
	sn := SlotNode{Endpoint: ep, NullEndpoint: null, Port: n.Port, ID: n.ID}
	if s.opts.PreferredEndpoint != EndpointIP {
		sn.Metadata = append(sn.Metadata, [2]string{"ip", n.IP})
	}
	if s.opts.PreferredEndpoint != EndpointHostname && n.Hostname != "" {
		sn.Metadata = append(sn.Metadata, [2]string{"hostname", n.Hostname})
	}
	return sn
}

// ShardNode is one node of a CLUSTER SHARDS shard. Fields are sent in this
// order; Hostname only when set.
type ShardNode struct {
	ID                string
	Port              int
	IP                string
	Endpoint          string
	Hostname          string
	Role              string // "master" or "replica"
	ReplicationOffset int64
	Health            string // "online", "fail" or "loading"
}

// Shard is one element of CLUSTER SHARDS: a master's slot ranges and the
// master followed by its replicas.
type Shard struct {
	Slots []slots.Range
	Nodes []ShardNode
}

// Shards is the CLUSTER SHARDS data: one shard per master (with or without
// slots). myOffset is this node's replication offset; peers' are the ones
// their last frame announced (0 until one did).
func (s *State) Shards(myOffset int64) []Shard {
	var out []Shard
	for _, m := range s.sorted {
		if !m.IsMaster() {
			continue
		}
		sh := Shard{Slots: m.Slots.Ranges(), Nodes: []ShardNode{s.shardNode(m, myOffset)}}
		for _, rep := range s.replicas(m) {
			sh.Nodes = append(sh.Nodes, s.shardNode(rep, myOffset))
		}
		out = append(out, sh)
	}
	return out
}

func (s *State) shardNode(n *Node, myOffset int64) ShardNode {
	ep, _ := s.endpoint(n)
	sn := ShardNode{ID: n.ID, Port: n.Port, IP: n.IP, Endpoint: ep, Hostname: n.Hostname, Role: "master",
		Health: "online"}
	sn.ReplicationOffset = s.offsetOf(n, myOffset)
	if n.IsReplica() {
		sn.Role = "replica"
	}
	switch {
	case n.Failed():
		sn.Health = "fail"
	case n.IsReplica() && sn.ReplicationOffset == 0:
		sn.Health = "loading"
	}
	return sn
}

// offsetOf is n's replication offset: mine for myself, else the one its
// frames announce.
func (s *State) offsetOf(n *Node, mine int64) int64 {
	if n == s.myself {
		return mine
	}
	return int64(n.replOffset)
}
