package stream

import "sort"

// Group is a consumer group: the last ID delivered, the logical read
// counter, the pending entries list (delivered, not yet acknowledged) and
// the consumers.
type Group struct {
	Name   string
	LastID ID
	// EntriesRead is the logical read counter, or Invalid.
	EntriesRead int64
	pel         idMap[*Pending]
	consumers   []*Consumer // by name
}

// Consumer is one consumer of a group with its own pending entries.
type Consumer struct {
	Name string
	// SeenTime is the last time (unix ms) the consumer was looked up by a
	// command that refreshes it.
	SeenTime int64
	pel      idMap[*Pending]
}

// Pending is a pending entry: who has it, when it was last delivered and
// how often.
type Pending struct {
	Consumer      *Consumer
	DeliveryTime  int64
	DeliveryCount uint64
}

// Groups returns the groups in name order.
func (s *Stream) Groups() []*Group { return s.groups }

func (s *Stream) groupIndex(name []byte) (int, bool) {
	i := sort.Search(len(s.groups), func(i int) bool { return s.groups[i].Name >= string(name) })
	return i, i < len(s.groups) && s.groups[i].Name == string(name)
}

// Group returns the named group, or nil.
func (s *Stream) Group(name []byte) *Group {
	if i, ok := s.groupIndex(name); ok {
		return s.groups[i]
	}
	return nil
}

// CreateGroup adds a group; it returns nil when the name is taken.
func (s *Stream) CreateGroup(name []byte, last ID, entriesRead int64) *Group {
	i, ok := s.groupIndex(name)
	if ok {
		return nil
	}
	g := &Group{Name: string(name), LastID: last, EntriesRead: entriesRead}
	s.groups = append(s.groups, nil)
	copy(s.groups[i+1:], s.groups[i:])
	s.groups[i] = g
	return g
}

// DestroyGroup removes the named group; it reports whether it existed.
func (s *Stream) DestroyGroup(name []byte) bool {
	i, ok := s.groupIndex(name)
	if !ok {
		return false
	}
	s.groups = append(s.groups[:i], s.groups[i+1:]...)
	return true
}

// PendingLen is the size of the group's pending entries list.
func (g *Group) PendingLen() int { return g.pel.Len() }

// Pending returns the pending entry for id, or nil.
func (g *Group) Pending(id ID) *Pending {
	p, _ := g.pel.Get(id)
	return p
}

// PendingRange calls fn for pending entries with IDs ≥ from, in order,
// until fn returns false. fn must not change the group.
func (g *Group) PendingRange(from ID, fn func(id ID, p *Pending) bool) {
	g.pel.Ascend(from, fn)
}

// PendingBounds returns the smallest and largest pending IDs.
func (g *Group) PendingBounds() (lo, hi ID) {
	lo, _ = g.pel.First()
	hi, _ = g.pel.Last()
	return lo, hi
}

// Consumers returns the consumers in name order.
func (g *Group) Consumers() []*Consumer { return g.consumers }

func (g *Group) consumerIndex(name []byte) (int, bool) {
	i := sort.Search(len(g.consumers), func(i int) bool { return g.consumers[i].Name >= string(name) })
	return i, i < len(g.consumers) && g.consumers[i].Name == string(name)
}

// Consumer returns the named consumer, or nil.
func (g *Group) Consumer(name []byte) *Consumer {
	if i, ok := g.consumerIndex(name); ok {
		return g.consumers[i]
	}
	return nil
}

// CreateConsumer adds a consumer seen at now; nil if the name exists.
func (g *Group) CreateConsumer(name []byte, now int64) *Consumer {
	i, ok := g.consumerIndex(name)
	if ok {
		return nil
	}
	c := &Consumer{Name: string(name), SeenTime: now}
	g.consumers = append(g.consumers, nil)
	copy(g.consumers[i+1:], g.consumers[i:])
	g.consumers[i] = c
	return c
}

// DeleteConsumer removes a consumer and its pending entries from the
// group; it returns how many entries it had pending.
func (g *Group) DeleteConsumer(c *Consumer) int {
	n := c.pel.Len()
	c.pel.Ascend(MinID, func(id ID, _ *Pending) bool {
		g.pel.Delete(id)
		return true
	})
	if i, ok := g.consumerIndex([]byte(c.Name)); ok {
		g.consumers = append(g.consumers[:i], g.consumers[i+1:]...)
	}
	return n
}

// Ack removes id from the pending lists; it reports whether it was
// pending.
func (g *Group) Ack(id ID) bool {
	p, ok := g.pel.Get(id)
	if !ok {
		return false
	}
	g.pel.Delete(id)
	p.Consumer.pel.Delete(id)
	return true
}

// Deliver records id as delivered to c at now: a new pending entry, or
// an existing one moved to c with its count reset to 1, as XREADGROUP
// does.
func (g *Group) Deliver(id ID, c *Consumer, now int64) *Pending {
	if p, ok := g.pel.Get(id); ok {
		p.Consumer.pel.Delete(id)
		p.Consumer, p.DeliveryTime, p.DeliveryCount = c, now, 1
		c.pel.Set(id, p)
		return p
	}
	p := &Pending{Consumer: c, DeliveryTime: now, DeliveryCount: 1}
	g.pel.Set(id, p)
	c.pel.Set(id, p)
	return p
}

// Claim gives the pending entry id to c (XCLAIM), creating it when
// missing (FORCE, or loading).
func (g *Group) Claim(id ID, c *Consumer) *Pending {
	if p, ok := g.pel.Get(id); ok {
		if p.Consumer != c {
			p.Consumer.pel.Delete(id)
			p.Consumer = c
			c.pel.Set(id, p)
		}
		return p
	}
	p := &Pending{Consumer: c}
	g.pel.Set(id, p)
	c.pel.Set(id, p)
	return p
}

// PendingLen is the size of the consumer's pending list.
func (c *Consumer) PendingLen() int { return c.pel.Len() }

// PendingRange is Group.PendingRange for the consumer's own entries.
func (c *Consumer) PendingRange(from ID, fn func(id ID, p *Pending) bool) {
	c.pel.Ascend(from, fn)
}

// UpdateLastID moves the group's last delivered ID to id when id is
// larger, keeping the read counter as Redis does, and reports whether it
// moved.
func (s *Stream) UpdateLastID(g *Group, id ID) bool {
	if id.Compare(g.LastID) <= 0 {
		return false
	}
	if g.EntriesRead != Invalid && !s.HasTombstones(id, MaxID) {
		g.EntriesRead++
	} else if s.EntriesAdded != 0 {
		g.EntriesRead = s.EstimateDistance(id)
	}
	g.LastID = id
	return true
}

// Lag is the group's lag as XINFO reports it; ok false means unknown
// (null).
func (s *Stream) Lag(g *Group) (int64, bool) {
	if s.EntriesAdded == 0 {
		return 0, true
	}
	if g.EntriesRead != Invalid && !s.HasTombstones(g.LastID, MaxID) {
		return int64(s.EntriesAdded) - g.EntriesRead, true
	}
	if r := s.EstimateDistance(g.LastID); r != Invalid {
		return int64(s.EntriesAdded) - r, true
	}
	return 0, false
}

// PendingSeek returns the first pending entry with an ID ≥ from.
func (g *Group) PendingSeek(from ID) (ID, *Pending, bool) { return g.pel.Seek(from) }

// RemovePending drops a pending entry whatever its owner (XCLAIM and
// XAUTOCLAIM do this for entries no longer in the stream).
func (g *Group) RemovePending(id ID) { g.Ack(id) }

// SetPending gives an existing or new pending entry to c with the given
// delivery time and count (XCLAIM, XAUTOCLAIM).
func (g *Group) SetPending(id ID, c *Consumer, deliveryTime int64, count uint64) *Pending {
	p := g.Claim(id, c)
	p.DeliveryTime, p.DeliveryCount = deliveryTime, count
	return p
}
