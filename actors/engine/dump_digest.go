package engine

// DEBUG DIGEST and DEBUG DIGEST-VALUE: Redis's dataset and value digests,
// computed the same way so that redis-cli --cluster and replication checks
// can compare slotd with Redis, and two slotd nodes with each other. The
// DEBUG container lives in netio; its handler runs these subcommands as the
// fanout commands below, so they see exactly the writes the client sent
// before them.
//
// Redis builds them from SHA-1 with two operations: xor (digest ^= SHA1(x),
// order-independent, for set-like contents) and mix (xor, then digest =
// SHA1(digest), order-dependent, for sequences). A value's digest mixes its
// type number, then its content, and xors a marker when it has a TTL.

import (
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"math"
	"strconv"

	"github.com/slotd/slotd/actors/engine/keyspace"
	"github.com/slotd/slotd/actors/engine/types/set"
	"github.com/slotd/slotd/actors/engine/types/stream"
	"github.com/slotd/slotd/actors/engine/types/zset"
	"github.com/slotd/slotd/slots"
)

// Digest is a 20-byte SHA-1 based digest.
type Digest [20]byte

// Hex is the digest as DEBUG prints it (40 lower-case hex digits).
func (d Digest) Hex() string { return hex.EncodeToString(d[:]) }

func (d *Digest) xor(p []byte) {
	h := sha1.Sum(p)
	for i := range d {
		d[i] ^= h[i]
	}
}

func (d *Digest) mix(p []byte) {
	d.xor(p)
	*d = sha1.Sum(d[:])
}

func (d *Digest) mixString(s string) { d.mix([]byte(s)) }

// Redis's object type numbers, mixed into every value digest.
var digestTypes = [...]uint32{
	keyspace.KindString: 0,
	keyspace.KindList:   1,
	keyspace.KindSet:    2,
	keyspace.KindZSet:   3,
	keyspace.KindHash:   4,
	keyspace.KindStream: 6,
}

// valueDigest is Redis's xorObjectDigest continued from d.
func valueDigest(d *Digest, e *keyspace.Entry) {
	var typ [4]byte
	binary.BigEndian.PutUint32(typ[:], digestTypes[e.Kind])
	d.mix(typ[:])
	switch e.Kind {
	case keyspace.KindString:
		d.mix(e.Str)
	case keyspace.KindList:
		ListOf(e).Each(false, func(_ int, v string) bool {
			d.mixString(v)
			return true
		})
	case keyspace.KindSet:
		if s, ok := e.Obj.(*set.Set); ok {
			s.ForEach(func(m string) bool {
				d.xor([]byte(m))
				return true
			})
		}
	case keyspace.KindZSet:
		if z, ok := e.Obj.(*zset.ZSet); ok {
			var buf []byte
			for n := z.First(); n != nil; n = n.Next() {
				var el Digest
				el.mixString(n.Member())
				buf = appendPrintf17g(buf[:0], n.Score())
				el.mix(buf)
				d.xor(el[:])
			}
		}
	case keyspace.KindHash:
		HashOf(e).Each(func(f, v string) bool {
			var el Digest
			el.mixString(f)
			el.mixString(v)
			d.xor(el[:])
			return true
		})
	case keyspace.KindStream:
		if st, ok := e.Obj.(*stream.Stream); ok {
			digestStream(d, st)
		}
	}
	if e.Expire != 0 {
		d.xor([]byte("!!expire!!"))
	}
}

// appendPrintf17g formats f as C's printf("%.17g") does.
func appendPrintf17g(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	case math.IsNaN(f):
		return append(dst, "nan"...)
	}
	return strconv.AppendFloat(dst, f, 'g', 17, 64)
}

// DigestValue is DEBUG DIGEST-VALUE for one key of this shard: the
// value's digest, or all zeros when the key does not exist. Like Redis it
// ignores expiry (a logically expired key still has a digest).
func (s *Shard) DigestValue(key []byte) Digest {
	var d Digest
	ks := s.spaces[slots.HashSlot(key)]
	if ks == nil {
		return d
	}
	if e := ks.Get(key); e != nil {
		valueDigest(&d, e)
	}
	return d
}

// Digest is this shard's part of DEBUG DIGEST, per database (by index):
// every key's digest (key mixed in, then its value) xored in (that is, its
// SHA-1 xored), and the number of keys. Combine the parts with
// MergeDigests.
func (s *Shard) Digest() ([]Digest, []int) {
	ds, ns := make([]Digest, len(s.dbs)), make([]int, len(s.dbs))
	s.ForEachDB(func(db int) {
		s.ForEachSlot(func(_ int, ks *keyspace.Keyspace) {
			ks.ForEach(func(e *keyspace.Entry) bool {
				var d Digest
				d.mixString(e.Key())
				valueDigest(&d, e)
				ds[db].xor(d[:])
				ns[db]++
				return true
			})
		})
	})
	return ds, ns
}

// MergeDigests combines the shards' parts (parts[shard][db], keys[db] the
// keys of each database) into DEBUG DIGEST's result, as Redis computes it:
// zeros for an empty dataset, else for each database with keys in order
// its id mixed in, then its keys' digests xored.
func MergeDigests(keys []int, parts [][]Digest) Digest {
	var d Digest
	for db, n := range keys {
		if n == 0 {
			continue
		}
		d.mix([]byte{byte(db >> 24), byte(db >> 16), byte(db >> 8), byte(db)})
		for _, p := range parts {
			if db < len(p) {
				for i := range d {
					d[i] ^= p[db][i]
				}
			}
		}
	}
	return d
}
