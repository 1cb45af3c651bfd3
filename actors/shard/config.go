package shard

import (
	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/netio/config"
)

// FollowConfig keeps the engine's settings equal to their directives.
func (g *Group) FollowConfig(cfg *config.Config) {
	cfg.MirrorInt("proto-max-bulk-len", &g.MaxBulkLen)
	cfg.MirrorInt("set-max-intset-entries", &g.SetMaxIntsetEntries)
	cfg.MirrorInt("zset-max-listpack-entries", &g.ZSetMaxListpackEntries)
	cfg.MirrorInt("zset-max-listpack-value", &g.ZSetMaxListpackValue)
	cfg.MirrorInt("hash-max-listpack-entries", &g.HashMaxListpackEntries)
	cfg.MirrorInt("hash-max-listpack-value", &g.HashMaxListpackValue)
	cfg.MirrorInt("hll-sparse-max-bytes", &g.HLLSparseMaxBytes)
	cfg.MirrorInt("list-max-listpack-size", &g.ListMaxListpackSize)
	cfg.MirrorInt("rdbcompression", &g.RDBCompression)
	cfg.MirrorInt("stream-node-max-bytes", &g.StreamNodeMaxBytes)
	cfg.MirrorInt("stream-node-max-entries", &g.StreamNodeMaxEntries)
	cfg.MirrorInt("lua-time-limit", &g.scriptLimitMS)
	cfg.MirrorInt("tracking-table-max-keys", &g.Tracking.MaxKeys)
	cfg.MirrorInt("maxmemory", &g.MaxMemory)
	g.followScriptMemory(cfg)
	cfg.MirrorInt("maxmemory-samples", &g.MaxMemorySamples)
	cfg.MirrorInt("maxmemory-eviction-tenacity", &g.EvictionTenacity)
	cfg.MirrorInt("lfu-log-factor", &g.LFULogFactor)
	cfg.MirrorInt("lfu-decay-time", &g.LFUDecayTime)
	policy := func(string) { g.SetPolicy(engine.ParsePolicy(cfg.String("maxmemory-policy"))) }
	policy("")
	cfg.OnChange("maxmemory-policy", policy)
	ignore := func(string) { g.ReplicaIgnoreMaxMemory.Store(cfg.Bool("replica-ignore-maxmemory")) }
	ignore("")
	cfg.OnChange("replica-ignore-maxmemory", ignore)
	cfg.MirrorInt("notify-keyspace-events", &g.Notify.Flags)
}
