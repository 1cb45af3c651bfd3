package engine

import (
	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/netio/batch"
	"github.com/slotd/slotd/netio/resp"
	"github.com/slotd/slotd/slots"
)

// Call is the execution context of one shard command. All keys of the
// command hash to Slot (the event loop checked it before dispatch), unless
// the command is spread over several slots (spread.go).
type Call struct {
	Args [][]byte
	W    *resp.Writer
	Slot int
	Now  int64 // unix ms, fixed for the whole batch
	S    *Shard
	Cmd  *batch.Cmd

	unchanged  bool // set by Unchanged
	signalled  bool // the handler signalled keys itself (Signal)
	propagated bool // the handler chose its replicated form (Propagate)
	master     bool // applied from the primary's stream (replica)
	// spread: the command's keys hash to several slots (standalone), each
	// reached in its own slot and owning shard (spread.go).
	spread  bool
	rewrote bool // a spread command called Propagate: it changed something
}

// Unchanged tells the shard that this write command modified nothing (SET
// NX on an existing key, GETEX without options, ...), so its keys are not
// signalled to WATCHers and blocked clients, as Redis does not signal them.
func (c *Call) Unchanged() { c.unchanged = true }

// Lookup returns the live entry for key, deleting it first if it has
// expired (lazy expiry). It counts keyspace hits and misses.
func (c *Call) Lookup(key []byte) *keyspace.Entry {
	e := c.counted(c.peek(key))
	if e == nil {
		c.S.notify(NotifyKeyMiss, "keymiss", key)
	}
	return e
}

// counted counts a keyspace hit (e found) or miss and returns e.
func (c *Call) counted(e *keyspace.Entry) *keyspace.Entry {
	if e == nil {
		c.S.Stats.Misses.Add(1)
	} else {
		c.S.Stats.Hits.Add(1)
	}
	return e
}

// LookupWrite is Lookup without hit/miss accounting (as Redis does for
// lookups made by writes).
func (c *Call) LookupWrite(key []byte) *keyspace.Entry { return c.peek(key) }

func (c *Call) peek(key []byte) *keyspace.Entry {
	o, slot := c.at(key)
	e := c.findAt(o, slot, key)
	if e != nil {
		c.touchAt(o, e)
		o.accessed(e, c.Now)
	}
	return e
}

// LookupNoTouch is Lookup that leaves the key's access time and LFU
// counter alone (Redis's LOOKUP_NOTOUCH: OBJECT).
func (c *Call) LookupNoTouch(key []byte) *keyspace.Entry {
	o, slot := c.at(key)
	e := c.counted(c.findAt(o, slot, key))
	if e != nil {
		c.touchAt(o, e)
	}
	return e
}

// find returns the live entry for key, deleting it first if it has
// expired (lazy expiry).
func (c *Call) find(key []byte) *keyspace.Entry {
	o, slot := c.at(key)
	return c.findAt(o, slot, key)
}

// findAt is find in shard o's keyspace of slot.
func (c *Call) findAt(o *Shard, slot int, key []byte) *keyspace.Entry {
	// The index lookup compares ks by address only: one cache miss less
	// than reading the slot's Keyspace.
	ks := o.spaces[slot]
	e := o.index.Lookup(ks, key)
	if e == nil {
		return nil
	}
	if e.Expire != 0 && e.Expire <= c.Now {
		if o.replica && !(c.Cmd != nil && c.Cmd.Spec != nil && c.Cmd.Spec.Write()) {
			// Replicas hide keys past their TTL but leave the deletion to
			// the primary's DEL (writes of a writable replica do delete).
			return nil
		}
		ks.DeleteEntry(e)
		o.signalWatch(key)
		if o.trackingActive() {
			o.trackInvalidate(key)
		}
		o.removed(slot)
		o.Stats.Expired.Add(1)
		o.propagateExpired(slot, key)
		c.S.notify(NotifyExpired, "expired", key)
		return nil
	}
	return e
}

// Create adds a new entry for key (which must not exist).
func (c *Call) Create(key []byte, kind keyspace.Kind) *keyspace.Entry {
	o, slot := c.at(key)
	ks := o.Keyspace(slot, true)
	e := ks.Add(key)
	e.Kind = kind
	o.added(slot)
	o.created(e, c.Now)
	o.dirty = append(o.dirty, e)
	if c.Cmd != nil { // not an RDB load
		c.S.notify(NotifyNew, "new", key)
	}
	return e
}

// CreateString adds a new string entry for key (which must not exist)
// holding a copy of val, stored next to the key.
func (c *Call) CreateString(key, val []byte) *keyspace.Entry {
	o, slot := c.at(key)
	e := o.Keyspace(slot, true).AddString(key, val)
	o.added(slot)
	o.created(e, c.Now)
	o.dirty = append(o.dirty, e)
	if c.Cmd != nil {
		c.S.notify(NotifyNew, "new", key)
	}
	return e
}

// Delete removes key; it reports whether a live key was removed.
func (c *Call) Delete(key []byte) bool {
	e := c.peek(key)
	if e == nil {
		return false
	}
	o, slot := c.at(key)
	o.spaces[slot].DeleteEntry(e)
	o.removed(slot)
	return true
}

// SetExpire sets or clears (ms == 0) the TTL of e.
func (c *Call) SetExpire(e *keyspace.Entry, ms int64) {
	if c.spread {
		slot := slots.HashSlotString(e.Key())
		c.S.group.shards[slot%c.S.n].spaces[slot].SetExpire(e, ms)
		return
	}
	c.S.spaces[c.Slot].SetExpire(e, ms)
}

// Keyspace is the keyspace of the command's slot (nil if it has none).
func (c *Call) Keyspace() *keyspace.Keyspace { return c.S.spaces[c.Slot] }

// Result stores a fanout part.
func (c *Call) Result(v any) { c.Cmd.Result = v }

// Error texts shared by many commands (Redis's wording).
const (
	ErrWrongType = "WRONGTYPE Operation against a key holding the wrong kind of value"
	ErrNotInt    = "ERR value is not an integer or out of range"
	ErrNotFloat  = "ERR value is not a valid float"
	ErrSyntax    = "ERR syntax error"
	ErrOverflow  = "ERR increment or decrement would overflow"
)
