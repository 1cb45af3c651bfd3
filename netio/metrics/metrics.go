// Package metrics owns the opt-in HTTP port of a node (metrics-port, on
// the bind addresses; off by default): Prometheus's /metrics in the text
// exposition format, and the live cluster page (/, view.go). Every value is read when a scrape asks for it —
// atomic counters, the shard actors' mailbox counters, one request to the
// cluster actor — so a scrape never stops the world (no
// runtime.ReadMemStats; memory comes from runtime/metrics and /proc) and
// costs nothing between scrapes. Handling-time histograms are the one
// per-message cost: two clock reads per actor message while the port is
// open.
package metrics

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/slotd/slotd/actors/cluster"
	"github.com/slotd/slotd/actors/persist"
	"github.com/slotd/slotd/actors/repl"
	"github.com/slotd/slotd/actors/shard"
	"github.com/slotd/slotd/actors/trace"
	"github.com/slotd/slotd/bus"
	"github.com/slotd/slotd/netio"
	"github.com/slotd/slotd/slots"
)

// Sources are the components a node's metrics are read from. Server,
// Shards and Meter are required; the others are nil when the node has no
// such component (Cluster on a standalone node).
type Sources struct {
	Server *netio.Server
	Shards *shard.Group
	Meter  *trace.Meter
	Repl   *repl.Manager
	// Persist reports persistence, the AOF's fields included.
	Persist *persist.Manager
	// Cluster returns the cluster actor, nil on a standalone node (it is
	// started after the metrics registry is made).
	Cluster func() *cluster.Cluster
}

// ClusterTimeout bounds a scrape's wait for the cluster actor; a busy or
// frozen actor (DEBUG SLEEP) leaves the cluster metrics out of that scrape.
const ClusterTimeout = 500 * time.Millisecond

// handlingBuckets span 1 µs to 1 s (×4 per bucket).
var handlingBuckets = prometheus.ExponentialBuckets(1e-6, 4, 11)

// NewRegistry builds the registry of a node's metrics and switches the
// meter's handling-time measurement on.
func NewRegistry(src Sources) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	hist := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "slotd_actor_handling_seconds",
		Help:    "Time an actor spent handling one message, by actor kind and actor (peer links together).",
		Buckets: handlingBuckets,
	}, []string{"kind", "actor"})
	reg.MustRegister(hist, &collector{src: src},
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	src.Meter.SetTiming(func(kind, id string) trace.Observer {
		if kind == "peer" {
			id = "peer" // one per link: link ids never repeat
		}
		return hist.WithLabelValues(kind, id)
	})
	return reg
}

// Server is the HTTP server of the metrics port.
type Server struct {
	srv *http.Server
	lns []net.Listener
	wg  sync.WaitGroup
}

// Listen serves, on addrs ("host:port") until Close, reg's /metrics and
// the cluster page of src (view.go).
func Listen(addrs []string, reg *prometheus.Registry, src Sources) (*Server, error) {
	h := NewHandler(promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}), src)
	s := &Server{srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}}
	for _, a := range addrs {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.lns = append(s.lns, ln)
	}
	if len(s.lns) == 0 {
		return nil, errors.New("no address to listen on")
	}
	for _, ln := range s.lns {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			_ = s.srv.Serve(ln)
		}()
	}
	return s, nil
}

// Addrs are the addresses the server listens on.
func (s *Server) Addrs() []net.Addr {
	out := make([]net.Addr, len(s.lns))
	for i, ln := range s.lns {
		out[i] = ln.Addr()
	}
	return out
}

// Close stops the listeners and the open scrapes.
func (s *Server) Close() {
	_ = s.srv.Close()
	for _, ln := range s.lns {
		_ = ln.Close()
	}
	s.wg.Wait()
}

// collector reads every slotd metric at scrape time. It is an unchecked
// collector: the metric set follows the node (shards, links, replicas).
type collector struct{ src Sources }

// Describe implements prometheus.Collector (unchecked: describes nothing).
func (*collector) Describe(chan<- *prometheus.Desc) {}

// out emits const metrics.
type out struct{ ch chan<- prometheus.Metric }

func (o out) emit(name, help string, t prometheus.ValueType, v float64, labels ...string) {
	var keys, vals []string
	for i := 0; i+1 < len(labels); i += 2 {
		keys, vals = append(keys, labels[i]), append(vals, labels[i+1])
	}
	d := prometheus.NewDesc(name, help, keys, nil)
	o.ch <- prometheus.MustNewConstMetric(d, t, v, vals...)
}

func (o out) gauge(name, help string, v float64, labels ...string) {
	o.emit(name, help, prometheus.GaugeValue, v, labels...)
}

func (o out) counter(name, help string, v float64, labels ...string) {
	o.emit(name, help, prometheus.CounterValue, v, labels...)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Collect implements prometheus.Collector.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	o := out{ch}
	c.actors(o)
	c.shards(o)
	c.clients(o)
	c.memory(o)
	c.persistence(o)
	c.replication(o)
	if c.src.Cluster != nil {
		if cl := c.src.Cluster(); cl != nil {
			c.cluster(o, cl)
		}
	}
}

func (c *collector) actors(o out) {
	for _, d := range c.src.Meter.Depths() {
		o.gauge("slotd_actor_mailbox_depth", "Messages waiting in an actor's mailbox.", float64(d.Depth),
			"kind", d.Kind, "actor", d.ID)
	}
}

func (c *collector) shards(o out) {
	g := c.src.Shards
	n := g.N()
	keys := make([]int64, n)
	for slot := 0; slot < slots.NumSlots; slot++ {
		keys[g.Of(slot)] += g.SlotKeys(slot)
	}
	for i := 0; i < n; i++ {
		id := strconv.Itoa(i)
		st := &g.Shard(i).Stats
		o.counter("slotd_shard_commands_total", "Commands a shard actor executed.", float64(st.Commands.Load()), "shard", id)
		o.gauge("slotd_shard_keys", "Keys held by a shard actor.", float64(keys[i]), "shard", id)
		o.counter("slotd_shard_keyspace_hits_total", "Key lookups that found the key.", float64(st.Hits.Load()), "shard", id)
		o.counter("slotd_shard_keyspace_misses_total", "Key lookups that did not find the key.",
			float64(st.Misses.Load()), "shard", id)
		o.counter("slotd_shard_expired_keys_total", "Keys deleted because their TTL passed.",
			float64(st.Expired.Load()), "shard", id)
	}
	o.gauge("slotd_dirty_changes", "Writes since the last snapshot (rdb_changes_since_last_save).", float64(g.Dirty()))
}

func (c *collector) clients(o out) {
	s := c.src.Server.ClientStats()
	o.gauge("slotd_connected_clients", "Open client connections.", float64(s.Clients))
	o.gauge("slotd_blocked_clients", "Clients waiting in a blocking command.", float64(s.Blocked))
	o.gauge("slotd_max_clients", "The maxclients limit.", float64(s.MaxClients))
	o.counter("slotd_connections_received_total", "Client connections accepted.", float64(s.ConnsReceived))
	o.counter("slotd_rejected_connections_total", "Client connections refused (maxclients).", float64(s.RejectedConns))
	o.counter("slotd_net_input_bytes_total", "Bytes read from clients.", float64(s.NetInput))
	o.counter("slotd_net_output_bytes_total", "Bytes written to clients.", float64(s.NetOutput))
	o.counter("slotd_commands_processed_total", "Commands received from clients.", float64(s.Commands))
	o.counter("slotd_error_replies_total", "Error replies sent to clients.", float64(s.ErrorReplies))
	o.gauge("slotd_pubsub_channels", "Channels with subscribers.", float64(s.PubSubChannels))
	o.gauge("slotd_pubsub_patterns", "Subscribed patterns.", float64(s.PubSubPatterns))
	o.gauge("slotd_pubsub_shard_channels", "Shard channels with subscribers.", float64(s.ShardChannels))
	for _, st := range c.src.Server.CmdStats().Commands() {
		o.counter("slotd_command_calls_total", "Calls of a command (INFO commandstats).", float64(st.Calls), "cmd", st.Name)
		o.counter("slotd_command_seconds_total", "Time spent executing a command.", float64(st.USec)/1e6, "cmd", st.Name)
		o.counter("slotd_command_failed_calls_total", "Calls of a command that failed.", float64(st.Failed), "cmd", st.Name)
		o.counter("slotd_command_rejected_calls_total", "Calls of a command refused before running.",
			float64(st.Rejected), "cmd", st.Name)
	}
}

// runtimeMetrics are the runtime/metrics samples the memory metrics read
// (runtime/metrics does not stop the world).
var runtimeMetrics = [...]struct{ sample, name, help string }{
	{"/memory/classes/heap/objects:bytes", "slotd_memory_used_bytes", "Bytes in live and not yet swept heap objects (used_memory)."},
	{"/memory/classes/total:bytes", "slotd_memory_mapped_bytes", "Bytes mapped by the Go runtime."},
	{"/sched/goroutines:goroutines", "slotd_goroutines", "Live goroutines."},
	{"/gc/cycles/total:gc-cycles", "slotd_gc_cycles_total", "Completed GC cycles."},
}

func (c *collector) memory(o out) {
	ms := make([]metrics.Sample, len(runtimeMetrics))
	for i, m := range runtimeMetrics {
		ms[i].Name = m.sample
	}
	metrics.Read(ms)
	for i, m := range runtimeMetrics {
		if ms[i].Value.Kind() != metrics.KindUint64 {
			continue
		}
		v := float64(ms[i].Value.Uint64())
		if strings.HasSuffix(m.name, "_total") {
			o.counter(m.name, m.help, v)
		} else {
			o.gauge(m.name, m.help, v)
		}
	}
}

// persistField is the metric of one INFO persistence field: a number, or
// (status) 1 when the field says "ok".
type persistField struct {
	name, help string
	counter    bool
	status     bool
}

var persistFields = map[string]persistField{
	"loading":                   {"slotd_loading", "1 while the dataset is loading.", false, false},
	"rdb_bgsave_in_progress":    {"slotd_rdb_bgsave_in_progress", "1 while a snapshot is being written.", false, false},
	"rdb_last_save_time":        {"slotd_rdb_last_save_timestamp_seconds", "Unix time of the last successful snapshot.", false, false},
	"rdb_last_bgsave_status":    {"slotd_rdb_last_bgsave_ok", "1 when the last snapshot succeeded.", false, true},
	"rdb_last_bgsave_time_sec":  {"slotd_rdb_last_bgsave_duration_seconds", "Duration of the last snapshot (-1: none).", false, false},
	"rdb_saves":                 {"slotd_rdb_saves_total", "Snapshots written.", true, false},
	"aof_enabled":               {"slotd_aof_enabled", "1 when the append-only file is on.", false, false},
	"aof_rewrite_in_progress":   {"slotd_aof_rewrite_in_progress", "1 while the AOF is being rewritten.", false, false},
	"aof_last_bgrewrite_status": {"slotd_aof_last_rewrite_ok", "1 when the last AOF rewrite succeeded.", false, true},
	"aof_last_write_status":     {"slotd_aof_last_write_ok", "1 when the last AOF write succeeded.", false, true},
	"aof_rewrites":              {"slotd_aof_rewrites_total", "AOF rewrites done.", true, false},
	"aof_current_size":          {"slotd_aof_size_bytes", "Size of the append-only file.", false, false},
}

// persistence maps INFO persistence fields to metrics.
func (c *collector) persistence(o out) {
	if c.src.Persist == nil {
		return
	}
	for _, kv := range c.src.Persist.Info() {
		f, ok := persistFields[kv[0]]
		if !ok {
			continue
		}
		v, _ := strconv.ParseFloat(kv[1], 64)
		if f.status {
			v = b2f(kv[1] == "ok")
		}
		if f.counter {
			o.counter(f.name, f.help, v)
		} else {
			o.gauge(f.name, f.help, v)
		}
	}
}

func (c *collector) replication(o out) {
	r := c.src.Repl
	if r == nil {
		return
	}
	st := r.Status()
	o.gauge("slotd_replication_is_replica", "1 on a replica, 0 on a primary.", b2f(st.Replica))
	o.gauge("slotd_replication_offset_bytes", "Replication offset: produced on a primary, applied on a replica.",
		float64(st.ReplOffset))
	if st.Replica {
		o.gauge("slotd_replication_primary_link_up", "1 while the link to the primary is up.", b2f(st.LinkUp))
		o.gauge("slotd_replication_primary_sync_in_progress", "1 during a full sync from the primary.", b2f(st.Syncing))
		if !st.LastIO.IsZero() {
			o.gauge("slotd_replication_primary_last_io_age_seconds", "Time since the last data from the primary.",
				time.Since(st.LastIO).Seconds())
		}
	}
	full, pok, perr := r.SyncStats()
	o.counter("slotd_replication_full_syncs_total", "Full resyncs served.", float64(full))
	o.counter("slotd_replication_partial_syncs_total", "Partial resyncs accepted.", float64(pok), "result", "ok")
	o.counter("slotd_replication_partial_syncs_total", "Partial resyncs accepted.", float64(perr), "result", "err")
	reps := r.Replicas()
	o.gauge("slotd_replication_connected_replicas", "Replicas connected to this node.", float64(len(reps)))
	var mine int64
	for _, off := range r.Offsets() {
		mine += off
	}
	for _, rp := range reps {
		id := net.JoinHostPort(rp.IP, strconv.Itoa(rp.Port))
		o.gauge("slotd_replication_replica_offset_bytes", "Offset a replica acknowledged.", float64(rp.Offset), "replica", id)
		o.gauge("slotd_replication_replica_lag_bytes", "Bytes produced that a replica has not acknowledged.",
			float64(max(mine-rp.Offset, 0)), "replica", id)
		o.gauge("slotd_replication_replica_ack_age_seconds", "Time since a replica's last acknowledgement.",
			rp.AckAge.Seconds(), "replica", id)
		o.gauge("slotd_replication_replica_online", "1 once a replica has its snapshot.", b2f(rp.Online), "replica", id)
	}
}

func (c *collector) cluster(o out, cl *cluster.Cluster) {
	s, ok := cl.Snapshot(ClusterTimeout)
	o.gauge("slotd_cluster_scrape_ok", "1 when the cluster actor answered this scrape.", b2f(ok))
	if !ok {
		return
	}
	o.gauge("slotd_cluster_state_ok", "1 while cluster_state is ok.", b2f(s.OK))
	o.gauge("slotd_cluster_current_epoch", "The cluster's current epoch as this node knows it.", float64(s.CurrentEpoch))
	o.gauge("slotd_cluster_my_epoch", "This node's config epoch (its primary's on a replica).", float64(s.MyEpoch))
	o.gauge("slotd_cluster_size", "Primaries serving at least one slot.", float64(s.Size))
	o.gauge("slotd_cluster_known_nodes", "Nodes in this node's table.", float64(len(s.Nodes)))
	var pfail, fail int
	for _, n := range s.Nodes {
		role := "primary"
		if n.Flags&bus.FlagSlave != 0 {
			role = "replica"
		}
		state := "ok"
		switch {
		case n.Flags&bus.FlagFail != 0:
			state, fail = "fail", fail+1
		case n.Flags&bus.FlagPFail != 0:
			state, pfail = "pfail", pfail+1
		}
		o.gauge("slotd_cluster_node_config_epoch", "A node's config epoch.", float64(n.ConfigEpoch), "node", n.ID, "role", role)
		o.gauge("slotd_cluster_node_slots", "Slots a node serves.", float64(n.Slots.Count()), "node", n.ID)
		o.gauge("slotd_cluster_node_state", "1 for a node's failure state (ok, pfail, fail).", 1, "node", n.ID, "state", state)
	}
	o.gauge("slotd_cluster_failed_nodes", "Nodes flagged as failing.", float64(pfail), "state", "pfail")
	o.gauge("slotd_cluster_failed_nodes", "Nodes flagged as failing.", float64(fail), "state", "fail")
	for _, l := range s.Links {
		lbl := []string{"link", fmt.Sprint(l.Link), "peer", l.Node, "direction", l.Direction}
		o.gauge("slotd_cluster_link_up", "1 while a bus link is connected.", b2f(l.Connected), lbl...)
		o.counter("slotd_cluster_link_sent_bytes_total", "Bytes written on a bus link.", float64(l.Sent), lbl...)
		o.counter("slotd_cluster_link_received_bytes_total", "Bytes read from a bus link.", float64(l.Received), lbl...)
		o.gauge("slotd_cluster_link_send_buffer_bytes", "Bytes queued on a bus link, not yet written.",
			float64(l.SendBufferUsed), lbl...)
	}
	for i := range s.Stats.Sent {
		t := bus.MsgType(i).String()
		o.counter("slotd_cluster_messages_sent_total", "Bus messages sent, by type.", float64(s.Stats.Sent[i]), "type", t)
		o.counter("slotd_cluster_messages_received_total", "Bus messages received, by type.",
			float64(s.Stats.Received[i]), "type", t)
	}
}
