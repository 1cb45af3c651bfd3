package bus

import (
	"strconv"
	"strings"

	busv1 "github.com/slotd/slotd/proto/slotd/bus/v1"
)

// Live resharding: CLUSTER SETSLOT slot IMPORTING|MIGRATING|NODE id and
// SETSLOT slot STABLE, with Redis 7.0's checks and texts. The open-slot
// state (migrating/importing) is local to this node: it shows in the myself
// line of CLUSTER NODES, in nodes.conf and in the routing table, where the
// shards read it to answer ASK and TRYAGAIN. Ownership changes made by NODE
// spread by gossip: the importing node takes a new configEpoch without
// agreement, so its claim wins rule 2 everywhere.
//
// Not yet: the [TIMEOUT s] argument and the replication of SETSLOT to the
// node's replicas with acknowledgement (Valkey 8) need replication; see
// SetSlotHook.

// SetSlotHook is where replica acknowledgement of SETSLOT will plug in
// (Valkey 8: the primary replicates SETSLOT and replies only once its
// replicas acknowledged it, or -NOREPLICAS after TIMEOUT). Until
// replication exists it is nil and SETSLOT applies at once.
var SetSlotHook func(s *State, slot int, action string, target string) error

// SetSlot is CLUSTER SETSLOT; args are the command's arguments after
// "SETSLOT" (slot, action, [node-id], [TIMEOUT s] is refused as Redis 7.0
// does). slotKeys reports how many keys this node holds in a slot.
func (s *State) SetSlot(now int64, args [][]byte, slotKeys func(slot int) int64) error {
	s.tick(now)
	me := s.myself
	if me.IsReplica() {
		return Error("ERR Please use SETSLOT only with masters.")
	}
	if len(args) < 2 {
		return errArity("setslot")
	}
	slot, err := parseSlot(args[0])
	if err != nil {
		return err
	}
	action := strings.ToLower(string(args[1]))
	bad := Error("ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP")
	lookup := func(unknown string) (*Node, error) {
		id := string(args[2])
		n := s.nodes[id]
		if n == nil {
			return nil, Error(unknown + id)
		}
		if n.IsReplica() {
			return nil, Error("ERR Target node is not a master")
		}
		return n, nil
	}
	var target *Node
	switch {
	case action == "migrating" && len(args) == 3:
		if s.owner[slot] != me {
			return Error("ERR I'm not the owner of hash slot " + strconv.Itoa(slot))
		}
		if target, err = lookup("ERR I don't know about node "); err != nil {
			return err
		}
	case action == "importing" && len(args) == 3:
		if s.owner[slot] == me {
			return Error("ERR I'm already the owner of hash slot " + strconv.Itoa(slot))
		}
		if target, err = lookup("ERR I don't know about node "); err != nil {
			return err
		}
	case action == "stable" && len(args) == 2:
	case action == "node" && len(args) == 3:
		if target, err = lookup("ERR Unknown node "); err != nil {
			return err
		}
		if s.owner[slot] == me && target != me && slotKeys(slot) != 0 {
			return Error("ERR Can't assign hashslot " + strconv.Itoa(slot) +
				" to a different node while I still hold keys for this hash slot.")
		}
	default:
		return bad
	}
	if SetSlotHook != nil {
		id := ""
		if target != nil {
			id = target.ID
		}
		if err := SetSlotHook(s, slot, action, id); err != nil {
			return err
		}
	}
	switch action {
	case "migrating":
		s.migrating[slot] = target
	case "importing":
		s.importing[slot] = target
	case "stable":
		delete(s.migrating, slot)
		delete(s.importing, slot)
	case "node":
		s.setSlotNode(now, slot, target, slotKeys(slot))
	}
	s.fx.Save = true
	s.fx.Publish = true
	s.updateState()
	return nil
}

// setSlotNode binds slot to n (SETSLOT NODE). A migrating slot with no keys
// left is closed; a node that gave away its last slot follows the new
// owner as a replica (cluster-allow-replica-migration, on by default); an
// importing node that takes the slot bumps its configEpoch without
// agreement and tells everyone with the next step (sendImportPong).
func (s *State) setSlotNode(now int64, slot int, n *Node, keys int64) {
	me := s.myself
	if keys == 0 {
		delete(s.migrating, slot)
	}
	wasMine := s.owner[slot] == me
	s.delSlot(slot)
	s.addSlot(n, slot)
	if wasMine && n != me && me.numSlots == 0 {
		s.setMyMaster(n)
	}
	if n == me && s.importing[slot] != nil {
		s.BumpEpoch()
		delete(s.importing, slot)
		s.importPong = true
	}
}

// sendImportPong broadcasts the PONG a closed import owes, at the start of
// the step after SETSLOT NODE (a command, a frame, or the tick at most 100
// ms later). Redis queues it at once, but its bus writes go out on the next
// event-loop turn, after the command's reply: redis-cli has by then sent
// SETSLOT NODE on to the source and the other primaries, which bind the
// slot from the command (a save without fsync) rather than from the PONG
// (an fsync'd rebind on every node for every slot of a reshard). Sending
// the PONG with the step's own effects would win that race here.
func (s *State) sendImportPong() {
	if s.importPong {
		s.importPong = false
		s.broadcastPong(s.now)
	}
}

// broadcastPong sends a PONG with our new configuration to every node we
// have an outbound link with (Redis's clusterBroadcastPong).
func (s *State) broadcastPong(now int64) {
	for _, n := range s.sorted {
		if n == s.myself || n.Flags&(FlagHandshake|FlagNoAddr) != 0 {
			continue
		}
		s.sendPing(now, n.link, busv1.Type_TYPE_PONG)
	}
}

// OpenSlots returns this node's migrating and importing slots as
// slot → peer id maps (copies).
func (s *State) OpenSlots() (migrating, importing map[int]string) {
	migrating = make(map[int]string, len(s.migrating))
	for slot, n := range s.migrating {
		migrating[slot] = n.ID
	}
	importing = make(map[int]string, len(s.importing))
	for slot, n := range s.importing {
		importing[slot] = n.ID
	}
	return migrating, importing
}

// RepairOpenSlots is the hook for Valkey 8's re-pairing of open slots after
// a failover: when the primary a slot is migrating to or importing from
// is replaced by one of its replicas (newPrimary took over from old), the
// slot is re-pointed to the new primary instead of being left pointing at a
// node that is now a replica. The failover logic (issue 6) will call it
// when it switches roles.
func (s *State) RepairOpenSlots(old, newPrimary string) {
	o, n := s.nodes[old], s.nodes[newPrimary]
	if o == nil || n == nil || o == n {
		return
	}
	changed := false
	for slot, m := range s.migrating {
		if m == o {
			s.migrating[slot] = n
			changed = true
		}
	}
	for slot, m := range s.importing {
		if m == o {
			s.importing[slot] = n
			changed = true
		}
	}
	if changed {
		s.fx.Save = true
		s.fx.Publish = true
	}
}
