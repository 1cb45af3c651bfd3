package engine

// Routing decisions only a shard can make: whether the keys of a command
// exist, in a slot this node is migrating or importing (Redis's
// getNodeByQuery, the part after the slot owner is known). The event loop
// already answered MOVED/CLUSTERDOWN/CROSSSLOT from the routing table; the
// shard re-reads the table when it runs the command, so a command that was
// routed here just before the slot changed hands is redirected rather than
// run against a keyspace the node no longer serves (which would lose a
// write to a slot whose keys were migrated away).
//
//   - MIGRATING here: existing keys are served; when every key is missing
//     the reply is -ASK slot target (a write that would create a key goes
//     to the target too); when only some are, -TRYAGAIN.
//   - IMPORTING here, after ASKING (or RESTORE-ASKING): served, except a
//     multi-key command with a missing key (-TRYAGAIN).
//   - MIGRATE itself is always served in an open slot.
//   - A replica's READONLY read of a slot its primary is migrating follows
//     the MIGRATING rule (the primary's SETSLOTs are replicated).

import (
	"strconv"

	"github.com/slotd/slotd/netio/batch"
	"github.com/slotd/slotd/netio/resp"
	"github.com/slotd/slotd/slots"
)

// ErrTryAgain is Redis's reply to a multi-key command on a slot in the
// middle of a migration when only some of its keys are here.
const ErrTryAgain = "TRYAGAIN Multiple keys request during rehashing of slot"

// routingTable is the current snapshot, nil outside cluster mode.
func (s *Shard) routingTable() *slots.Table {
	h := s.group.scripts.routing
	if h == nil {
		return nil
	}
	t := h.Load()
	if t == nil || !t.Cluster {
		return nil
	}
	return t
}

// redirect applies the open-slot rules to cmd before it runs. It writes the
// error reply and reports true when the command must not run here.
func (s *Shard) redirect(cmd *batch.Cmd, w *resp.Writer) bool {
	if cmd.Slot < 0 || cmd.Spec == nil || cmd.Spec.Route != nil {
		return false
	}
	t := s.routingTable()
	if t == nil {
		return false
	}
	slot := int(cmd.Slot)
	owner := int(t.Owner[slot])
	mine := owner == t.Self
	_, migrating := t.Migrating[slot]
	migrating = migrating && mine
	// A replica keeps its primary's importing state (for a promotion) but
	// serves nothing through it: ASKING is for the primary.
	_, importing := t.Importing[slot]
	importing = importing && t.Master < 0
	if mine && !migrating && !importing {
		return false // the common case: a stable slot of ours
	}
	if cmd.Spec.Name == "migrate" && (migrating || importing || mine) {
		return false
	}
	asking := cmd.Asking || cmd.Spec.Is("asking")
	if !mine && !(importing && asking) {
		// A replica's READONLY read (the loop checked READONLY) is served,
		// unless the primary is migrating the slot: then the keys decide as
		// on the primary (Valkey 8: the primary's SETSLOTs reach here).
		_, primaryMigrating := t.Migrating[slot]
		replicaRead := t.Master >= 0 && owner == t.Master && !cmd.Spec.Write()
		switch {
		case replicaRead && (!primaryMigrating || cmd.Spec.Name == "migrate"):
			return false
		case replicaRead:
			migrating, importing = true, false
		case owner == slots.NoOwner:
			w.Error("CLUSTERDOWN Hash slot not served")
			return true
		default:
			w.Error("MOVED " + strconv.Itoa(slot) + " " + t.Nodes[owner].Endpoint())
			return true
		}
	}
	if !migrating && !importing {
		return false
	}
	missing, existing, multi := s.countKeys(cmd, slot)
	if missing == 0 {
		return false
	}
	if migrating {
		if existing > 0 {
			w.Error(ErrTryAgain)
			return true
		}
		w.Error("ASK " + strconv.Itoa(slot) + " " + t.Nodes[t.Migrating[slot]].Endpoint())
		return true
	}
	// Importing after ASKING.
	if multi {
		w.Error(ErrTryAgain)
		return true
	}
	return false
}

// countKeys counts cmd's keys missing from (or present in) slot; expired
// keys count as missing. multi reports more than one distinct key.
func (s *Shard) countKeys(cmd *batch.Cmd, slot int) (missing, existing int, multi bool) {
	idx, err := cmd.Spec.KeyIndexes(s.keyIdx[:0], cmd.Args)
	s.keyIdx = idx[:0]
	if err != nil {
		return 0, 0, false
	}
	ks := s.spaces[slot]
	var first []byte
	for j, k := range idx {
		key := cmd.Args[k]
		if j == 0 {
			first = key
		} else if string(key) != string(first) {
			multi = true
		}
		var live bool
		if ks != nil {
			if e := ks.Get(key); e != nil && (e.Expire == 0 || e.Expire > s.now) {
				live = true
			}
		}
		if live {
			existing++
		} else {
			missing++
		}
	}
	return missing, existing, multi
}

// redirectTx applies the open-slot rules to every command of a transaction
// before it starts (Redis checks EXEC's queued commands as a whole): on a
// redirect the transaction is discarded and EXEC replies with the error,
// left in the marker's Result as a string.
func (s *Shard) redirectTx(marker *batch.Cmd, cmds []batch.Cmd) bool {
	if marker.Slot < 0 {
		return false // a keyless transaction checking only WATCH
	}
	t := s.routingTable()
	if t == nil || (t.Migrating == nil && t.Importing == nil && int(t.Owner[marker.Slot]) == t.Self) {
		return false
	}
	var w resp.Writer
	missing, existing, multi := 0, 0, false
	var first []byte
	for i := range cmds {
		c := &cmds[i]
		if c.Spec == nil || c.Slot < 0 || c.Spec.Route != nil {
			continue
		}
		if s.redirect(c, &w) && (len(w.B) < 4 || (string(w.B[1:4]) != "ASK" && string(w.B[1:4]) != "TRY")) {
			marker.Result = errText(w.B)
			return true
		}
		w.B = w.B[:0]
		m, e, mu := s.countKeys(c, int(c.Slot))
		missing += m
		existing += e
		multi = multi || mu
		if idx, _ := c.Spec.KeyIndexes(s.keyIdx[:0], c.Args); len(idx) > 0 {
			k := c.Args[idx[0]]
			if first == nil {
				first = k
			} else if string(first) != string(k) {
				multi = true
			}
		}
	}
	if missing == 0 {
		return false
	}
	slot := int(marker.Slot)
	_, importing := t.Importing[slot]
	mig, migrating := t.Migrating[slot]
	switch {
	case migrating && int(t.Owner[slot]) == t.Self && existing > 0:
		marker.Result = ErrTryAgain
	case migrating && int(t.Owner[slot]) == t.Self:
		marker.Result = "ASK " + strconv.Itoa(slot) + " " + t.Nodes[mig].Endpoint()
	case importing && multi:
		marker.Result = ErrTryAgain
	default:
		return false
	}
	return true
}

// errText is the text of an error reply ("-MOVED ...\r\n" → "MOVED ...").
func errText(b []byte) string {
	if len(b) < 3 {
		return "ERR"
	}
	return string(b[1 : len(b)-2])
}

// RedirectBlocked checks the shard's blocked clients against
// the routing table just published: a client blocked on a key whose slot
// this node no longer serves (and is not importing) gets -MOVED (or
// -CLUSTERDOWN) at once instead of waiting for a push that will never
// come here, as Redis's clusterRedirectBlockedClientIfNeeded.
func (s *Shard) RedirectBlocked() {
	if len(s.blocked) == 0 {
		return
	}
	t := s.routingTable()
	if t == nil {
		return
	}
	seen := map[*Blocked]bool{}
	for _, list := range s.blocked {
		for _, bl := range list {
			if bl.done || seen[bl] || bl.cmd.Slot < 0 {
				continue
			}
			seen[bl] = true
			slot := int(bl.cmd.Slot)
			owner := int(t.Owner[slot])
			_, importing := t.Importing[slot]
			var msg string
			switch {
			case !t.OK:
				msg = "CLUSTERDOWN The cluster is down"
			case owner == t.Self || importing:
				continue
			case t.Master >= 0 && owner == t.Master && !bl.cmd.Spec.Write():
				continue
			case owner == slots.NoOwner:
				msg = "CLUSTERDOWN Hash slot not served"
			default:
				msg = "MOVED " + strconv.Itoa(slot) + " " + t.Nodes[owner].Endpoint()
			}
			s.unpark(bl)
			b := bl.b
			b.Out.Proto = int(bl.cmd.Proto)
			b.Out.Error(msg)
			b.Ends = append(b.Ends, len(b.Out.B))
			s.finish(b)
		}
	}
}
