package bus

import (
	"strconv"

	"github.com/slotd/slotd/slots"
)

// Error is a command error whose text is the reply, code included
// ("ERR Slot 0 is already busy").
type Error string

func (e Error) Error() string { return string(e) }

const (
	errInvalidSlot = Error("ERR Invalid or out of range slot")
	errFlushNotEmp = Error("ERR DB must be empty to perform CLUSTER FLUSHSLOTS.")
)

func errArity(sub string) Error {
	return Error("ERR wrong number of arguments for 'cluster|" + sub + "' command")
}

// parseSlot parses a slot argument as CLUSTER ADDSLOTS & co. do.
func parseSlot(b []byte) (int, error) {
	slot, ok := slots.ParseSlot(b)
	if !ok {
		return 0, errInvalidSlot
	}
	return slot, nil
}

// AddSlots is CLUSTER ADDSLOTS slot...: assign the slots to this node. Every
// argument is parsed first; then each slot must be unassigned and listed
// once. Nothing changes unless all pass. Slots this node was importing stop
// being importing: it now owns them.
func (s *State) AddSlots(args [][]byte) error { return s.slotList(args, false) }

// DelSlots is CLUSTER DELSLOTS slot...: unassign the slots, whoever owns
// them; each must be assigned and listed once.
func (s *State) DelSlots(args [][]byte) error { return s.slotList(args, true) }

// AddSlotsRange is CLUSTER ADDSLOTSRANGE start end [start end ...]. Each
// pair is parsed and checked in turn.
func (s *State) AddSlotsRange(args [][]byte) error { return s.slotRanges(args, false) }

// DelSlotsRange is CLUSTER DELSLOTSRANGE start end [start end ...].
func (s *State) DelSlotsRange(args [][]byte) error { return s.slotRanges(args, true) }

func (s *State) slotList(args [][]byte, del bool) error {
	if len(args) == 0 {
		if del {
			return errArity("delslots")
		}
		return errArity("addslots")
	}
	for _, a := range args {
		if _, err := parseSlot(a); err != nil {
			return err
		}
	}
	var chosen slots.Set
	for _, a := range args {
		slot, _ := parseSlot(a)
		if err := s.checkAssign(&chosen, del, slot, slot); err != nil {
			return err
		}
	}
	s.applySlots(&chosen, del)
	return nil
}

func (s *State) slotRanges(args [][]byte, del bool) error {
	if len(args) == 0 || len(args)%2 != 0 {
		if del {
			return errArity("delslotsrange")
		}
		return errArity("addslotsrange")
	}
	var chosen slots.Set
	for i := 0; i < len(args); i += 2 {
		start, err := parseSlot(args[i])
		if err != nil {
			return err
		}
		end, err := parseSlot(args[i+1])
		if err != nil {
			return err
		}
		if start > end {
			return Error("ERR start slot number " + strconv.Itoa(start) +
				" is greater than end slot number " + strconv.Itoa(end))
		}
		if err := s.checkAssign(&chosen, del, start, end); err != nil {
			return err
		}
	}
	s.applySlots(&chosen, del)
	return nil
}

// checkAssign checks slots lo..hi for an add (must be free) or a delete
// (must be assigned) and marks them in chosen, refusing duplicates.
func (s *State) checkAssign(chosen *slots.Set, del bool, lo, hi int) error {
	for slot := lo; slot <= hi; slot++ {
		if del && s.owner[slot] == nil {
			return Error("ERR Slot " + strconv.Itoa(slot) + " is already unassigned")
		}
		if !del && s.owner[slot] != nil {
			return Error("ERR Slot " + strconv.Itoa(slot) + " is already busy")
		}
		if chosen.Has(slot) {
			return Error("ERR Slot " + strconv.Itoa(slot) + " specified multiple times")
		}
		chosen.Add(slot)
	}
	return nil
}

func (s *State) applySlots(chosen *slots.Set, del bool) {
	chosen.ForEach(func(slot int) {
		if del {
			s.delSlot(slot)
			return
		}
		delete(s.importing, slot)
		s.addSlot(s.myself, slot)
	})
	s.slotsChanged()
}

// FlushSlots is CLUSTER FLUSHSLOTS: unassign every slot this node serves.
// Redis refuses unless the dataset is empty; dbEmpty says whether it is.
func (s *State) FlushSlots(dbEmpty bool) error {
	if !dbEmpty {
		return errFlushNotEmp
	}
	owned := s.myself.Slots // a copy: delSlot edits the original
	owned.ForEach(func(slot int) { s.delSlot(slot) })
	s.slotsChanged()
	return nil
}

// slotsChanged records the effects of a change of slot ownership.
func (s *State) slotsChanged() {
	s.fx.Save = true
	s.fx.Publish = true
	s.updateState()
}
