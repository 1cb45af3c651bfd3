package netio_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

func helloReply(id int64, proto int, mode string) string {
	head := "*14\r\n"
	if proto == 3 {
		head = "%7\r\n"
	}
	return head + "$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n$5\r\nproto\r\n:" +
		strconv.Itoa(proto) + "\r\n$2\r\nid\r\n:" + strconv.FormatInt(id, 10) + "\r\n$4\r\nmode\r\n$" +
		strconv.Itoa(len(mode)) + "\r\n" + mode + "\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n"
}

func clientID(t *testing.T, w *wireConn) int64 {
	r := w.do("CLIENT", "ID")
	id, err := strconv.ParseInt(r[1:len(r)-2], 10, 64)
	require.NoError(t, err, r)
	return id
}

func TestHelloSwitchesProtocol(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t)
	w := dialWire(t, n.Addr)
	id := clientID(t, w)

	require.Equal(t, "$-1\r\n", w.do("GET", "missing"))
	require.Equal(t, helloReply(id, 3, "standalone"), w.do("HELLO", "3"))
	// Shard replies follow the new protocol too.
	require.Equal(t, "_\r\n", w.do("GET", "missing"))
	require.Equal(t, helloReply(id, 3, "standalone"), w.do("HELLO"))
	require.Equal(t, helloReply(id, 2, "standalone"), w.do("hello", "2"))
	require.Equal(t, "$-1\r\n", w.do("GET", "missing"))

	// HELLO and a shard command in the same read: the second reply already
	// uses RESP3.
	w.write("*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n*2\r\n$3\r\nGET\r\n$1\r\nx\r\n")
	require.Equal(t, helloReply(id, 3, "standalone"), w.read())
	require.Equal(t, "_\r\n", w.read())

	require.Equal(t, "-NOPROTO unsupported protocol version\r\n", w.do("HELLO", "4"))
	require.Equal(t, "-NOPROTO unsupported protocol version\r\n", w.do("HELLO", "1"))
	require.Equal(t, "-ERR Protocol version is not an integer or out of range\r\n", w.do("HELLO", "x"))
	require.Equal(t, "-ERR Syntax error in HELLO option 'FOO'\r\n", w.do("HELLO", "2", "FOO"))
	require.Equal(t, "-ERR Syntax error in HELLO option 'AUTH'\r\n", w.do("HELLO", "2", "AUTH", "x"))
	require.Equal(t, "-ERR Syntax error in HELLO option 'SETNAME'\r\n", w.do("HELLO", "3", "SETNAME"))
	require.Equal(t, "-ERR Client names cannot contain spaces, newlines or special characters.\r\n",
		w.do("HELLO", "3", "SETNAME", "a b"))
	// The failed HELLOs left the protocol alone.
	require.Equal(t, "_\r\n", w.do("GET", "missing"))

	require.Equal(t, helloReply(id, 2, "standalone"), w.do("HELLO", "2", "AUTH", "default", "any", "SETNAME", "me"))
	require.Equal(t, "$2\r\nme\r\n", w.do("CLIENT", "GETNAME"))
}

// A plain go-redis client connects with HELLO 3 and CLIENT SETINFO, and
// falls back to nothing: every command must then work in RESP3 and RESP2.
func TestGoRedisHandshake(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t)
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		c := redis.NewClient(&redis.Options{Addr: n.Addr, Protocol: proto, ClientName: "app-" + strconv.Itoa(proto)})
		t.Cleanup(func() { _ = c.Close() })
		require.NoError(t, c.Ping(ctx).Err())
		info, err := c.ClientInfo(ctx).Result()
		require.NoError(t, err)
		require.Equal(t, "app-"+strconv.Itoa(proto), info.Name)
		require.Equal(t, proto, info.Resp)
		require.Equal(t, "client|info", info.LastCmd)
		hello, err := c.Do(ctx, "HELLO").Result()
		require.NoError(t, err)
		if proto == 3 {
			m := hello.(map[any]any)
			require.Equal(t, int64(3), m["proto"])
			require.Equal(t, "7.0.15", m["version"])
			require.Equal(t, "standalone", m["mode"])
			require.Equal(t, []any{}, m["modules"])
		} else {
			require.Len(t, hello.([]any), 14)
		}
	}
	w := dialWire(t, n.Addr)
	require.Equal(t, "+OK\r\n", w.do("CLIENT", "SETINFO", "LIB-NAME", "go-redis(x,go1.22)"))
	require.Equal(t, "+OK\r\n", w.do("CLIENT", "SETINFO", "lib-ver", "9.7.0"))
}

func TestAuthFlow(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t, "requirepass", "sekret")
	w := dialWire(t, n.Addr)
	const noauth = "-NOAUTH Authentication required.\r\n"
	const wrongpass = "-WRONGPASS invalid username-password pair or user is disabled.\r\n"
	require.Equal(t, noauth, w.do("PING"))
	require.Equal(t, noauth, w.do("GET", "k"))
	require.Equal(t, noauth, w.do("CLIENT", "ID"))
	require.Equal(t, "-NOAUTH HELLO must be called with the client already authenticated, otherwise the "+
		"HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol "+
		"version at the same time\r\n", w.do("HELLO", "3"))
	require.Equal(t, "-NOPROTO unsupported protocol version\r\n", w.do("HELLO", "4"))
	require.Equal(t, wrongpass, w.do("AUTH", "nope"))
	require.Equal(t, wrongpass, w.do("AUTH", "default", "nope"))
	require.Equal(t, wrongpass, w.do("AUTH", "alice", "sekret"))
	require.Equal(t, wrongpass, w.do("HELLO", "3", "AUTH", "default", "nope"))
	require.Equal(t, "-ERR syntax error\r\n", w.do("AUTH", "a", "b", "c"))
	require.Equal(t, "+OK\r\n", w.do("AUTH", "sekret"))
	require.Equal(t, "+PONG\r\n", w.do("PING"))
	// RESET logs the connection out again.
	require.Equal(t, "+RESET\r\n", w.do("RESET"))
	require.Equal(t, noauth, w.do("PING"))
	require.Equal(t, "+OK\r\n", w.do("AUTH", "default", "sekret"))
	require.Equal(t, "+PONG\r\n", w.do("PING"))

	// HELLO AUTH authenticates and switches protocol at once.
	w2 := dialWire(t, n.Addr)
	r := w2.do("HELLO", "3", "AUTH", "default", "sekret", "SETNAME", "x")
	require.Contains(t, r, "%7\r\n")
	require.Equal(t, "$1\r\nx\r\n", w2.do("CLIENT", "GETNAME"))

	// QUIT needs no authentication.
	w3 := dialWire(t, n.Addr)
	require.Equal(t, "+OK\r\n", w3.do("QUIT"))
	w3.readEOF()

	// go-redis with a password: HELLO 3 AUTH ...
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		c := redis.NewClient(&redis.Options{Addr: n.Addr, Protocol: proto, Password: "sekret"})
		require.NoError(t, c.Set(ctx, "k", "v", 0).Err())
		require.Equal(t, "v", c.Get(ctx, "k").Val())
		_ = c.Close()
		bad := redis.NewClient(&redis.Options{Addr: n.Addr, Protocol: proto, Password: "bad", MaxRetries: -1})
		require.ErrorContains(t, bad.Ping(ctx).Err(), "WRONGPASS")
		_ = bad.Close()
	}
}

// Connection commands of a standalone node.
func TestStandaloneConnectionCommands(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t)
	w := dialWire(t, n.Addr)

	require.Equal(t, "-ERR AUTH <password> called without any password configured for the default user. "+
		"Are you sure your configuration is correct?\r\n", w.do("AUTH", "x"))
	require.Equal(t, "+OK\r\n", w.do("AUTH", "default", "anything"))
	require.Equal(t, "-WRONGPASS invalid username-password pair or user is disabled.\r\n", w.do("AUTH", "bob", "x"))
	require.Equal(t, "-ERR wrong number of arguments for 'auth' command\r\n", w.do("AUTH"))

	require.Equal(t, "+OK\r\n", w.do("SELECT", "0"))
	// databases 16: 0..15 exist.
	require.Equal(t, "+OK\r\n", w.do("SELECT", "15"))
	require.Equal(t, "-ERR DB index is out of range\r\n", w.do("SELECT", "16"))
	require.Equal(t, "-ERR DB index is out of range\r\n", w.do("SELECT", "-1"))
	require.Equal(t, "-ERR value is not an integer or out of range\r\n", w.do("SELECT", "x"))
	require.Equal(t, "-ERR value is not an integer or out of range\r\n", w.do("SELECT", "00"))
	require.Equal(t, "-ERR value is out of range, value must between -2147483648 and 2147483647\r\n",
		w.do("SELECT", "2147483648"))
	require.Equal(t, "+OK\r\n", w.do("SELECT", "0"))

	require.Equal(t, "-ERR This instance has cluster support disabled\r\n", w.do("READONLY"))
	require.Equal(t, "-ERR This instance has cluster support disabled\r\n", w.do("READWRITE"))

	require.Equal(t, "+PONG\r\n", w.do("PING"))
	require.Equal(t, "$2\r\nhi\r\n", w.do("PING", "hi"))
	require.Equal(t, "-ERR wrong number of arguments for 'ping' command\r\n", w.do("PING", "a", "b"))
	require.Equal(t, "$2\r\nhi\r\n", w.do("ECHO", "hi"))
	require.Equal(t, "-ERR wrong number of arguments for 'echo' command\r\n", w.do("ECHO"))
	// Inline commands, as redis-benchmark and telnet users send them.
	w.write("PING\r\n")
	require.Equal(t, "+PONG\r\n", w.read())
	w.write("ECHO hello\r\n")
	require.Equal(t, "$5\r\nhello\r\n", w.read())

	// go-redis with DB 0 selects nothing; the connection works.
	c := redis.NewClient(&redis.Options{Addr: n.Addr, DB: 0})
	defer c.Close()
	require.NoError(t, c.Ping(context.Background()).Err())

	// QUIT replies to what came before it, then closes.
	w.write("PING\r\nQUIT\r\nPING\r\n")
	require.Equal(t, "+PONG\r\n", w.read())
	require.Equal(t, "+OK\r\n", w.read())
	w.readEOF()
}

// Connection commands of a cluster-enabled node; RESET.
func TestClusterConnectionCommands(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t, "cluster-enabled", "yes")
	w := dialWire(t, n.Addr)
	id := clientID(t, w)
	require.Equal(t, "+OK\r\n", w.do("SELECT", "0"))
	require.Equal(t, "-ERR SELECT is not allowed in cluster mode\r\n", w.do("SELECT", "1"))
	require.Equal(t, "-ERR wrong number of arguments for 'readonly' command\r\n", w.do("READONLY", "x"))
	require.Equal(t, "+OK\r\n", w.do("READONLY"))
	require.Contains(t, w.do("CLIENT", "INFO"), " flags=r ")
	require.Equal(t, "+OK\r\n", w.do("READWRITE"))
	require.Contains(t, w.do("CLIENT", "INFO"), " flags=N ")

	require.Equal(t, helloReply(id, 3, "cluster"), w.do("HELLO", "3", "SETNAME", "before"))
	require.Equal(t, "+OK\r\n", w.do("READONLY"))
	require.Equal(t, "+OK\r\n", w.do("CLIENT", "NO-EVICT", "on"))
	info := w.do("CLIENT", "INFO")
	require.Contains(t, info, " name=before ")
	require.Contains(t, info, " flags=re ")
	require.Contains(t, info, " resp=3\n")

	require.Equal(t, "+RESET\r\n", w.do("RESET"))
	info = w.do("CLIENT", "INFO")
	require.Equal(t, byte('$'), info[0], "back to RESP2: a bulk, not a verbatim string")
	require.Contains(t, info, " name= ")
	require.Contains(t, info, " flags=N ")
	require.Contains(t, info, " resp=2\n")
	require.Equal(t, ":"+strconv.FormatInt(id, 10)+"\r\n", w.do("CLIENT", "ID"))
	require.Equal(t, "-ERR wrong number of arguments for 'reset' command\r\n", w.do("RESET", "x"))

	_, f := infoOf(t, n.Client(t), "server", "cluster")
	require.Equal(t, "1", f["cluster_enabled"])
	require.Equal(t, "cluster", f["redis_mode"])
}
