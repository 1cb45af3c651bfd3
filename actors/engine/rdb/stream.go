package rdb

import "encoding/binary"

// Streams (RDB types 15 and 19). The value is its listpack nodes as they
// are (each keyed by its master ID, 16 bytes big-endian), the length and
// ID bookkeeping, and the consumer groups with their pending entries. The
// node blobs are handed over uninterpreted: the stream type checks them
// (see actors/engine/types/stream).

// StreamID is a stream entry ID.
type StreamID struct{ Ms, Seq uint64 }

// StreamNode is one listpack node and its master ID key.
type StreamNode struct {
	Key [16]byte
	LP  []byte
}

// StreamPending is an entry of a group's pending list.
type StreamPending struct {
	ID            [16]byte
	DeliveryTime  int64
	DeliveryCount uint64
}

// StreamConsumer is a consumer and the IDs it has pending.
type StreamConsumer struct {
	Name     string
	SeenTime int64
	Pending  [][16]byte
}

// StreamGroup is a consumer group.
type StreamGroup struct {
	Name   string
	LastID StreamID
	// EntriesRead is -1 when unknown.
	EntriesRead int64
	Pending     []StreamPending
	Consumers   []StreamConsumer
}

// Stream is a decoded stream value. V1 is set when it came as type 15,
// which lacks FirstID, MaxDeletedID, EntriesAdded and the groups'
// EntriesRead (the stream type derives them as Redis does).
type Stream struct {
	Nodes                 []StreamNode
	Length                uint64
	LastID                StreamID
	FirstID, MaxDeletedID StreamID
	EntriesAdded          uint64
	Groups                []StreamGroup
	V1                    bool
}

// Stream writes s as type 19 (Redis 7.0's format).
func (e *Encoder) Stream(s *Stream) {
	e.Type(TypeStreamListpacks2)
	e.Len(uint64(len(s.Nodes)))
	for i := range s.Nodes {
		e.Bytes(s.Nodes[i].Key[:])
		e.Bytes(s.Nodes[i].LP)
	}
	e.Len(s.Length)
	for _, v := range []uint64{s.LastID.Ms, s.LastID.Seq, s.FirstID.Ms, s.FirstID.Seq,
		s.MaxDeletedID.Ms, s.MaxDeletedID.Seq, s.EntriesAdded} {
		e.Len(v)
	}
	e.Len(uint64(len(s.Groups)))
	for i := range s.Groups {
		g := &s.Groups[i]
		e.String(g.Name)
		e.Len(g.LastID.Ms)
		e.Len(g.LastID.Seq)
		e.Len(uint64(g.EntriesRead))
		e.Len(uint64(len(g.Pending)))
		for _, p := range g.Pending {
			e.B = append(e.B, p.ID[:]...)
			e.B = binary.LittleEndian.AppendUint64(e.B, uint64(p.DeliveryTime))
			e.Len(p.DeliveryCount)
		}
		e.Len(uint64(len(g.Consumers)))
		for _, c := range g.Consumers {
			e.String(c.Name)
			e.B = binary.LittleEndian.AppendUint64(e.B, uint64(c.SeenTime))
			e.Len(uint64(len(c.Pending)))
			for _, id := range c.Pending {
				e.B = append(e.B, id[:]...)
			}
		}
	}
}

// plainLen reads a length that must not be a string encoding marker.
func (r *reader) plainLen() (uint64, error) {
	n, special, err := r.length()
	if err == nil && special {
		err = errFormat("length")
	}
	return n, err
}

func (r *reader) stream(o *Object, v2 bool) error {
	s := &Stream{V1: !v2}
	o.Stream = s
	n, err := r.count()
	if err != nil {
		return err
	}
	for range n {
		k, err := r.str()
		if err != nil {
			return err
		}
		if len(k) != 16 {
			return errFormat("stream node key")
		}
		lp, err := r.str()
		if err != nil {
			return err
		}
		var node StreamNode
		copy(node.Key[:], k)
		node.LP = append([]byte(nil), lp...)
		s.Nodes = append(s.Nodes, node)
	}
	fields := []*uint64{&s.Length, &s.LastID.Ms, &s.LastID.Seq}
	if v2 {
		fields = append(fields, &s.FirstID.Ms, &s.FirstID.Seq, &s.MaxDeletedID.Ms, &s.MaxDeletedID.Seq, &s.EntriesAdded)
	}
	for _, f := range fields {
		if *f, err = r.plainLen(); err != nil {
			return err
		}
	}
	groups, err := r.count()
	if err != nil {
		return err
	}
	for range groups {
		var g StreamGroup
		if g.Name, err = r.text(); err != nil {
			return err
		}
		if g.LastID.Ms, err = r.plainLen(); err != nil {
			return err
		}
		if g.LastID.Seq, err = r.plainLen(); err != nil {
			return err
		}
		g.EntriesRead = -1
		if v2 {
			v, err := r.plainLen()
			if err != nil {
				return err
			}
			g.EntriesRead = int64(v)
		}
		np, err := r.count()
		if err != nil {
			return err
		}
		for range np {
			var p StreamPending
			b, err := r.take(16 + 8)
			if err != nil {
				return err
			}
			copy(p.ID[:], b)
			p.DeliveryTime = int64(binary.LittleEndian.Uint64(b[16:]))
			if p.DeliveryCount, err = r.plainLen(); err != nil {
				return err
			}
			g.Pending = append(g.Pending, p)
		}
		nc, err := r.count()
		if err != nil {
			return err
		}
		for range nc {
			var c StreamConsumer
			if c.Name, err = r.text(); err != nil {
				return err
			}
			b, err := r.take(8)
			if err != nil {
				return err
			}
			c.SeenTime = int64(binary.LittleEndian.Uint64(b))
			k, err := r.count()
			if err != nil {
				return err
			}
			for range k {
				b, err := r.take(16)
				if err != nil {
					return err
				}
				c.Pending = append(c.Pending, [16]byte(b))
			}
			g.Consumers = append(g.Consumers, c)
		}
		s.Groups = append(s.Groups, g)
	}
	return nil
}
