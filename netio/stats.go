package netio

import (
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// RedisVersion is the Redis version slotd reports (HELLO, INFO, the
// start-up banner): clients pick features by it.
const RedisVersion = "7.0.15"

const redisVersion = RedisVersion

// serverExt is the Server state behind INFO, CLIENT and CONFIG RESETSTAT.
type serverExt struct {
	vals       map[any]any  // SetExt
	closedCmds atomic.Int64 // commands run by connections already closed
	cmdBase    atomic.Int64 // command total at the last CONFIG RESETSTAT

	replOnce sync.Once
	replID   string

	memMu   sync.Mutex
	memAt   time.Time
	mem     memSample
	memPeak atomic.Uint64

	instOnce sync.Once
	inst     instSampler
}

// ---- accessors

// Uptime is the time since the server was created.
func (s *Server) Uptime() time.Duration { return time.Since(s.started) }

// RunID is the random id of this server process run (INFO run_id).
func (s *Server) RunID() string { return s.runID }

// ConnectedClients is the number of open client connections.
func (s *Server) ConnectedClients() int64 { return s.stats.clients.Load() }

// TotalCommands is the number of commands received since start (or the
// last CONFIG RESETSTAT).
func (s *Server) TotalCommands() int64 { return s.rawCommands() - s.ext.cmdBase.Load() }

func (s *Server) rawCommands() int64 {
	n := s.ext.closedCmds.Load()
	s.clientMu.Lock()
	for _, cl := range s.clients {
		n += cl.totalCmds.Load()
	}
	s.clientMu.Unlock()
	return n
}

// ReplID is the replication id reported by INFO replication.
func (s *Server) ReplID() string {
	s.ext.replOnce.Do(func() { s.ext.replID = randomHex(40) })
	return s.ext.replID
}

// ResetStats implements CONFIG RESETSTAT for the counters netio and the
// shards keep, then runs the hooks other components registered with
// config.OnResetStat.
func (s *Server) ResetStats() {
	st := &s.stats
	for _, c := range []*atomic.Int64{&st.connsReceived, &st.rejectedConns, &st.commands, &st.netInput,
		&st.netOutput, &st.errorReplies, &st.unexpectedErr} {
		c.Store(0)
	}
	s.ext.cmdBase.Store(s.rawCommands())
	s.cmdStats.Reset()
	s.shards.ResetTotals()
	s.ext.memPeak.Store(0)
	s.ext.inst.reset()
	s.Cfg.ResetStat()
}

// ---- memory

// clientMemory is what the clients' query and output buffers hold:
// normal is the clients' but the replicas', replicas the replicas' (INFO
// mem_clients_normal, mem_clients_slaves), of which replOut is the feed
// queued to them: maxmemory does not count it, as Redis leaves replica
// output out of eviction (mem_not_counted_for_evict).
func (s *Server) clientMemory() (normal, replicas, replOut int64) {
	for _, cl := range s.clientsSnapshot() {
		if cl.killed.Load() {
			continue
		}
		q := max(cl.qbufLen.Load(), 0)
		if f := cl.feed.Load(); f != nil {
			out := max(f.Pending(), 0)
			replicas += q + out
			replOut += out
			continue
		}
		normal += max(q+cl.outputMemory(), 0)
	}
	return normal, replicas, replOut
}

// memCron tells the shards, every 100 ms while the server runs, what the
// clients' buffers hold: maxmemory counts it beside the dataset, as Redis
// counts client buffers in used_memory.
func (s *Server) memCron() {
	s.every(100*time.Millisecond, func() {
		s.coarseMS.Store(time.Now().UnixMilli())
		normal, replicas, replOut := s.clientMemory()
		if n := normal + replicas - replOut; n != s.shards.MemOverhead() {
			s.shards.SetMemOverhead(n)
		}
	})
}

// every calls fn every d until the server stops.
func (s *Server) every(d time.Duration, fn func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-s.stopped:
			return
		case <-t.C:
			fn()
		}
	}
}

type memSample struct {
	heap  uint64 // bytes in live and not yet swept heap objects
	total uint64 // bytes mapped by the Go runtime
	rss   uint64
}

var memMetrics = []string{"/memory/classes/heap/objects:bytes", "/memory/classes/total:bytes"}

// memory returns a memory sample at most 100 ms old. runtime/metrics does
// not stop the world, but /proc reads are not free either.
func (s *Server) memory() memSample {
	e := &s.ext
	e.memMu.Lock()
	defer e.memMu.Unlock()
	if time.Since(e.memAt) < 100*time.Millisecond {
		return e.mem
	}
	ms := make([]metrics.Sample, len(memMetrics))
	for i, n := range memMetrics {
		ms[i].Name = n
	}
	metrics.Read(ms)
	var m memSample
	if ms[0].Value.Kind() == metrics.KindUint64 {
		m.heap = ms[0].Value.Uint64()
	}
	if ms[1].Value.Kind() == metrics.KindUint64 {
		m.total = ms[1].Value.Uint64()
	}
	m.rss = processRSS()
	e.mem, e.memAt = m, time.Now()
	return m
}

// ---- instantaneous metrics

// instSampler keeps Redis's 16 samples, taken every 100 ms, of the rate of
// commands and network bytes.
type instSampler struct {
	mu              sync.Mutex
	at              time.Time // last sample; zero before the first
	cmds, in, out   int64     // counters at the last sample
	idx             int
	opsS, inS, outS [16]float64
}

func (i *instSampler) reset() {
	i.mu.Lock()
	i.opsS, i.inS, i.outS = [16]float64{}, [16]float64{}, [16]float64{}
	i.at = time.Time{}
	i.mu.Unlock()
}

func (s *Server) sample() {
	i := &s.ext.inst
	now := time.Now()
	cmds, in, out := s.rawCommands(), s.stats.netInput.Load(), s.stats.netOutput.Load()
	i.mu.Lock()
	defer i.mu.Unlock()
	if !i.at.IsZero() {
		dt := now.Sub(i.at).Seconds()
		if dt > 0 {
			i.opsS[i.idx] = float64(max(cmds-i.cmds, 0)) / dt
			i.inS[i.idx] = float64(max(in-i.in, 0)) / dt / 1024
			i.outS[i.idx] = float64(max(out-i.out, 0)) / dt / 1024
			i.idx = (i.idx + 1) % len(i.opsS)
		}
	}
	i.at, i.cmds, i.in, i.out = now, cmds, in, out
}

// startSampler starts the 100 ms sampler on the first INFO; it ends with
// the server.
func (s *Server) startSampler() {
	s.ext.instOnce.Do(func() {
		s.sample()
		go s.every(100*time.Millisecond, s.sample)
	})
}

func (s *Server) instantaneous() (ops, inKbps, outKbps float64) {
	i := &s.ext.inst
	i.mu.Lock()
	defer i.mu.Unlock()
	for k := range i.opsS {
		ops += i.opsS[k]
		inKbps += i.inS[k]
		outKbps += i.outS[k]
	}
	n := float64(len(i.opsS))
	return ops / n, inKbps / n, outKbps / n
}

// ---- what INFO reads (netio/infocmd)

// MemSample is a memory sample (Memory): the dataset's charge (the
// shards' count of what their entries hold), the clients' query and output
// buffers, their sum Used and its peak since start (or CONFIG RESETSTAT);
// and from the Go runtime, at most 100 ms old: heap objects, what the
// runtime mapped, the resident set size.
type MemSample struct {
	Used, Dataset, Clients, Peak uint64
	// Replicas is the replicas' share of Clients, ReplOut their output
	// (not counted for maxmemory).
	Replicas, ReplOut uint64
	Heap, Total, RSS  uint64
}

// Memory returns a memory sample.
func (s *Server) Memory() MemSample {
	m := s.memory()
	out := MemSample{Heap: m.heap, Total: m.total, RSS: m.rss}
	out.Dataset = uint64(max(s.shards.UsedMemory(), 0))
	normal, replicas, replOut := s.clientMemory()
	out.Clients, out.Replicas, out.ReplOut = uint64(normal+replicas), uint64(replicas), uint64(replOut)
	out.Used = out.Dataset + out.Clients
	for {
		p := s.ext.memPeak.Load()
		if out.Used <= p || s.ext.memPeak.CompareAndSwap(p, out.Used) {
			out.Peak = max(p, out.Used)
			break
		}
	}
	return out
}

// ConnStats are the server-wide connection and network counters.
type ConnStats struct {
	ConnsReceived, RejectedConns, NetInput, NetOutput, UnexpectedErrors int64
}

// ConnStats returns the server-wide connection and network counters.
func (s *Server) ConnStats() ConnStats {
	st := &s.stats
	return ConnStats{ConnsReceived: st.connsReceived.Load(), RejectedConns: st.rejectedConns.Load(),
		NetInput: st.netInput.Load(), NetOutput: st.netOutput.Load(), UnexpectedErrors: st.unexpectedErr.Load()}
}

// StartSampler starts the 100 ms sampler of the instantaneous metrics (on
// the first INFO); it ends with the server.
func (s *Server) StartSampler() { s.startSampler() }

// Instantaneous is the mean of the last 16 samples of commands per second
// and network kilobytes per second in and out.
func (s *Server) Instantaneous() (ops, inKbps, outKbps float64) { return s.instantaneous() }

// ClientBuffers is the largest input buffer and output memory of the
// connected clients.
func (s *Server) ClientBuffers() (maxIn, maxOut int64) {
	for _, cl := range s.clientsSnapshot() {
		maxIn = max(maxIn, cl.qbufLen.Load())
		maxOut = max(maxOut, cl.outputMemory())
	}
	return maxIn, maxOut
}

// MaxClients is the maxclients limit in force.
func (s *Server) MaxClients() int64 { return s.maxClients.Load() }

// BlockedClients counts the parked commands and the SHUTDOWNs waiting
// for replicas.
func (s *Server) BlockedClients() int64 { return s.shards.BlockedClients() + s.shut.waiting.Load() }

// TrackingClients is the number of clients with CLIENT TRACKING on.
func (s *Server) TrackingClients() int64 { return s.trackingClients() }

// TrackingTotals returns the keys, items and prefixes in the tracking
// tables (INFO stats tracking_total_*).
func (s *Server) TrackingTotals() (keys, items, prefixes int64) { return s.trackingTotals() }

// PubsubCounts is the number of channels, patterns and shard channels
// with subscribers.
func (s *Server) PubsubCounts() (channels, patterns, shardChannels int) {
	return s.ps.count(psChannel), s.ps.count(psPattern), s.ps.count(psShard)
}

// ReplGate returns the replproto.Gate* bits the replication engine set.
func (s *Server) ReplGate() uint32 { return s.replGate.Load() }

// ShutdownIn is the time left of a SHUTDOWN's wait for replicas, if one
// is in progress (INFO shutdown_in_milliseconds).
func (s *Server) ShutdownIn() (ms int64, ok bool) { return s.shutdownIn() }

// ClusterMode reports cluster-enabled.
func (s *Server) ClusterMode() bool { return s.clusterMode() }
