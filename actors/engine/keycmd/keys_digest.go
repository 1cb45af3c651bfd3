package keycmd

import (
	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/resp"
	"github.com/slotd/slotd/slots"
)

// DebugDigestSpec runs DEBUG DIGEST in every shard; DebugDigestValueSpec
// runs DEBUG DIGEST-VALUE key... (each shard digests the keys of its
// slots). They are not in the command table: netio's DEBUG finds them as
// internal specs "debug|digest" and "debug|digest-value".
func registerKeysDigest() {
	command.RegisterInternal("debug|digest", DebugDigestSpec)
	command.RegisterInternal("debug|digest-value", DebugDigestValueSpec)
}

var (
	DebugDigestSpec = engine.Handle(&command.Spec{Name: "debug", Exec: command.Fanout,
		Merge: engine.Merge(mergeDigest)}, fanDigest)
	DebugDigestValueSpec = engine.Handle(&command.Spec{Name: "debug", Exec: command.Fanout,
		Merge: engine.Merge(mergeDigestValue)}, fanDigestValue)
)

// digestPart is one shard's share of DEBUG DIGEST.
type digestPart struct {
	d    []engine.Digest // by database
	keys []int
}

func fanDigest(c *engine.Call) {
	d, n := c.S.Digest()
	c.Result(digestPart{d, n})
}

func mergeDigest(w *resp.Writer, _ [][]byte, parts []any) {
	var keys []int
	ds := make([][]engine.Digest, 0, len(parts))
	for _, p := range parts {
		if dp, ok := p.(digestPart); ok {
			if len(keys) < len(dp.keys) {
				keys = append(keys, make([]int, len(dp.keys)-len(keys))...)
			}
			for db, n := range dp.keys {
				keys[db] += n
			}
			ds = append(ds, dp.d)
		}
	}
	w.Simple(engine.MergeDigests(keys, ds).Hex())
}

func fanDigestValue(c *engine.Call) {
	keys := c.Args[2:]
	out := make([]engine.Digest, len(keys))
	for j, k := range keys {
		if c.S.Group().Of(slots.HashSlot(k)) == c.S.ID {
			out[j] = c.S.DigestValue(k)
		}
	}
	c.Result(out)
}

// mergeDigestValue: every key belongs to one shard and the others report
// zeros for it, so xoring the parts picks each key's digest.
func mergeDigestValue(w *resp.Writer, args [][]byte, parts []any) {
	n := len(args) - 2
	w.Array(n)
	for j := range n {
		var d engine.Digest
		for _, p := range parts {
			if ds, ok := p.([]engine.Digest); ok && j < len(ds) {
				for i := range d {
					d[i] ^= ds[j][i]
				}
			}
		}
		w.Simple(d.Hex())
	}
}
