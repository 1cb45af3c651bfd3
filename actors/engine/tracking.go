package engine

import (
	"sync/atomic"

	"github.com/slotd/slotd/netio/batch"
	"github.com/slotd/slotd/slots"
)

// Client-side caching (CLIENT TRACKING). The shard that owns a key
// remembers which clients read it; when the key is modified (the places
// Redis calls signalModifiedKey: every write's keys, explicit Signal,
// expiry, slot loss) each of them gets one invalidation and the key is
// forgotten. Delivery is the event loops' business: the shard hands the
// client ids to Group.Tracker.

// Tracker delivers invalidations (implemented by netio). Methods are called
// on shard goroutines and must not block.
type Tracker interface {
	// Invalidate tells each client in ids that key changed; a nil key means
	// everything (FLUSHALL/FLUSHDB).
	Invalidate(ids []int64, key []byte)
	// Modified reports a modified key to the broadcasting (BCAST) clients;
	// called only while Group.BcastClients > 0. writer is the client that
	// modified it (0: the server itself) for NOLOOP.
	Modified(key []byte, writer int64)
}

// Tracking is the node-wide part of tracking kept in the shard group.
type Tracking struct {
	// Tracker receives invalidations; nil disables tracking.
	Tracker Tracker
	// BcastClients counts clients in BCAST mode (set by netio).
	BcastClients atomic.Int64
	// Publish runs PUBLISH (shard false) or SPUBLISH for scripts and
	// returns the number of receivers; set by netio. It lives here, next
	// to the tracker, as the other hook from the shards to the loops.
	Publish func(channel, message []byte, shard bool) int64
	// MaxKeys mirrors tracking-table-max-keys (0: unbounded).
	MaxKeys atomic.Int64
	// keys is the number of tracked keys over all shards.
	keys atomic.Int64
}

// Keys is the number of keys in the tracking tables (INFO
// tracking_total_keys).
func (t *Tracking) Keys() int64 { return t.keys.Load() }

// trackTable is one shard's tracking table: slot → key → reader ids.
type trackTable struct {
	slots   map[int]map[string][]int64
	n       int
	writer  int64 // client of the command being executed
	noloop  bool
	reader  int64 // client whose reads are tracked (0: none), for scripts
	scratch []int64
}

// trackRead records that cmd's client read its keys.
func (s *Shard) trackRead(cmd *batch.Cmd) {
	if s.group.Tracking.Tracker == nil || cmd.Slot < 0 {
		return
	}
	s.keyIdx, _ = cmd.Spec.KeyIndexes(s.keyIdx[:0], cmd.Args)
	for _, i := range s.keyIdx {
		if cmd.Spread {
			o, slot := s.ownerOf(cmd.Args[i])
			o.trackKey(slot, cmd.Args[i], cmd.Client)
			continue
		}
		s.trackKey(int(cmd.Slot), cmd.Args[i], cmd.Client)
	}
}

func (s *Shard) trackKey(slot int, key []byte, id int64) {
	t := &s.trk
	if t.slots == nil {
		t.slots = map[int]map[string][]int64{}
	}
	m := t.slots[slot]
	if m == nil {
		m = map[string][]int64{}
		t.slots[slot] = m
	}
	ids, ok := m[string(key)]
	for _, x := range ids {
		if x == id {
			return
		}
	}
	if !ok {
		t.n++
		s.group.Tracking.keys.Add(1)
	}
	m[string(key)] = append(ids, id)
	if lim := s.group.Tracking.MaxKeys.Load(); lim > 0 {
		s.trackEvict(int((lim+int64(s.n)-1)/int64(s.n)), key)
	}
}

// trackEvict keeps this shard's share of tracking-table-max-keys by
// invalidating arbitrary keys (Redis picks random ones too), except the
// one just read.
func (s *Shard) trackEvict(limit int, keep []byte) {
	t := &s.trk
	for slot, m := range t.slots {
		for k := range m {
			if t.n <= limit {
				return
			}
			if k == string(keep) {
				continue
			}
			s.trackInvalidateIn(slot, []byte(k), false)
		}
	}
}

// trackingActive reports whether modified keys must be looked at.
func (s *Shard) trackingActive() bool {
	return s.trk.n > 0 || s.group.Tracking.BcastClients.Load() > 0
}

// trackInvalidate is the tracking part of signal: readers of key are told
// and forgotten; BCAST clients hear of every modified key.
func (s *Shard) trackInvalidate(key []byte) {
	if s.group.Tracking.Tracker == nil {
		return
	}
	if s.trk.n > 0 {
		s.trackInvalidateIn(slots.HashSlot(key), key, true)
	}
	if s.group.Tracking.BcastClients.Load() > 0 {
		w := int64(0)
		if s.trk.noloop {
			w = s.trk.writer
		}
		s.group.Tracking.Tracker.Modified(key, w)
	}
}

func (s *Shard) trackInvalidateIn(slot int, key []byte, honorNoLoop bool) {
	t := &s.trk
	m := t.slots[slot]
	ids, ok := m[string(key)]
	if !ok {
		return
	}
	delete(m, string(key))
	if len(m) == 0 {
		delete(t.slots, slot)
	}
	t.n--
	s.group.Tracking.keys.Add(-1)
	if honorNoLoop && t.noloop {
		out := t.scratch[:0]
		for _, id := range ids {
			if id != t.writer {
				out = append(out, id)
			}
		}
		t.scratch = out
		ids = out
	}
	if len(ids) > 0 {
		s.group.Tracking.Tracker.Invalidate(ids, key)
	}
}

// trackDropSlot invalidates every tracked key of a slot being dropped
// (slot loss).
func (s *Shard) trackDropSlot(slot int) {
	m := s.trk.slots[slot]
	for k := range m {
		s.trackInvalidateIn(slot, []byte(k), false)
	}
}

// TrackFlush forgets every tracked key of this shard; shard 0 also sends
// the null-key invalidation Redis sends to every tracking client on
// FLUSHALL/FLUSHDB.
func (s *Shard) TrackFlush() {
	t := &s.trk
	if t.n > 0 {
		s.group.Tracking.keys.Add(int64(-t.n))
		t.n = 0
		t.slots = nil
	}
	if s.ID == 0 && s.group.Tracking.Tracker != nil {
		s.group.Tracking.Tracker.Invalidate(nil, nil)
	}
}

// trackWriter notes the client of the command about to run (NOLOOP).
func (s *Shard) trackWriter(cmd *batch.Cmd) {
	s.trk.writer = cmd.Client
	s.trk.noloop = cmd.Track&batch.TrackNoLoop != 0
	s.trk.reader = 0
	if cmd.Track&batch.TrackRead != 0 {
		s.trk.reader = cmd.Client
	}
}

// trackScriptRead records the keys a script's read-only command read for
// the client that ran the script (Redis tracks them for the caller).
func (s *Shard) trackScriptRead(slot int, keys []int, args [][]byte) {
	if s.trk.reader == 0 || s.group.Tracking.Tracker == nil {
		return
	}
	for _, i := range keys {
		s.trackKey(slot, args[i], s.trk.reader)
	}
}
