package replcmd

import (
	"strings"
	"time"

	"github.com/slotd/slotd/netio"
	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/replproto"
	"github.com/slotd/slotd/netio/resp"
)

const errWaitOnRepl = "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 " +
	"if a replica is configured to be writable (which is not the default) writes to replicas are just " +
	"local and are not propagated."

func registerRepl() {
	adminNS := []string{"admin", "noscript", "stale", "no_async_loading"}
	command.Register(
		netio.Loop(&command.Spec{Name: "replicaof", Arity: 3, Flags: adminNS,
			Categories: []string{"admin", "slow", "dangerous"}, Group: "server", Since: "5.0.0",
			Summary: "Make the server a replica of another instance, or promote it as master."}, cmdReplicaOf),
		netio.Loop(&command.Spec{Name: "slaveof", Arity: 3, Flags: adminNS,
			Categories: []string{"admin", "slow", "dangerous"}, Group: "server", Since: "1.0.0",
			Summary: "Make the server a replica of another instance, or promote it as master."}, cmdReplicaOf),
		netio.Loop(&command.Spec{Name: "role", Arity: 1, Flags: []string{"noscript", "loading", "stale", "fast"},
			Categories: []string{"admin", "fast", "dangerous"}, Group: "server", Since: "2.8.12",
			Summary: "Return the role of the instance in the context of replication"}, cmdRole),
		netio.Loop(&command.Spec{Name: "wait", Arity: 3, Flags: []string{"noscript"},
			Categories: []string{"slow", "connection"}, Group: "generic", Since: "3.0.0",
			Tips:    []string{"request_policy:all_shards", "response_policy:agg_min"},
			Summary: "Wait for the synchronous replication of all the write commands sent in the context of the current connection"}, cmdWait),
		netio.Loop(&command.Spec{Name: "replconf", Arity: -1, Flags: []string{"admin", "noscript", "loading", "stale", "allow_busy"},
			Categories: []string{"admin", "slow", "dangerous"}, Group: "server", Since: "3.0.0",
			Summary: "An internal command for configuring the replication stream"}, cmdReplConf),
		netio.Loop(&command.Spec{Name: "psync", Arity: -3, Flags: []string{"admin", "noscript", "no_async_loading", "no_multi"},
			Categories: []string{"admin", "slow", "dangerous"}, Group: "server", Since: "2.8.0",
			Summary: "Internal command used for replication"}, cmdPSync),
		netio.Loop(&command.Spec{Name: "failover", Arity: -1, Flags: []string{"admin", "noscript", "stale"},
			Categories: []string{"admin", "slow", "dangerous"}, Group: "server", Since: "6.2.0",
			Summary: "Hand this primary's role over to one of its replicas, writes paused until it is done"}, cmdFailover),
		netio.Loop(&command.Spec{Name: "sync", Arity: 1, Flags: []string{"admin", "noscript", "no_async_loading", "no_multi"},
			Categories: []string{"admin", "slow", "dangerous"}, Group: "server", Since: "1.0.0",
			Summary: "Internal command used for replication"}, cmdSync),
	)
	netio.RegisterDebug("set-active-expire", []string{"SET-ACTIVE-EXPIRE <0|1>",
		"    Setting it to 0 disables expiring keys in background when they are not accessed (otherwise the Redis",
		"    behavior). Setting it to 1 reenables back the default."}, 3, debugSetActiveExpire)
}

// standaloneRepl reports whether a standalone-only replication command may
// run, answering clusterErr in cluster mode.
func standaloneRepl(x *netio.Ctx, clusterErr string) bool {
	if x.S.ClusterMode() {
		x.W.Error(clusterErr)
		return false
	}
	if x.S.Repl == nil {
		x.W.Error("ERR replication is not available")
		return false
	}
	return true
}

// cmdReplicaOf implements REPLICAOF host port | NO ONE (and SLAVEOF).
func cmdReplicaOf(x *netio.Ctx) {
	if !standaloneRepl(x, "ERR REPLICAOF not allowed in cluster mode.") {
		return
	}
	host, port := "", int64(0)
	if !netio.ArgIs(x.Args[1], "no") || !netio.ArgIs(x.Args[2], "one") {
		var ok bool
		port, ok = resp.ParseInt(x.Args[2])
		if !ok || port < 0 || port > 65535 {
			x.W.Error("ERR Invalid master port")
			return
		}
		host = string(x.Args[1])
	}
	if r := x.S.Repl.ReplicaOf(host, int(port)); strings.HasPrefix(r, "-") {
		x.W.Error(r[1:])
	} else {
		x.W.Simple(r)
	}
}

// cmdFailover implements FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT
// ms] (standalone; actors/repl/failover.go).
func cmdFailover(x *netio.Ctx) {
	if !standaloneRepl(x, "ERR FAILOVER not allowed in cluster mode. Use CLUSTER FAILOVER command instead.") {
		return
	}
	if len(x.Args) == 2 && netio.ArgIs(x.Args[1], "abort") {
		if msg := x.S.Repl.AbortFailover(); msg != "" {
			x.W.Error(msg)
			return
		}
		x.W.OK()
		return
	}
	var timeout, port int64
	var host string
	force, haveHost := false, false
	for j := 1; j < len(x.Args); j++ {
		switch {
		case netio.ArgIs(x.Args[j], "timeout") && j+1 < len(x.Args) && timeout == 0:
			n, ok := resp.ParseInt(x.Args[j+1])
			if !ok {
				x.W.Error("ERR value is not an integer or out of range")
				return
			}
			if n <= 0 {
				x.W.Error("ERR FAILOVER timeout must be greater than 0")
				return
			}
			timeout = n
			j++
		case netio.ArgIs(x.Args[j], "to") && j+2 < len(x.Args) && !haveHost:
			n, ok := resp.ParseInt(x.Args[j+2])
			if !ok {
				x.W.Error("ERR value is not an integer or out of range")
				return
			}
			host, port, haveHost = string(x.Args[j+1]), n, true
			j += 2
		case netio.ArgIs(x.Args[j], "force") && !force:
			force = true
		default:
			x.W.Error("ERR syntax error")
			return
		}
	}
	if haveHost && host == "" {
		host = " " // an empty TO host names no replica
	}
	if msg := x.S.Repl.Failover(host, int(port), force, time.Duration(timeout)*time.Millisecond); msg != "" {
		x.W.Error(msg)
		return
	}
	x.W.OK()
}

func cmdRole(x *netio.Ctx) {
	if x.S.Repl == nil {
		x.W.Array(3)
		x.W.BulkString("master")
		x.W.Int(0)
		x.W.Array(0)
		return
	}
	x.S.Repl.Role(x.W)
}

// cmdWait implements WAIT numreplicas timeout.
func cmdWait(x *netio.Ctx) {
	if x.S.Repl != nil && x.S.Repl.IsReplica() {
		x.W.Error(errWaitOnRepl)
		return
	}
	n, ok := resp.ParseInt(x.Args[1])
	if !ok {
		x.W.Error("ERR value is not an integer or out of range")
		return
	}
	ms, ok := resp.ParseInt(x.Args[2])
	if !ok {
		x.W.Error("ERR timeout is not an integer or out of range")
		return
	}
	if ms < 0 {
		x.W.Error("ERR timeout is negative")
		return
	}
	if x.S.Repl == nil {
		x.W.Int(0)
		return
	}
	noBlock := x.InTx
	rs := x.ReplConf()
	x.Defer(func(d *netio.Deferred) {
		// reply may run before Wait returns (a shard run inline).
		rs.WaitCancel = x.S.Repl.Wait(n, time.Duration(ms)*time.Millisecond, noBlock, func(k int64) {
			d.W.Int(k)
			d.Done()
		})
	})
}

// cmdReplConf implements REPLCONF option value [option value ...]: the
// options a replica sends before PSYNC, and ACK (no reply) after it.
func cmdReplConf(x *netio.Ctx) {
	if len(x.Args)%2 == 0 {
		x.W.Error("ERR syntax error")
		return
	}
	rs := x.ReplConf()
	for i := 1; i < len(x.Args); i += 2 {
		opt, val := x.Args[i], x.Args[i+1]
		switch {
		case netio.ArgIs(opt, "listening-port"):
			p, ok := resp.ParseInt(val)
			if !ok {
				x.W.Error("ERR value is not an integer or out of range")
				return
			}
			rs.Port = int(p)
		case netio.ArgIs(opt, "ip-address"):
			rs.IP = string(val)
		case netio.ArgIs(opt, "capa"):
			rs.Capa = append(rs.Capa, strings.ToLower(string(val)))
		case netio.ArgIs(opt, "ack"), netio.ArgIs(opt, "fack"):
			// Acknowledgements come on a replica's feed connection and get
			// no reply.
			if fc := x.Feed(); fc != nil && x.S.Repl != nil && netio.ArgIs(opt, "ack") {
				x.S.Repl.Ack(fc, string(val))
			}
			return
		case netio.ArgIs(opt, "getack"), netio.ArgIs(opt, "rdb-only"), netio.ArgIs(opt, "rdb-filter-only"):
		default:
			x.W.Error("ERR Unrecognized REPLCONF option: " + string(opt))
			return
		}
	}
	x.W.OK()
}

// cmdPSync implements PSYNC replid offsets: the connection becomes the
// replica's feed once the reply is out.
func cmdPSync(x *netio.Ctx) {
	if x.InMulti() || x.InTx {
		x.W.Error("ERR Command not allowed inside a transaction")
		return
	}
	if x.S.Repl == nil {
		x.W.Error("ERR replication is not available")
		return
	}
	if x.Feed() != nil {
		return // already a replica connection: ignored, as Redis does
	}
	rs := x.ReplConf()
	req := replproto.PSyncRequest{ReplID: string(x.Args[1]), Offsets: string(x.Args[2]), ListeningPort: rs.Port,
		IP: rs.IP, Capa: rs.Capa, Failover: len(x.Args) > 3 && netio.ArgIs(x.Args[3], "failover")}
	if req.IP == "" {
		req.IP = x.RemoteHost()
	}
	fc := x.StartFeed()
	srv := x.S
	x.Defer(func(d *netio.Deferred) {
		srv.Repl.PSync(req, fc, func(line string, isErr bool) {
			if isErr {
				d.W.Error(line)
			} else {
				d.W.Simple(line)
			}
			d.Done()
		})
	})
}

// debugSetActiveExpire implements DEBUG SET-ACTIVE-EXPIRE 0|1.
func debugSetActiveExpire(x *netio.Ctx) {
	n, ok := resp.ParseInt(x.Args[2])
	if !ok {
		x.W.Error("ERR value is not an integer or out of range")
		return
	}
	x.S.Shards().SetActiveExpire(n != 0)
	x.W.OK()
}

func cmdSync(x *netio.Ctx) {
	x.W.Error("ERR SYNC is not supported: slotd replicates to slotd replicas with PSYNC")
}
