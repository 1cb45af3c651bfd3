package engine

// Streams in DUMP/RESTORE payloads, RDB snapshots and DEBUG DIGEST: the
// listpack nodes travel as they are (they are built the way Redis builds
// them), with the bookkeeping and consumer groups around them.

import (
	"strconv"

	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/actors/engine/rdb"
	"github.com/slotd/slotd/actors/engine/types/stream"
)

func rdbID(id stream.ID) rdb.StreamID   { return rdb.StreamID{Ms: id.Ms, Seq: id.Seq} }
func fromRDB(id rdb.StreamID) stream.ID { return stream.ID{Ms: id.Ms, Seq: id.Seq} }

// dumpStream writes s in Redis 7.0's stream format.
func dumpStream(enc *rdb.Encoder, s *stream.Stream) {
	m := s.Meta()
	v := &rdb.Stream{Length: m.Length, LastID: rdbID(m.LastID), FirstID: rdbID(m.FirstID),
		MaxDeletedID: rdbID(m.MaxDeletedID), EntriesAdded: m.EntriesAdded}
	s.EachNode(func(master stream.ID, lp []byte) {
		v.Nodes = append(v.Nodes, rdb.StreamNode{Key: master.Key(), LP: lp})
	})
	for _, g := range s.Groups() {
		rg := rdb.StreamGroup{Name: g.Name, LastID: rdbID(g.LastID), EntriesRead: g.EntriesRead}
		g.PendingRange(stream.MinID, func(id stream.ID, p *stream.Pending) bool {
			rg.Pending = append(rg.Pending, rdb.StreamPending{ID: id.Key(), DeliveryTime: p.DeliveryTime,
				DeliveryCount: p.DeliveryCount})
			return true
		})
		for _, c := range g.Consumers() {
			rc := rdb.StreamConsumer{Name: c.Name, SeenTime: c.SeenTime}
			c.PendingRange(stream.MinID, func(id stream.ID, _ *stream.Pending) bool {
				rc.Pending = append(rc.Pending, id.Key())
				return true
			})
			rg.Consumers = append(rg.Consumers, rc)
		}
		v.Groups = append(v.Groups, rg)
	}
	enc.Stream(v)
}

// buildStream makes a stream from a decoded value, refusing what Redis
// refuses (corrupt nodes, duplicate groups, consumers or pending entries,
// pending entries without an owner).
func buildStream(o *rdb.Object) (*stream.Stream, error) {
	v := o.Stream
	nodes := make([]stream.NodeBlob, len(v.Nodes))
	for i, n := range v.Nodes {
		nodes[i] = stream.NodeBlob{Master: stream.IDFromKey(n.Key[:]), LP: n.LP}
	}
	s, err := stream.Load(nodes, stream.Meta{Length: v.Length, LastID: fromRDB(v.LastID), FirstID: fromRDB(v.FirstID),
		MaxDeletedID: fromRDB(v.MaxDeletedID), EntriesAdded: v.EntriesAdded, V1: v.V1})
	if err != nil {
		return nil, err
	}
	for _, rg := range v.Groups {
		read := rg.EntriesRead
		if v.V1 {
			read = s.EstimateDistance(fromRDB(rg.LastID))
		}
		g := s.CreateGroup([]byte(rg.Name), fromRDB(rg.LastID), read)
		if g == nil {
			return nil, stream.ErrCorrupt
		}
		for _, p := range rg.Pending {
			if !g.LoadPending(stream.IDFromKey(p.ID[:]), p.DeliveryTime, p.DeliveryCount) {
				return nil, stream.ErrCorrupt
			}
		}
		for _, rc := range rg.Consumers {
			c := g.CreateConsumer([]byte(rc.Name), rc.SeenTime)
			if c == nil {
				return nil, stream.ErrCorrupt
			}
			for _, id := range rc.Pending {
				if !g.LoadConsumerPending(c, stream.IDFromKey(id[:])) {
					return nil, stream.ErrCorrupt
				}
			}
		}
		if g.Orphans() {
			return nil, stream.ErrCorrupt
		}
	}
	return s, nil
}

// digestStream is Redis's digest of a stream's entries: each ID as
// "<ms>.<seq>", then its fields and values, mixed in order.
func digestStream(d *Digest, s *stream.Stream) {
	var buf []byte
	it := s.Iter(stream.MinID, stream.MaxID, false)
	for id, n, ok := it.Next(); ok; id, n, ok = it.Next() {
		buf = strconv.AppendUint(buf[:0], id.Ms, 10)
		buf = append(buf, '.')
		buf = strconv.AppendUint(buf, id.Seq, 10)
		d.mix(buf)
		for range n {
			f, v := it.Field()
			d.mix(f)
			d.mix(v)
		}
	}
}

// streamRecords writes the commands that rebuild a stream, as Redis's AOF
// rewrite does: one XADD per entry (an empty stream is "XADD key MAXLEN 0
// 0-1 x y"), XSETID with the bookkeeping, then per group XGROUP CREATE ...
// ENTRIESREAD, an XCLAIM ... FORCE per pending entry and XGROUP
// CREATECONSUMER for consumers with nothing pending.
func (w *recWriter) streamRecords(slot int, key string, s *stream.Stream) {
	idText := func(id stream.ID) string { return id.String() }
	if s.Len() > 0 {
		it := s.Iter(stream.MinID, stream.MaxID, false)
		for id, n, ok := it.Next(); ok; id, n, ok = it.Next() {
			w.begin(slot, 3+2*n)
			w.str("XADD")
			w.str(key)
			w.str(idText(id))
			for range n {
				f, v := it.Field()
				w.arg(f)
				w.arg(v)
			}
			w.end()
		}
	} else {
		w.begin(slot, 7)
		for _, a := range []string{"XADD", key, "MAXLEN", "0", "0-1", "x", "y"} {
			w.str(a)
		}
		w.end()
	}
	w.begin(slot, 7)
	w.str("XSETID")
	w.str(key)
	w.str(idText(s.LastID))
	w.str("ENTRIESADDED")
	w.int(int64(s.EntriesAdded))
	w.str("MAXDELETEDID")
	w.str(idText(s.MaxDeletedID))
	w.end()
	for _, g := range s.Groups() {
		w.begin(slot, 7)
		for _, a := range []string{"XGROUP", "CREATE", key, g.Name, idText(g.LastID), "ENTRIESREAD"} {
			w.str(a)
		}
		w.int(g.EntriesRead)
		w.end()
		for _, c := range g.Consumers() {
			if c.PendingLen() == 0 {
				w.begin(slot, 5)
				for _, a := range []string{"XGROUP", "CREATECONSUMER", key, g.Name, c.Name} {
					w.str(a)
				}
				w.end()
				continue
			}
			c.PendingRange(stream.MinID, func(id stream.ID, p *stream.Pending) bool {
				w.begin(slot, 12)
				for _, a := range []string{"XCLAIM", key, g.Name, c.Name, "0", idText(id), "TIME"} {
					w.str(a)
				}
				w.int(p.DeliveryTime)
				w.str("RETRYCOUNT")
				w.int(int64(p.DeliveryCount))
				w.str("JUSTID")
				w.str("FORCE")
				w.end()
				return true
			})
		}
	}
}

// restoreRecord writes "RESTORE key 0 <payload> REPLACE" for e (its TTL
// follows as PEXPIREAT).
func (w *recWriter) restoreRecord(slot int, key string, e *keyspace.Entry) {
	p, _ := dumpEntry(e, rdb.Options{})
	w.begin(slot, 5)
	w.str("RESTORE")
	w.str(key)
	w.str("0")
	w.arg(p)
	w.str("REPLACE")
	w.end()
}
