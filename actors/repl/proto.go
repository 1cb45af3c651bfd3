// Package repl is slotd's replication engine: the primary's feeds (one per
// connected replica), the replica's link to its primary, and the sync
// protocol between them.
//
// Every shard actor of a primary streams its writes (actors/shard,
// propagate*.go) with its own byte offset; a node's replication offset is
// the sum over its shards. A replica connects to the primary's client
// port like a Redis replica, announces itself with REPLCONF, and sends
// PSYNC with the replication id it follows and its offset vector (one
// offset per primary shard, comma separated; "?" and "-1" when it has
// none). The primary answers
//
//	+FULLRESYNC <replid> <o1,o2,...,oN>   (N = the primary's shard count)
//	+CONTINUE <replid>
//
// and from then on writes binary frames on that connection:
//
//	kind u8 | shard u16 | offset u64 | length u32 | payload   (little endian)
//
// S: stream records of a shard, offset = the shard's stream offset after
// them. D: snapshot records (full sync) that recreate the keys of the next
// slots of a shard. E: every slot of that shard was sent. P: keepalive.
// G: the replica should acknowledge now. M: a PUBLISH/SPUBLISH to deliver.
// A record is the shard package's (slot, RESP command).
//
// One connection carries every shard of the primary: frames of one shard
// stay in order, which is all a replica needs, since slots are
// independent; a connection per shard would multiply handshakes, sockets
// and failure cases for no gain in ordering. Bandwidth is shared by
// interleaving frames, whose size is bounded by one actor turn.
//
// Full sync takes no global snapshot: each shard snapshots its slots one
// actor turn at a time (paced by the replica's output buffer), and from
// the turn a slot is snapshotted its stream records follow it; records of
// slots not yet snapshotted are skipped. Partial resync replays each
// shard's backlog from the replica's offsets when every backlog still
// holds them.
//
// The replica applies records through its own shard actors (whatever their
// number) and appends stream records unchanged to its own streams; with
// the same shard count its offsets are then the primary's, so after a
// promotion its siblings can continue from it (replid2, as in Redis).
package repl

import (
	"encoding/binary"
	"strconv"
	"strings"
)

// Frame kinds (S, D and E are the shard package's).
const (
	frameStream   = 'S'
	frameSnapshot = 'D'
	frameSynced   = 'E'
	framePing     = 'P'
	frameGetAck   = 'G'
	framePublish  = 'M'
)

const frameHdr = 15

func putFrameHdr(b []byte, kind byte, shard int, offset int64, n int) {
	b[0] = kind
	binary.LittleEndian.PutUint16(b[1:], uint16(shard))
	binary.LittleEndian.PutUint64(b[3:], uint64(offset))
	binary.LittleEndian.PutUint32(b[11:], uint32(n))
}

func parseFrameHdr(b []byte) (kind byte, shard int, offset int64, n int) {
	return b[0], int(binary.LittleEndian.Uint16(b[1:])), int64(binary.LittleEndian.Uint64(b[3:])),
		int(binary.LittleEndian.Uint32(b[11:]))
}

// formatVec writes offsets as "o1,o2,...".
func formatVec(v []int64) string {
	var b []byte
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, x, 10)
	}
	return string(b)
}

// parseVec reads "o1,o2,...".
func parseVec(s string) ([]int64, bool) {
	if s == "" {
		return nil, false
	}
	parts := strings.Split(s, ",")
	out := make([]int64, len(parts))
	for i, p := range parts {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n < 0 {
			return nil, false
		}
		out[i] = n
	}
	return out, true
}

func sum(v []int64) int64 {
	var n int64
	for _, x := range v {
		n += x
	}
	return n
}

// covers reports whether a ≥ b component-wise (same length).
func covers(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] < b[i] {
			return false
		}
	}
	return true
}

// appendCommand encodes a command as a RESP array (handshake, ACK).
func appendCommand(b []byte, args ...string) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, '\r', '\n')
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, '\r', '\n')
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	return b
}
