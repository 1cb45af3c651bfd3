package infocmd

import (
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slotd/slotd/netio"
	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/replproto"
)

func registerInfo() {
	command.Register(netio.Loop(&command.Spec{Name: "info", Arity: -1, Flags: []string{"loading", "stale"},
		Categories: []string{"slow", "dangerous"},
		Tips:       []string{"nondeterministic_output", "request_policy:all_shards", "response_policy:special"},
		Group:      "server", Since: "1.0.0", Summary: "Get information and statistics about the server"}, cmdInfo))
}

// infoSections are Redis 7.0's sections in output order.
var infoSections = []string{"server", "clients", "memory", "persistence", "stats", "replication", "cpu",
	"modules", "commandstats", "errorstats", "latencystats", "cluster", "keyspace"}

// pickSections returns the requested sections: "default" (also when none
// is named), "all", "everything", or section names; unknown names are
// ignored, as Redis does.
func pickSections(args [][]byte) map[string]bool {
	want := map[string]bool{}
	addDefault := func() {
		for _, n := range infoSections {
			if n != "commandstats" && n != "latencystats" {
				want[n] = true
			}
		}
	}
	if len(args) == 0 {
		addDefault()
		return want
	}
	for _, a := range args {
		n := strings.ToLower(string(a))
		switch n {
		case "default":
			addDefault()
		case "all", "everything":
			for _, n := range infoSections {
				want[n] = true
			}
		default:
			want[n] = true
		}
	}
	return want
}

type infoText struct {
	b []byte
	n int
}

func (t *infoText) section(name string) {
	if t.n > 0 {
		t.b = append(t.b, '\r', '\n')
	}
	t.n++
	t.b = append(t.b, "# "...)
	t.b = append(t.b, name...)
	t.b = append(t.b, '\r', '\n')
}

func (t *infoText) str(k, v string) {
	t.b = append(t.b, k...)
	t.b = append(t.b, ':')
	t.b = append(t.b, v...)
	t.b = append(t.b, '\r', '\n')
}

func (t *infoText) int(k string, v int64) { t.str(k, strconv.FormatInt(v, 10)) }

func (t *infoText) float(k string, v float64, prec int) {
	t.str(k, strconv.FormatFloat(v, 'f', prec, 64))
}

// cmdInfo implements INFO [section ...]. Everything but the keyspace is read
// on the loop; key counts come from the shards themselves, so with the
// keyspace section the reply is deferred until every shard has answered.
func cmdInfo(x *netio.Ctx) {
	s := x.S
	s.StartSampler()
	want := pickSections(x.Args[1:])
	t := &infoText{}
	infoBody(s, t, want)
	if !want["keyspace"] {
		x.W.Verbatim(string(t.b))
		return
	}
	t.section("Keyspace")
	x.Defer(func(d *netio.Deferred) {
		n := s.Shards().N()
		type dbSum struct {
			keys, expires int64
			ttlWeight     float64 // Σ mean sampled TTL × volatile keys, over sampled shards
			ttlKeys       int64
		}
		var (
			mu        sync.Mutex
			sums      []dbSum
			remaining = n
		)
		for i := 0; i < n; i++ {
			s.Shards().CountKeys(i, time.Now().UnixMilli(), func(perDB [][4]int64) {
				mu.Lock()
				if len(sums) < len(perDB) {
					sums = append(sums, make([]dbSum, len(perDB)-len(sums))...)
				}
				for db, c := range perDB {
					sum := &sums[db]
					sum.keys += c[0]
					sum.expires += c[1]
					if c[3] > 0 {
						sum.ttlWeight += float64(c[2]) / float64(c[3]) * float64(c[1])
						sum.ttlKeys += c[1]
					}
				}
				remaining--
				last := remaining == 0
				mu.Unlock()
				if !last {
					return
				}
				for db, sum := range sums {
					if sum.keys == 0 {
						continue
					}
					avg := int64(0)
					if sum.ttlKeys > 0 {
						avg = int64(sum.ttlWeight / float64(sum.ttlKeys))
					}
					t.str("db"+strconv.Itoa(db), "keys="+strconv.FormatInt(sum.keys, 10)+",expires="+
						strconv.FormatInt(sum.expires, 10)+",avg_ttl="+strconv.FormatInt(avg, 10))
				}
				d.W.Verbatim(string(t.b))
				d.Done()
			})
		}
	})
}

// infoBody writes every wanted section except the keyspace.
func infoBody(s *netio.Server, t *infoText, want map[string]bool) {
	now := time.Now()
	cluster := s.ClusterMode()
	if want["server"] {
		t.section("Server")
		mode := "standalone"
		if cluster {
			mode = "cluster"
		}
		t.str("redis_version", netio.RedisVersion)
		t.str("redis_git_sha1", "00000000")
		t.str("redis_git_dirty", "0")
		t.str("redis_build_id", "0")
		t.str("redis_mode", mode)
		t.str("os", osName())
		t.int("arch_bits", int64(strconv.IntSize))
		t.str("monotonic_clock", "POSIX clock_gettime")
		t.str("multiplexing_api", multiplexingAPI())
		t.str("atomicvar_api", "go-atomic")
		t.str("gcc_version", "0.0.0")
		t.str("go_version", runtime.Version())
		t.int("process_id", int64(os.Getpid()))
		t.str("process_supervised", "no")
		t.str("run_id", s.RunID())
		t.int("tcp_port", s.Cfg.Int("port"))
		t.int("server_time_usec", now.UnixMicro())
		up := int64(now.Sub(s.Started()).Seconds())
		t.int("uptime_in_seconds", up)
		t.int("uptime_in_days", up/86400)
		t.int("hz", s.Cfg.Int("hz"))
		t.int("configured_hz", s.Cfg.Int("hz"))
		t.int("lru_clock", now.Unix()&(1<<24-1))
		exe, _ := os.Executable()
		t.str("executable", exe)
		t.str("config_file", s.Cfg.File())
		t.int("io_threads_active", 0)
		if ms, ok := s.ShutdownIn(); ok {
			t.int("shutdown_in_milliseconds", ms)
		}
	}
	if want["clients"] {
		t.section("Clients")
		maxIn, maxOut := s.ClientBuffers()
		t.int("connected_clients", s.ConnectedClients())
		t.int("cluster_connections", 0)
		t.int("maxclients", s.MaxClients())
		t.int("client_recent_max_input_buffer", maxIn)
		t.int("client_recent_max_output_buffer", maxOut)
		t.int("blocked_clients", s.BlockedClients())
		t.int("tracking_clients", s.TrackingClients())
		t.int("clients_in_timeout_table", 0)
	}
	if want["memory"] {
		t.section("Memory")
		m := s.Memory()
		maxmem := uint64(s.Cfg.Int("maxmemory"))
		sys := totalSystemMemory()
		t.int("used_memory", int64(m.Used))
		t.str("used_memory_human", bytesToHuman(m.Used))
		t.int("used_memory_rss", int64(m.RSS))
		t.str("used_memory_rss_human", bytesToHuman(m.RSS))
		t.int("used_memory_peak", int64(m.Peak))
		t.str("used_memory_peak_human", bytesToHuman(m.Peak))
		t.str("used_memory_peak_perc", strconv.FormatFloat(percent(m.Used, m.Peak), 'f', 2, 64)+"%")
		t.int("used_memory_overhead", int64(m.Clients))
		t.int("used_memory_startup", 0)
		t.int("used_memory_dataset", int64(m.Dataset))
		t.str("used_memory_dataset_perc", strconv.FormatFloat(percent(m.Dataset, m.Used), 'f', 2, 64)+"%")
		t.int("allocator_allocated", int64(m.Heap))
		t.int("allocator_active", int64(m.Total))
		t.int("allocator_resident", int64(m.RSS))
		t.int("total_system_memory", int64(sys))
		t.str("total_system_memory_human", bytesToHuman(sys))
		t.int("maxmemory", int64(maxmem))
		t.str("maxmemory_human", bytesToHuman(maxmem))
		t.str("maxmemory_policy", s.Cfg.String("maxmemory-policy"))
		frag := 0.0
		if m.Used > 0 {
			frag = float64(m.RSS) / float64(m.Used)
		}
		t.float("mem_fragmentation_ratio", frag, 2)
		t.int("mem_fragmentation_bytes", int64(m.RSS)-int64(m.Used))
		t.int("mem_not_counted_for_evict", int64(m.ReplOut))
		t.int("mem_clients_slaves", int64(m.Replicas))
		t.int("mem_clients_normal", int64(m.Clients-m.Replicas))
		t.str("mem_allocator", "go-"+runtime.Version())
		t.int("lazyfree_pending_objects", 0)
		t.int("lazyfreed_objects", 0)
	}
	if want["persistence"] && s.Persist != nil {
		t.section("Persistence")
		for _, kv := range s.Persist.Info() {
			if kv[0] == "loading" && s.ReplGate()&replproto.GateLoading != 0 {
				kv[1] = "1" // a replica's full sync
			}
			if kv[0] == "async_loading" && s.ReplGate()&replproto.GateAsyncLoading != 0 {
				kv[1] = "1"
			}
			t.str(kv[0], kv[1])
		}
	} else if want["persistence"] {
		t.section("Persistence")
		loading := int64(0)
		if s.ReplGate()&replproto.GateLoading != 0 {
			loading = 1 // a replica's full sync
		}
		t.int("loading", loading)
		async := int64(0)
		if s.ReplGate()&replproto.GateAsyncLoading != 0 {
			async = 1
		}
		t.int("async_loading", async)
		for _, k := range []string{"current_cow_peak", "current_cow_size",
			"current_cow_size_age"} {
			t.int(k, 0)
		}
		t.str("current_fork_perc", "0.00")
		for _, k := range []string{"current_save_keys_processed", "current_save_keys_total",
			"rdb_changes_since_last_save", "rdb_bgsave_in_progress"} {
			t.int(k, 0)
		}
		t.int("rdb_last_save_time", s.Started().Unix())
		t.str("rdb_last_bgsave_status", "ok")
		t.int("rdb_last_bgsave_time_sec", -1)
		t.int("rdb_current_bgsave_time_sec", -1)
		for _, k := range []string{"rdb_saves", "rdb_last_cow_size", "rdb_last_load_keys_expired",
			"rdb_last_load_keys_loaded", "aof_enabled", "aof_rewrite_in_progress", "aof_rewrite_scheduled"} {
			t.int(k, 0)
		}
		t.int("aof_last_rewrite_time_sec", -1)
		t.int("aof_current_rewrite_time_sec", -1)
		t.str("aof_last_bgrewrite_status", "ok")
		t.int("aof_rewrites", 0)
		t.int("aof_rewrites_consecutive_failures", 0)
		t.str("aof_last_write_status", "ok")
		t.int("aof_last_cow_size", 0)
		t.int("module_fork_in_progress", 0)
		t.int("module_fork_last_cow_size", 0)
	}
	if want["stats"] {
		t.section("Stats")
		hits, misses, expired, _, _ := s.Shards().Totals()
		ops, inK, outK := s.Instantaneous()
		cs := s.ConnStats()
		t.int("total_connections_received", cs.ConnsReceived)
		t.int("total_commands_processed", s.TotalCommands())
		t.int("instantaneous_ops_per_sec", int64(ops))
		t.int("total_net_input_bytes", cs.NetInput)
		t.int("total_net_output_bytes", cs.NetOutput)
		t.int("total_net_repl_input_bytes", 0)
		t.int("total_net_repl_output_bytes", 0)
		t.float("instantaneous_input_kbps", inK, 2)
		t.float("instantaneous_output_kbps", outK, 2)
		t.str("instantaneous_input_repl_kbps", "0.00")
		t.str("instantaneous_output_repl_kbps", "0.00")
		t.int("rejected_connections", cs.RejectedConns)
		// slotd's own: panics contained (a command answered with
		// "ERR internal error", or a connection closed) since start.
		t.int("contained_panics", s.Panics())
		var full, pok, perr int64
		if s.Repl != nil {
			full, pok, perr = s.Repl.SyncStats()
		}
		t.int("sync_full", full)
		t.int("sync_partial_ok", pok)
		t.int("sync_partial_err", perr)
		t.int("expired_keys", expired)
		t.str("expired_stale_perc", "0.00")
		t.int("expired_time_cap_reached_count", 0)
		t.int("expire_cycle_cpu_milliseconds", 0)
		t.int("evicted_keys", s.Shards().Evicted())
		t.int("evicted_clients", 0)
		t.int("total_eviction_exceeded_time", 0)
		t.int("current_eviction_exceeded_time", 0)
		t.int("keyspace_hits", hits)
		t.int("keyspace_misses", misses)
		chans, pats, shardChans := s.PubsubCounts()
		t.int("pubsub_channels", int64(chans))
		t.int("pubsub_patterns", int64(pats))
		t.int("pubsubshard_channels", int64(shardChans))
		t.int("latest_fork_usec", 0)
		t.int("total_forks", 0)
		t.int("migrate_cached_sockets", 0)
		t.int("slave_expires_tracked_keys", 0)
		t.int("active_defrag_hits", 0)
		t.int("active_defrag_misses", 0)
		t.int("active_defrag_key_hits", 0)
		t.int("active_defrag_key_misses", 0)
		t.int("total_active_defrag_time", 0)
		t.int("current_active_defrag_time", 0)
		tk, ti, tp := s.TrackingTotals()
		t.int("tracking_total_keys", tk)
		t.int("tracking_total_items", ti)
		t.int("tracking_total_prefixes", tp)
		t.int("unexpected_error_replies", cs.UnexpectedErrors)
		t.int("total_error_replies", s.CmdStats().TotalErrors())
		t.int("dump_payload_sanitizations", 0)
	}
	if want["replication"] {
		t.section("Replication")
		if s.Repl != nil {
			for _, kv := range s.Repl.Info() {
				t.str(kv[0], kv[1])
			}
		} else {
			t.str("role", "master")
			t.int("connected_slaves", 0)
			t.str("master_failover_state", "no-failover")
			t.str("master_replid", s.ReplID())
			t.str("master_replid2", strings.Repeat("0", 40))
			t.int("master_repl_offset", 0)
			t.int("second_repl_offset", -1)
			t.int("repl_backlog_active", 0)
			t.int("repl_backlog_size", s.Cfg.Int("repl-backlog-size"))
			t.int("repl_backlog_first_byte_offset", 0)
			t.int("repl_backlog_histlen", 0)
		}
	}
	if want["cpu"] {
		t.section("CPU")
		sys, user, csys, cuser := cpuTimes()
		t.float("used_cpu_sys", sys, 6)
		t.float("used_cpu_user", user, 6)
		t.float("used_cpu_sys_children", csys, 6)
		t.float("used_cpu_user_children", cuser, 6)
	}
	if want["modules"] {
		t.section("Modules")
	}
	if want["commandstats"] {
		t.section("Commandstats")
		for _, c := range s.CmdStats().Commands() {
			perCall := 0.0
			if c.Calls > 0 {
				perCall = float64(c.USec) / float64(c.Calls)
			}
			t.str("cmdstat_"+c.Name, "calls="+strconv.FormatInt(c.Calls, 10)+",usec="+strconv.FormatInt(c.USec, 10)+
				",usec_per_call="+strconv.FormatFloat(perCall, 'f', 2, 64)+",rejected_calls="+
				strconv.FormatInt(c.Rejected, 10)+",failed_calls="+strconv.FormatInt(c.Failed, 10))
		}
	}
	if want["errorstats"] {
		t.section("Errorstats")
		for _, e := range s.CmdStats().Errors() {
			t.str("errorstat_"+e.Code, "count="+strconv.FormatInt(e.Count, 10))
		}
	}
	if want["latencystats"] {
		t.section("Latencystats")
		latencyStats(s, t)
	}
	if want["cluster"] {
		t.section("Cluster")
		c := int64(0)
		if cluster {
			c = 1
		}
		t.int("cluster_enabled", c)
	}
}

func percent(a, b uint64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) * 100 / float64(b)
}

// bytesToHuman formats n like Redis's INFO *_human fields.
func bytesToHuman(n uint64) string {
	const units = "KMGTPE"
	if n < 1024 {
		return strconv.FormatUint(n, 10) + "B"
	}
	d := float64(n)
	i := -1
	for d >= 1024 && i < len(units)-1 {
		d /= 1024
		i++
	}
	return strconv.FormatFloat(d, 'f', 2, 64) + string(units[i])
}

// latencyStats writes latency_percentiles_usec_<command> for every command
// (subcommands by their full name) with samples, at the
// latency-tracking-info-percentiles, while latency-tracking is on.
func latencyStats(s *netio.Server, t *infoText) {
	st := s.CmdStats()
	if !st.Tracking() {
		return
	}
	var pcts []float64
	for _, w := range strings.Fields(s.Cfg.String("latency-tracking-info-percentiles")) {
		if f, err := strconv.ParseFloat(w, 64); err == nil {
			pcts = append(pcts, f)
		}
	}
	line := func(c *command.Spec) {
		if h := st.HistogramOf(c); h != nil {
			t.str("latency_percentiles_usec_"+c.Name, h.PercentileLine(pcts))
		}
	}
	for _, c := range command.All() {
		line(c)
		names := make([]string, 0, len(c.Subcommands))
		for n := range c.Subcommands {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			line(c.Subcommands[n])
		}
	}
}
