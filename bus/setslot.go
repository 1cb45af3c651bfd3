package bus

import (
	"strconv"
	"strings"

	busv1 "github.com/slotd/slotd/proto/slotd/bus/v1"
)

// Live resharding: CLUSTER SETSLOT slot IMPORTING|MIGRATING|NODE id and
// SETSLOT slot STABLE, with Redis 7.0's checks and texts, plus Valkey 8's
// [TIMEOUT ms] and replication to the node's replicas. The open-slot state
// (migrating/importing) is local to this node and its replicas: it shows in
// the myself line of CLUSTER NODES, in nodes.conf and in the routing table,
// where the shards read it to answer ASK and TRYAGAIN. Ownership changes
// made by NODE spread by gossip: the importing node takes a new configEpoch
// without agreement, so its claim wins rule 2 everywhere.
//
// A primary with replicas runs SETSLOT in two steps (Valkey 8): ParseSetSlot
// checks it, the actor streams it to the replicas and waits for their
// acknowledgement, then ApplySetSlot runs it (checked again: the state may
// have moved meanwhile). A replica applies what its primary streams with
// ReplicaSetSlot, so a replica promoted in the middle of a migration
// carries it on.

// DefaultSetSlotTimeout is how long a primary waits for its replicas to
// acknowledge a SETSLOT (ms; Valkey's CLUSTER_OPERATION_TIMEOUT).
const DefaultSetSlotTimeout = 2000

// SetSlotCmd is a checked CLUSTER SETSLOT.
type SetSlotCmd struct {
	Slot   int
	Action string // "migrating", "importing", "stable" or "node"
	Node   string // the node id argument ("" for stable)
	// Timeout is how long to wait for the replicas (ms, 0: no limit).
	Timeout int64
	// Args are the arguments to replicate: SETSLOT's without TIMEOUT.
	Args [][]byte
}

// SetSlot is CLUSTER SETSLOT run at once (ParseSetSlot then ApplySetSlot);
// args are the command's arguments after "SETSLOT". slotKeys reports how
// many keys this node holds in a slot.
func (s *State) SetSlot(now int64, args [][]byte, slotKeys func(slot int) int64) error {
	cmd, err := s.ParseSetSlot(now, args, slotKeys)
	if err != nil {
		return err
	}
	return s.ApplySetSlot(now, cmd, slotKeys)
}

// ParseSetSlot checks CLUSTER SETSLOT's arguments against the current state
// without changing it.
func (s *State) ParseSetSlot(now int64, args [][]byte, slotKeys func(slot int) int64) (SetSlotCmd, error) {
	s.tick(now)
	cmd := SetSlotCmd{Timeout: DefaultSetSlotTimeout}
	me := s.myself
	if me.IsReplica() {
		return cmd, Error("ERR Please use SETSLOT only with masters.")
	}
	if len(args) < 2 {
		return cmd, errArity("setslot")
	}
	slot, err := parseSlot(args[0])
	if err != nil {
		return cmd, err
	}
	cmd.Slot = slot
	cmd.Action = strings.ToLower(string(args[1]))
	bad := Error("ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP")
	fixed := 3
	if cmd.Action == "stable" {
		fixed = 2
	}
	if len(args) < fixed {
		return cmd, bad
	}
	// Valkey 8's optional TIMEOUT ms; anything else is refused as in 7.0.
	for i := fixed; i < len(args); i += 2 {
		if !strings.EqualFold(string(args[i]), "timeout") {
			return cmd, bad
		}
		if i+1 >= len(args) {
			return cmd, Error("ERR Missing timeout value")
		}
		t, err := strconv.ParseInt(string(args[i+1]), 10, 64)
		switch {
		case err != nil:
			return cmd, Error("ERR timeout is not an integer or out of range")
		case t < 0:
			return cmd, Error("ERR timeout is negative")
		}
		cmd.Timeout = t
	}
	cmd.Args = args[:fixed]
	if fixed == 3 {
		cmd.Node = string(args[2])
	}
	if err := s.checkSetSlot(cmd, slotKeys); err != nil {
		return cmd, err
	}
	return cmd, nil
}

// checkSetSlot applies Redis 7.0's checks to a parsed SETSLOT.
func (s *State) checkSetSlot(cmd SetSlotCmd, slotKeys func(slot int) int64) error {
	me, slot := s.myself, cmd.Slot
	lookup := func(unknown string) error {
		n := s.nodes[cmd.Node]
		if n == nil {
			return Error(unknown + cmd.Node)
		}
		if n.IsReplica() {
			return Error("ERR Target node is not a master")
		}
		return nil
	}
	switch cmd.Action {
	case "migrating":
		if s.owner[slot] != me {
			return Error("ERR I'm not the owner of hash slot " + strconv.Itoa(slot))
		}
		return lookup("ERR I don't know about node ")
	case "importing":
		if s.owner[slot] == me {
			return Error("ERR I'm already the owner of hash slot " + strconv.Itoa(slot))
		}
		return lookup("ERR I don't know about node ")
	case "stable":
		return nil
	case "node":
		if err := lookup("ERR Unknown node "); err != nil {
			return err
		}
		if s.owner[slot] == me && s.nodes[cmd.Node] != me && slotKeys(slot) != 0 {
			return Error("ERR Can't assign hashslot " + strconv.Itoa(slot) +
				" to a different node while I still hold keys for this hash slot.")
		}
		return nil
	}
	return Error("ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP")
}

// ApplySetSlot runs a SETSLOT ParseSetSlot accepted, checking it again.
func (s *State) ApplySetSlot(now int64, cmd SetSlotCmd, slotKeys func(slot int) int64) error {
	s.tick(now)
	if s.myself.IsReplica() {
		return Error("ERR Please use SETSLOT only with masters.")
	}
	if err := s.checkSetSlot(cmd, slotKeys); err != nil {
		return err
	}
	target := s.nodes[cmd.Node]
	switch cmd.Action {
	case "migrating":
		s.migrating[cmd.Slot] = target
	case "importing":
		s.importing[cmd.Slot] = target
	case "stable":
		delete(s.migrating, cmd.Slot)
		delete(s.importing, cmd.Slot)
	case "node":
		s.setSlotNode(cmd.Slot, target, slotKeys(cmd.Slot))
	}
	s.fx.Save = true
	s.fx.Publish = true
	s.updateState()
	return nil
}

// ReplicaSetSlot applies a SETSLOT streamed by this replica's primary
// (Valkey 8's replica side): the open-slot markers follow the primary's;
// NODE binds the slot, closes the import when it goes to the primary, and
// makes the node follow the new owner when its primary lost its last slot.
// Nothing is checked against this node's own slots; unknown nodes are an
// error (the replica has not learned of them yet).
func (s *State) ReplicaSetSlot(now int64, args [][]byte, slotKeys func(slot int) int64) error {
	s.tick(now)
	me := s.myself
	primary := s.master(me)
	if !me.IsReplica() || primary == nil || len(args) < 2 {
		return Error("ERR SETSLOT from a primary on a node that is not its replica")
	}
	slot, err := parseSlot(args[0])
	if err != nil {
		return err
	}
	action := strings.ToLower(string(args[1]))
	var target *Node
	if action != "stable" {
		if len(args) < 3 {
			return errArity("setslot")
		}
		if target = s.nodes[string(args[2])]; target == nil {
			return Error("ERR Unknown node " + string(args[2]))
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
		if slotKeys(slot) == 0 {
			delete(s.migrating, slot)
		}
		wasOurs := s.owner[slot] == primary
		s.delSlot(slot)
		s.addSlot(target, slot)
		if target == primary {
			delete(s.importing, slot)
		}
		if wasOurs && target != primary && primary.numSlots == 0 && s.opts.AllowReplicaMigration {
			s.setMyMaster(target)
		}
	default:
		return Error("ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP")
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
func (s *State) setSlotNode(slot int, n *Node, keys int64) {
	me := s.myself
	if keys == 0 {
		delete(s.migrating, slot)
	}
	wasMine := s.owner[slot] == me
	s.delSlot(slot)
	s.addSlot(n, slot)
	if wasMine && n != me && me.numSlots == 0 && s.opts.AllowReplicaMigration {
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

// RepairOpenSlots re-points every slot migrating to or importing from old
// at newPrimary, which took over from it. The state machine does this by
// itself from the claims it receives (setslot_repair.go); this is the
// explicit form, for a caller that learns of the takeover otherwise.
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
