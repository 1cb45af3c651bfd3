package engine

// Streams in DEBUG DIGEST and in the AOF rewrite (their DUMP/RESTORE and
// RDB form is actors/engine/rdbvalue's).

import (
	"strconv"

	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/actors/engine/rdb"
	"github.com/slotd/slotd/actors/engine/types/stream"
)

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
