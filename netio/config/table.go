package config

import "math"

const (
	intMax  = math.MaxInt32
	intMin  = math.MinInt32
	uintMax = math.MaxUint32
	longMax = math.MaxInt64
)

// Bounds of hz: values outside are accepted and clamped, as Redis does.
const (
	minHz = 1
	maxHz = 500
)

func clampHz(n int64) int64 { return min(max(n, minHz), maxHz) }

// directives returns a fresh table of every directive with its Redis 7
// default, bounds and mutability.
func directives() []*directive {
	hz := intD("hz", "10", 0, intMax, 0)
	hz.clamp = clampHz

	dir := specialD("dir", "", protected, parseDir)
	dir.apply = applyDir

	ds := []*directive{
		// network
		intD("port", "6379", 0, 65535, 0),
		specialD("bind", "* -::*", multi, parseBind),
		boolD("protected-mode", "yes", 0),
		intD("tcp-backlog", "511", 0, intMax, immutable),
		intD("timeout", "0", 0, intMax, 0),
		intD("tcp-keepalive", "300", 0, intMax, 0),
		intD("maxclients", "10000", 1, uintMax, 0),
		intD("proto-max-bulk-len", "512mb", 1024*1024, longMax, memory),
		intD("client-query-buffer-limit", "1gb", 1024*1024, longMax, memory),
		specialD("client-output-buffer-limit", "normal 0 0 0 slave 256mb 64mb 60 pubsub 32mb 8mb 60",
			multi, parseOutputBufferLimit),
		strD("requirepass", "", 0, nil),
		intD("io-threads", "1", 1, 128, immutable),

		// general
		boolD("daemonize", "no", immutable),
		strD("pidfile", "", immutable, nil),
		boolD("always-show-logo", "no", immutable),
		enumD("loglevel", "notice", []string{"debug", "verbose", "notice", "warning", "nothing"}, 0),
		strD("logfile", "", immutable, nil),
		intD("databases", "16", 1, intMax, immutable),
		hz,
		intD("active-expire-effort", "1", 1, 10, 0),
		boolD("lazyfree-lazy-user-del", "no", 0),
		specialD("shutdown-on-sigint", "default", multi, parseShutdownOnSig),
		specialD("shutdown-on-sigterm", "default", multi, parseShutdownOnSig),

		// persistence
		specialD("save", "3600 1 300 100 60 10000", multi, parseSave),
		strD("dbfilename", "dump.rdb", protected, checkDBFilename),
		dir,
		boolD("appendonly", "no", 0),
		boolD("stop-writes-on-bgsave-error", "yes", 0),
		enumD("appendfsync", "everysec", []string{"everysec", "always", "no"}, 0),
		strD("appendfilename", "appendonly.aof", immutable, checkAOFFilename),
		strD("appenddirname", "appendonlydir", immutable, checkAOFDirname),

		// memory
		intD("maxmemory", "0", 0, longMax, memory),
		enumD("maxmemory-policy", "noeviction", []string{"volatile-lru", "volatile-lfu", "volatile-random",
			"volatile-ttl", "allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction"}, 0),
		intD("maxmemory-samples", "5", 1, intMax, 0),
		intD("maxmemory-eviction-tenacity", "10", 0, 100, 0),
		intD("lfu-log-factor", "10", 0, intMax, 0),
		intD("lfu-decay-time", "1", 0, intMax, 0),

		// cluster
		boolD("cluster-enabled", "no", immutable),
		strD("cluster-config-file", "nodes.conf", immutable, nil),
		intD("cluster-node-timeout", "15000", 0, longMax, 0),
		// outgoing connections (cluster bus, replication) dial from here
		strD("bind-source-addr", "", 0, nil),
		// a shutdown's wait for lagging replicas (s; netio/shutdown.go)
		intD("shutdown-timeout", "10", 0, intMax, 0),
		// slotd: stop taking writes this long (ms) after the last PONG
		// from a majority, when shorter than cluster-node-timeout (0: the
		// node timeout, the specification's rule; bus/quorum.go)
		intD("cluster-quorum-timeout", "0", 0, longMax, 0),
		intD("cluster-port", "0", 0, 65535, immutable),
		strD("cluster-announce-ip", "", 0, nil),
		intD("cluster-announce-port", "0", 0, 65535, 0),
		intD("cluster-announce-bus-port", "0", 0, 65535, 0),
		strD("cluster-announce-hostname", "", 0, checkHostname),
		enumD("cluster-preferred-endpoint-type", "ip", []string{"ip", "hostname", "unknown-endpoint"}, 0),
		intD("cluster-replica-validity-factor", "10", 0, intMax, 0, "cluster-slave-validity-factor"),
		intD("cluster-migration-barrier", "1", 0, intMax, 0),
		boolD("cluster-require-full-coverage", "yes", 0),
		boolD("cluster-allow-reads-when-down", "no", 0),
		boolD("cluster-replica-no-failover", "no", 0, "cluster-slave-no-failover"),
		boolD("cluster-allow-replica-migration", "yes", 0),
		intD("cluster-link-sendbuf-limit", "0", 0, longMax, memory),

		// replication
		specialD("replicaof", "", immutable|multi, parseReplicaOf, "slaveof"),
		boolD("replica-read-only", "yes", 0, "slave-read-only"),
		boolD("replica-serve-stale-data", "yes", 0, "slave-serve-stale-data"),
		intD("repl-backlog-size", "1mb", 1, longMax, memory),
		enumD("propagation-error-behavior", "ignore", []string{"ignore", "panic", "panic-on-replicas"}, 0),

		// test knobs (hidden from CONFIG GET patterns, as in Redis): a delay
		// per key loaded or saved (µs; negative -n: 1 µs with chance 1/n),
		// and how often a load lets the node answer clients
		intD("key-load-delay", "0", intMin, intMax, hidden),
		intD("rdb-key-save-delay", "0", intMin, intMax, hidden),
		intD("loading-process-events-interval-bytes", "2097152", 1024, intMax, hidden),

		// scripting, slow log, latency, notifications
		intD("lua-time-limit", "5000", 0, longMax, 0, "busy-reply-threshold"),
		intD("slowlog-log-slower-than", "10000", -1, longMax, 0),
		intD("slowlog-max-len", "128", 0, longMax, 0),
		boolD("latency-tracking", "yes", 0),
		specialD("notify-keyspace-events", "", 0, parseNotify),

		// encodings
		intD("hash-max-listpack-entries", "512", 0, longMax, 0, "hash-max-ziplist-entries"),
		intD("list-max-listpack-size", "-2", intMin, intMax, 0, "list-max-ziplist-size"),
		intD("set-max-intset-entries", "512", 0, longMax, 0),
		intD("zset-max-listpack-entries", "128", 0, longMax, 0, "zset-max-ziplist-entries"),

		// slotd's own
		intD("shard-actors", "0", 0, 16384, immutable),
		intD("event-loops", "0", 0, 16384, immutable),
		specialD("trace-actors", "", multi, parseTraceActors),
		intD("trace-ring-size", "4096", 0, 1<<24, 0),
		// Prometheus /metrics on the bind addresses (0: off; netio/metrics)
		intD("metrics-port", "0", 0, 65535, immutable),
		// the Go runtime's soft memory limit (0: derived from maxmemory,
		// none without it; cmd/node/memlimit.go)
		intD("go-memory-limit", "0", 0, longMax, memory),
		// how much a script may grow the heap (0: the least of maxmemory,
		// a quarter of the machine's memory and 1 GiB;
		// actors/shard/script_memory.go)
		intD("script-memory-limit", "0", 0, longMax, memory),
	}
	ds = append(ds, compatDirectives()...)
	return append(ds, tlsDirectives()...)
}

// compatDirectives are redis.conf directives slotd accepts (so a stock
// redis.conf or a Redis test-suite config loads, and CONFIG GET/SET answer as
// Redis does) but does not act on.
func compatDirectives() []*directive {
	c := compat
	return []*directive{
		boolD("set-proc-title", "yes", c|immutable),
		strD("proc-title-template", "{title} {listen-addr} {server-mode}", c, nil),
		boolD("rdbcompression", "yes", c),
		boolD("rdbchecksum", "yes", c|immutable),
		boolD("rdb-del-sync-files", "no", c),
		boolD("rdb-save-incremental-fsync", "yes", c),
		boolD("repl-diskless-sync", "yes", c),
		intD("repl-diskless-sync-delay", "5", 0, intMax, c),
		intD("repl-diskless-sync-max-replicas", "0", 0, intMax, c),
		enumD("repl-diskless-load", "disabled", []string{"disabled", "on-empty-db", "swapdb"}, c),
		boolD("repl-disable-tcp-nodelay", "no", c),
		intD("repl-timeout", "60", 1, intMax, c),
		intD("repl-ping-replica-period", "10", 1, intMax, c, "repl-ping-slave-period"),
		intD("repl-backlog-ttl", "3600", 0, longMax, c),
		intD("replica-priority", "100", 0, intMax, c, "slave-priority"),
		boolD("replica-lazy-flush", "no", c, "slave-lazy-flush"),
		boolD("replica-ignore-maxmemory", "yes", c, "slave-ignore-maxmemory"),
		boolD("replica-announced", "yes", c),
		strD("replica-announce-ip", "", c, nil, "slave-announce-ip"),
		intD("replica-announce-port", "0", 0, 65535, c, "slave-announce-port"),
		intD("min-replicas-to-write", "0", 0, intMax, c, "min-slaves-to-write"),
		intD("min-replicas-max-lag", "10", 0, intMax, c, "min-slaves-max-lag"),
		strD("masterauth", "", 0, nil),
		strD("masteruser", "", 0, nil),
		intD("acllog-max-len", "128", 0, longMax, 0),
		strD("aclfile", "", immutable, nil),
		enumD("acl-pubsub-default", "resetchannels", []string{"allchannels", "resetchannels"}, 0),
		boolD("lazyfree-lazy-eviction", "no", c),
		boolD("lazyfree-lazy-expire", "no", c),
		boolD("lazyfree-lazy-server-del", "no", c),
		boolD("lazyfree-lazy-user-flush", "no", c),
		enumD("oom-score-adj", "no", []string{"no", "yes", "relative", "absolute"}, c),
		specialD("oom-score-adj-values", "0 200 800", c|multi, parseOOMScoreAdjValues),
		boolD("disable-thp", "yes", c|immutable),
		boolD("no-appendfsync-on-rewrite", "no", 0),
		intD("auto-aof-rewrite-percentage", "100", 0, intMax, 0),
		intD("auto-aof-rewrite-min-size", "64mb", 0, longMax, memory),
		boolD("aof-load-truncated", "yes", 0),
		boolD("aof-use-rdb-preamble", "yes", 0),
		boolD("aof-timestamp-enabled", "no", c),
		boolD("aof-rewrite-incremental-fsync", "yes", c),
		intD("latency-monitor-threshold", "0", 0, longMax, 0),
		specialD("latency-tracking-info-percentiles", "50 99 99.9", multi, parsePercentiles),
		intD("hash-max-listpack-value", "64", 0, longMax, c|memory, "hash-max-ziplist-value"),
		intD("list-compress-depth", "0", 0, intMax, c),
		intD("zset-max-listpack-value", "64", 0, longMax, c|memory, "zset-max-ziplist-value"),
		intD("hll-sparse-max-bytes", "3000", 0, longMax, c|memory),
		intD("stream-node-max-bytes", "4096", 0, longMax, c|memory),
		intD("stream-node-max-entries", "100", 0, longMax, c),
		boolD("activerehashing", "yes", c),
		boolD("activedefrag", "no", c),
		boolD("dynamic-hz", "yes", c),
		boolD("jemalloc-bg-thread", "yes", c),
		boolD("crash-log-enabled", "yes", c),
		boolD("crash-memcheck-enabled", "yes", c),
		intD("tracking-table-max-keys", "1000000", 0, longMax, c),
		intD("cluster-announce-tls-port", "0", 0, 65535, c),
		boolD("cluster-allow-pubsubshard-when-down", "yes", c),
		enumD("supervised", "no", []string{"upstart", "systemd", "auto", "no"}, c|immutable),
		boolD("syslog-enabled", "no", c|immutable),
		strD("syslog-ident", "redis", c|immutable, nil),
		enumD("syslog-facility", "local0", []string{"user", "local0", "local1", "local2", "local3",
			"local4", "local5", "local6", "local7"}, c|immutable),
		strD("unixsocket", "", c|immutable, nil),
		strD("ignore-warnings", "", c, nil),
		enumD("sanitize-dump-payload", "no", []string{"no", "yes", "clients"}, c),
		enumD("enable-protected-configs", "no", []string{"no", "yes", "local"}, immutable),
		enumD("enable-debug-command", "no", []string{"no", "yes", "local"}, immutable),
		enumD("enable-module-command", "no", []string{"no", "yes", "local"}, immutable),
		boolD("aof-disable-auto-gc", "no", c),
		boolD("replica-ignore-disk-write-errors", "no", c),
		boolD("io-threads-do-reads", "no", c|immutable),
		boolD("use-exit-on-panic", "no", c|hidden),
		intD("watchdog-period", "0", 0, intMax, c|hidden),
		specialD("maxmemory-clients", "0", c, parseMaxmemoryClients),
		intD("socket-mark-id", "0", 0, uintMax, c|immutable),
		specialD("unixsocketperm", "0", c|immutable, parseOctalPerm),
		strD("server_cpulist", "", c|immutable, nil),
		strD("bio_cpulist", "", c|immutable, nil),
		strD("aof_rewrite_cpulist", "", c|immutable, nil),
		strD("bgsave_cpulist", "", c|immutable, nil),
		intD("active-defrag-cycle-min", "1", 1, 99, c),
		intD("active-defrag-cycle-max", "25", 1, 99, c),
		intD("active-defrag-threshold-lower", "10", 0, 1000, c),
		intD("active-defrag-threshold-upper", "100", 0, 1000, c),
		intD("active-defrag-max-scan-fields", "1000", 1, longMax, c),
		intD("active-defrag-ignore-bytes", "100mb", 1, longMax, c|memory),
	}
}

// tlsDirectives are the tls-* family: TLS is not built yet, so they are
// accepted and reported like the compat ones.
func tlsDirectives() []*directive {
	c := compat
	ds := []*directive{
		intD("tls-port", "0", 0, 65535, c),
		intD("tls-session-cache-size", "20480", 0, intMax, c),
		intD("tls-session-cache-timeout", "300", 0, intMax, c),
		boolD("tls-cluster", "no", c),
		boolD("tls-replication", "no", c),
		enumD("tls-auth-clients", "yes", []string{"no", "yes", "optional"}, c),
		boolD("tls-prefer-server-ciphers", "no", c),
		boolD("tls-session-caching", "yes", c),
	}
	for _, n := range []string{"tls-cert-file", "tls-key-file", "tls-key-file-pass", "tls-client-cert-file",
		"tls-client-key-file", "tls-client-key-file-pass", "tls-dh-params-file", "tls-ca-cert-file",
		"tls-ca-cert-dir", "tls-protocols", "tls-ciphers", "tls-ciphersuites"} {
		ds = append(ds, strD(n, "", c, nil))
	}
	return ds
}

// deprecated directives are silently ignored in config files and on the
// command line when given one value, as Redis 7 does.
var deprecated = map[string]bool{
	"list-max-ziplist-entries": true,
	"list-max-ziplist-value":   true,
	"lua-replicate-commands":   true,
}
