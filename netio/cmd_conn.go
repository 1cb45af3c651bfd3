package netio

import (
	"math"
	"sync"

	"github.com/slotd/slotd/netio/command"
	"github.com/slotd/slotd/netio/resp"
)

// Connection commands: HELLO, AUTH, RESET, SELECT, READONLY, READWRITE.
func registerCmdConn() {
	connFlags := []string{"noscript", "loading", "stale", "fast", "no_auth", "allow_busy"}
	command.Register(
		Loop(&command.Spec{Name: "hello", Arity: -1, Flags: connFlags, Categories: []string{"fast", "connection"},
			Group: "connection", Since: "6.0.0", Summary: "Handshake with Redis"}, cmdHello),
		Loop(&command.Spec{Name: "auth", Arity: -2, Flags: connFlags, Categories: []string{"fast", "connection"},
			Group: "connection", Since: "1.0.0", Summary: "Authenticate to the server"}, cmdAuth),
		Loop(&command.Spec{Name: "reset", Arity: 1, Flags: connFlags, Categories: []string{"fast", "connection"},
			Group: "connection", Since: "6.2.0", Summary: "Reset the connection"}, cmdReset),
		Loop(&command.Spec{Name: "select", Arity: 2, Flags: []string{"loading", "stale", "fast"}, Categories: []string{"fast", "connection"},
			Group: "connection", Since: "1.0.0", Summary: "Change the selected database for the current connection"}, cmdSelect),
		Loop(&command.Spec{Name: "readonly", Arity: 1, Flags: []string{"loading", "stale", "fast"}, Categories: []string{"fast", "connection"},
			Group: "cluster", Since: "3.0.0", Summary: "Enables read queries for a connection to a cluster replica node"}, cmdReadonly),
		Loop(&command.Spec{Name: "readwrite", Arity: 1, Flags: []string{"loading", "stale", "fast"}, Categories: []string{"fast", "connection"},
			Group: "cluster", Since: "3.0.0", Summary: "Disables read queries for a connection to a cluster replica node"}, cmdReadwrite),
	)
}

// Error texts of the connection commands (Redis 7.0 wording).
const (
	errWrongPass   = "WRONGPASS invalid username-password pair or user is disabled."
	errNoProto     = "NOPROTO unsupported protocol version"
	errNoPassword  = "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"
	errHelloNoAuth = "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"
	errBadName     = "ERR Client names cannot contain spaces, newlines or special characters."
	errNoCluster   = "ERR This instance has cluster support disabled"
	errNotInt      = "ERR value is not an integer or out of range"
)

// clusterMode reports whether the node runs with cluster-enabled yes.
func (s *Server) clusterMode() bool { return s.Cfg.Bool("cluster-enabled") }

// setProto switches the connection's protocol; replies written after it,
// on the loop or in shard actors, use the new encoding.
func (cl *client) setProto(p int) {
	cl.proto = p
	cl.setFlag(clientFlagResp3, p == 3)
}

// validName reports whether a client name (or lib name/version) has only
// printable ASCII characters without spaces, as Redis requires.
func validName(b []byte) bool {
	for _, c := range b {
		if c < '!' || c > '~' {
			return false
		}
	}
	return true
}

// setName sets or (empty name) clears the connection name.
func (cl *client) setName(b []byte) {
	if len(b) == 0 {
		cl.name.Store(nil)
		return
	}
	n := string(b)
	cl.name.Store(&n)
}

// cmdHello implements HELLO [protover [AUTH user pass] [SETNAME name]].
func cmdHello(x *Ctx) {
	ver := x.C.proto
	if len(x.Args) >= 2 {
		v, ok := resp.ParseInt(x.Args[1])
		if !ok {
			x.W.Error("ERR Protocol version is not an integer or out of range")
			return
		}
		if v < 2 || v > 3 {
			x.W.Error(errNoProto)
			return
		}
		ver = int(v)
	}
	var user, pass, name []byte
	hasName := false
	for j := 2; j < len(x.Args); j++ {
		more := len(x.Args) - 1 - j
		switch {
		case ArgIs(x.Args[j], "auth") && more >= 2:
			user, pass = x.Args[j+1], x.Args[j+2]
			j += 2
		case ArgIs(x.Args[j], "setname") && more >= 1:
			name, hasName = x.Args[j+1], true
			j++
		default:
			x.W.Error("ERR Syntax error in HELLO option '" + string(x.Args[j]) + "'")
			return
		}
	}
	if user != nil {
		if !x.S.login(x, user, pass) {
			x.W.Error(errWrongPass)
			return
		}
	}
	if x.S.authRequired(x.C) {
		x.W.Error(errHelloNoAuth)
		return
	}
	if hasName {
		if !validName(name) {
			x.W.Error(errBadName)
			return
		}
		x.C.setName(name)
	}
	x.C.setProto(ver)
	x.W.Proto = ver
	mode := "standalone"
	if x.S.clusterMode() {
		mode = "cluster"
	}
	w := x.W
	w.Map(7)
	w.BulkString("server")
	w.BulkString("redis")
	w.BulkString("version")
	w.BulkString(redisVersion)
	w.BulkString("proto")
	w.Int(int64(ver))
	w.BulkString("id")
	w.Int(x.C.id)
	w.BulkString("mode")
	w.BulkString(mode)
	w.BulkString("role")
	if x.S.IsReplicaRole() {
		w.BulkString("replica")
	} else {
		w.BulkString("master")
	}
	w.BulkString("modules")
	w.Array(0)
}

// cmdAuth implements AUTH [username] password.
func cmdAuth(x *Ctx) {
	if len(x.Args) > 3 {
		x.W.Error("ERR syntax error")
		return
	}
	user, pass := []byte("default"), x.Args[1]
	if len(x.Args) == 2 {
		if x.S.ACL.Default.User().NoPass {
			x.W.Error(errNoPassword)
			return
		}
	} else {
		user, pass = x.Args[1], x.Args[2]
	}
	if !x.S.login(x, user, pass) {
		x.W.Error(errWrongPass)
		return
	}
	x.W.OK()
}

var (
	resetMu    sync.Mutex
	resetHooks []func(x *Ctx)
)

// OnReset registers fn to clear per-connection state owned by other parts
// of netio (MULTI, subscriptions, tracking) when a client sends RESET. It
// runs on the connection's loop. Call it from init.
func OnReset(fn func(x *Ctx)) {
	resetMu.Lock()
	resetHooks = append(resetHooks, fn)
	resetMu.Unlock()
}

// cmdReset puts the connection back in its initial state, as if it had
// just connected (the client id and library info stay).
func cmdReset(x *Ctx) {
	resetMu.Lock()
	hooks := resetHooks
	resetMu.Unlock()
	for _, fn := range hooks {
		fn(x)
	}
	cl := x.C
	cl.db.Store(0)
	cl.setProto(2)
	x.W.Proto = 2
	cl.name.Store(nil)
	cl.asking = false
	cl.readonly = false
	cl.setFlag(clientFlagReadonly, false)
	cl.noEvict.Store(false)
	cl.noTouch.Store(false)
	x.S.setDefaultAuth(cl)
	x.W.Simple("RESET")
}

// cmdSelect implements SELECT index: later commands of the connection run
// in that database (each command carries it to its shard). A cluster node
// has only database 0, as in Redis 7.
func cmdSelect(x *Ctx) {
	id, ok := resp.ParseInt(x.Args[1])
	if !ok {
		x.W.Error(errNotInt)
		return
	}
	if id < math.MinInt32 || id > math.MaxInt32 {
		x.W.Error("ERR value is out of range, value must between -2147483648 and 2147483647")
		return
	}
	if id != 0 && x.S.clusterMode() {
		x.W.Error("ERR SELECT is not allowed in cluster mode")
		return
	}
	if id < 0 || id >= int64(x.S.Databases()) {
		x.W.Error("ERR DB index is out of range")
		return
	}
	x.C.db.Store(int32(id))
	x.W.OK()
}

// Databases is the number of databases a client may SELECT (1 in cluster
// mode).
func (s *Server) Databases() int {
	if s.clusterMode() {
		return 1
	}
	return int(s.Cfg.Int("databases"))
}

// cmdReadonly lets a cluster client read from a replica (a no-op on a
// master, where it still answers +OK).
func cmdReadonly(x *Ctx) {
	if !x.S.clusterMode() {
		x.W.Error(errNoCluster)
		return
	}
	x.C.readonly = true
	x.C.setFlag(clientFlagReadonly, true)
	x.W.OK()
}

func cmdReadwrite(x *Ctx) {
	if !x.S.clusterMode() {
		x.W.Error(errNoCluster)
		return
	}
	x.C.readonly = false
	x.C.setFlag(clientFlagReadonly, false)
	x.W.OK()
}

// argIs compares an argument with a lower-case ASCII word.
func ArgIs(a []byte, lower string) bool {
	if len(a) != len(lower) {
		return false
	}
	for i := 0; i < len(a); i++ {
		c := a[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}
