package repl

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/persist"
	"github.com/slotd/slotd/netio/replproto"
)

// Feed states, named as INFO shows them.
const (
	feedSync   = iota // full sync: snapshots in progress ("send_bulk")
	feedOnline        // streaming ("online")
)

// feed is one connected replica, on the primary. It is the engine.Sink its
// primary's shards write frames to, from their own goroutines.
type feed struct {
	m    *Manager
	conn replproto.FeedConn
	id   int
	ip   string
	port int
	n    int // shard count

	state  atomic.Int32
	synced atomic.Int32 // shards that finished their snapshot
	dead   atomic.Bool
	closed chan struct{}
	once   sync.Once

	mu    sync.Mutex
	acked []int64 // offsets the replica acknowledged
	ackAt atomic.Int64

	// paced holds frames back for rdb-key-save-delay (pace), nil without.
	paced chan pacedFrame
}

// pacedFrame is a frame waiting for its turn on a paced feed.
type pacedFrame struct {
	hdr     [frameHdr]byte
	payload []byte
	keys    int
}

func newFeed(m *Manager, conn replproto.FeedConn, id int, ip string, port int) *feed {
	f := &feed{m: m, conn: conn, id: id, ip: ip, port: port, n: m.shards.N(),
		closed: make(chan struct{})}
	f.acked = make([]int64, f.n)
	f.ackAt.Store(time.Now().UnixMilli())
	return f
}

// Frame implements engine.Sink.
func (f *feed) Frame(kind byte, sh int, offset int64, payload []byte) bool {
	if f.dead.Load() {
		return false
	}
	var hdr [frameHdr]byte
	putFrameHdr(hdr[:], kind, sh, offset, len(payload))
	if f.paced != nil {
		pf := pacedFrame{hdr: hdr, payload: append([]byte(nil), payload...)}
		if kind == engine.FrameSnapshot {
			pf.keys = countKeys(payload)
		}
		select {
		case f.paced <- pf:
		case <-f.closed:
			return false
		}
	} else if !f.conn.Write(hdr[:], payload) {
		f.kill("")
		return false
	}
	if kind == engine.FrameSynced && int(f.synced.Add(1)) == f.n {
		f.state.Store(feedOnline)
		f.m.log.Info().Str("replica", f.addr()).Msg("Synchronization with replica succeeded")
	}
	// The loop enforces client-output-buffer-limit at every flush; this
	// catches a loop that cannot keep up with the shards.
	if hard := f.m.replicaHard.Load(); hard > 0 && f.conn.Pending() > hard {
		f.kill("output buffer limit reached")
		return false
	}
	return true
}

// send writes a frame that belongs to no shard's order (ping, GETACK,
// publish).
func (f *feed) send(kind byte, payload []byte) {
	if f.Frame(kind, 0, 0, payload) && kind == frameGetAck {
		f.conn.Flush() // WAIT is waiting: no coalescing delay
	}
}

func (f *feed) kill(why string) {
	if f.dead.Swap(true) {
		return
	}
	if why != "" {
		f.m.log.Warn().Str("replica", f.addr()).Msg("Closing replica: " + why)
	}
	f.conn.Close()
}

// gone runs once the connection is closed.
func (f *feed) gone() {
	f.once.Do(func() {
		f.dead.Store(true)
		close(f.closed)
		f.m.removeFeed(f)
	})
}

func (f *feed) addr() string {
	return f.ip + ":" + itoa(f.port)
}

// ack records the replica's acknowledged offsets.
func (f *feed) ack(v []int64) {
	f.ackAt.Store(time.Now().UnixMilli())
	if len(v) != f.n {
		return
	}
	f.mu.Lock()
	copy(f.acked, v)
	f.mu.Unlock()
}

func (f *feed) ackedVec() []int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int64(nil), f.acked...)
}

// Snapshot pacing: a round asks every unfinished shard for about
// snapBudget bytes, and rounds wait while the connection has more than
// snapLowWater bytes queued.
const (
	snapBudget   = 256 << 10
	snapLowWater = 1 << 20
)

// fullSync drives the snapshots of a full sync, shard by shard, slot by
// slot, paced by how fast the replica reads.
func (f *feed) fullSync() {
	todo := make([]int, f.n)
	for i := range todo {
		todo[i] = i
	}
	type step struct {
		i    int
		done bool
	}
	replies := make(chan step, f.n)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for len(todo) > 0 {
		for f.conn.Pending() > snapLowWater {
			f.conn.Refresh()
			select {
			case <-f.closed:
				return
			case <-tick.C:
			}
		}
		for _, i := range todo {
			f.m.shards.Snapshot(i, f, snapBudget, func(done bool) { replies <- step{i, done} })
		}
		next := todo[:0]
		for range todo {
			var r step
			select {
			case r = <-replies:
			case <-f.closed:
				return
			}
			if !r.done {
				next = append(next, r.i)
			}
		}
		todo = next
		if f.dead.Load() {
			return
		}
	}
}

// pace makes a feed hold each snapshot frame back by its keys times
// rdb-key-save-delay before it goes out (and every later frame behind it),
// as that test knob slows Redis's RDB child; the shards producing the
// frames are not held. Called before the full sync starts.
func (f *feed) pace() {
	if f.m.cfg.Int("rdb-key-save-delay") == 0 {
		return
	}
	f.paced = make(chan pacedFrame, 1<<16)
	go func() {
		for {
			select {
			case pf := <-f.paced:
				persist.KeyDelay(f.m.cfg.Int("rdb-key-save-delay"), pf.keys)
				if !f.conn.Write(pf.hdr[:], pf.payload) {
					f.kill("")
					return
				}
			case <-f.closed:
				return
			}
		}
	}()
}

// countKeys counts the keys of a snapshot frame's records (the records of
// one key follow each other).
func countKeys(payload []byte) int {
	n := 0
	var last []byte
	var args [][]byte
	for len(payload) > 0 {
		_, _, body, rest, ok := engine.NextRecord(payload)
		if !ok {
			break
		}
		payload = rest
		if args, ok = engine.SplitCommand(body, args[:0]); ok && len(args) > 1 && string(args[1]) != string(last) {
			last = append(last[:0], args[1]...)
			n++
		}
	}
	return n
}
