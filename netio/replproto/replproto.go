// Package replproto owns the vocabulary shared by the client I/O layer
// (netio's event loops) and the replication engine (actors/repl): the
// engine as the loops see it (Replication), what a replica sent before
// PSYNC (PSyncRequest), the connection a primary writes a replica's feed
// to (FeedConn), a replica's registered link to its primary (MasterLink)
// and the gate bits that tell the loops what a replica refuses. Neither
// side imports the other; the wiring (cmd/node) hands one to the other.
package replproto

import (
	"time"

	"github.com/slotd/slotd/netio/resp"
)

// Replication is the replication engine as the event loops see it.
type Replication interface {
	// ReplicaOf starts replicating from host:port, or stops replicating
	// when host is "" (NO ONE). It returns the status reply text.
	ReplicaOf(host string, port int) string
	// PSync serves PSYNC on conn; reply is called once with a status line
	// ("FULLRESYNC ...", "CONTINUE ...") or an error reply text, after
	// which the engine starts writing the feed.
	PSync(req PSyncRequest, conn FeedConn, reply func(line string, isErr bool))
	// Failover starts FAILOVER [TO host port [FORCE]] [TIMEOUT ms]
	// (standalone): Redis's error text, or "" once under way.
	Failover(host string, port int, force bool, timeout time.Duration) string
	// AbortFailover is FAILOVER ABORT: an error text or "".
	AbortFailover() string
	// Ack records a replica's acknowledged offsets (REPLCONF ACK).
	Ack(conn FeedConn, offsets string)
	// Wait implements WAIT: reply is called once with the number of
	// replicas that acknowledged every write made before the call, when
	// there are numreplicas of them or at the timeout (0: none; noBlock:
	// answer at once). The returned function cancels the wait (its client
	// went away); reply is not called then.
	Wait(numreplicas int64, timeout time.Duration, noBlock bool, reply func(n int64)) (cancel func())
	// Role writes the ROLE reply.
	Role(w *resp.Writer)
	// Info returns the INFO replication fields, in order.
	Info() [][2]string
	// IsReplica reports whether the node replicates from a primary.
	IsReplica() bool
	// SyncStats counts full syncs served and partial resyncs accepted and
	// refused (INFO stats sync_full, sync_partial_ok, sync_partial_err).
	SyncStats() (full, partialOK, partialErr int64)
}

// PSyncRequest is what a replica sent with REPLCONF and PSYNC.
type PSyncRequest struct {
	ReplID        string
	Offsets       string
	ListeningPort int
	IP            string // REPLCONF ip-address, else the connection's address
	Capa          []string
	Failover      bool // PSYNC replid offsets FAILOVER: the primary hands its role over (FAILOVER)
}

// FeedConn is a replica's connection, written by the engine from any
// goroutine once PSYNC has been answered.
type FeedConn interface {
	// Write queues a frame (hdr then payload, copied). It reports false
	// once the connection is closed.
	Write(hdr, payload []byte) bool
	// Pending is how many bytes are queued and not yet taken by the
	// kernel, as of the last flush (see Refresh).
	Pending() int64
	// Refresh asks the connection's loop to flush and update Pending.
	Refresh()
	// Flush asks the loop to write what is queued without the usual
	// coalescing delay.
	Flush()
	// Close closes the connection.
	Close()
	// OnClose registers fn to run (once) when the connection closes.
	OnClose(fn func())
	// Addr is the replica's address (ip:port of the connection).
	Addr() string
}

// MasterLink is a replica's link to its primary as registered with the
// client server (CLIENT LIST flags=M, CLIENT KILL closes it).
type MasterLink interface {
	// Touch records traffic on the link (CLIENT LIST's idle) and the last
	// command the primary sent (nil: unchanged).
	Touch(unixMS int64, cmd *string)
	// Remove takes the link out of CLIENT LIST.
	Remove()
}

// Gate bits: what dispatch refuses while this node is a replica.
const (
	GateReadOnly     uint32 = 1 << iota // writes: READONLY
	GateStaleDeny                       // link down and replica-serve-stale-data no: MASTERDOWN
	GateLoading                         // full sync in progress: LOADING
	GateReplica                         // the node is a replica (HELLO role)
	GateAsyncLoading                    // a full sync arrives while the old data is served (INFO async_loading)
)
