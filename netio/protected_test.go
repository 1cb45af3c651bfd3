package netio_test

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// enable-protected-configs: dir and dbfilename (where SAVE writes a file)
// change at run time only where it allows, with Redis 7's error; the
// directive itself is immutable.
func TestProtectedConfigs(t *testing.T) {
	n := nodetest.Start(t) // enable-protected-configs no, Redis's default
	w := dialWire(t, n.Addr)
	dir := t.TempDir()
	require.Equal(t, "-ERR CONFIG SET failed (possibly related to argument 'dir') - can't set protected config\r\n",
		w.do("CONFIG", "SET", "dir", dir))
	require.Equal(t, "-ERR CONFIG SET failed (possibly related to argument 'dbfilename') - can't set protected config\r\n",
		w.do("CONFIG", "SET", "maxmemory", "10mb", "dbfilename", "authorized_keys"))
	// All or nothing: maxmemory did not change either.
	require.Equal(t, "*2\r\n$9\r\nmaxmemory\r\n$1\r\n0\r\n", w.do("CONFIG", "GET", "maxmemory"))
	require.Equal(t, "*2\r\n$10\r\ndbfilename\r\n$8\r\ndump.rdb\r\n", w.do("CONFIG", "GET", "dbfilename"))
	require.Equal(t, "*2\r\n$3\r\ndir\r\n$"+strconv.Itoa(len(n.Dir))+"\r\n"+n.Dir+"\r\n", w.do("CONFIG", "GET", "dir"))
	require.Equal(t, "-ERR CONFIG SET failed (possibly related to argument 'enable-protected-configs') - can't set immutable config\r\n",
		w.do("CONFIG", "SET", "enable-protected-configs", "yes"))
	require.Equal(t, "+OK\r\n", w.do("CONFIG", "SET", "maxmemory", "10mb"))

	// local: a loopback client may.
	l := nodetest.Start(t, "enable-protected-configs", "local")
	lw := dialWire(t, l.Addr)
	require.Equal(t, "+OK\r\n", lw.do("CONFIG", "SET", "dbfilename", "other.rdb", "dir", dir))
	require.Equal(t, "*2\r\n$10\r\ndbfilename\r\n$9\r\nother.rdb\r\n", lw.do("CONFIG", "GET", "dbfilename"))
}

// nonLoopbackAddr gives this host an address outside 127.0.0.0/8 and ::1
// for the test: a veth pair in a network namespace of its own, the host
// end holding 10.213.x.1 (root and ip(8) needed; the test is skipped
// without them).
func nonLoopbackAddr(t *testing.T) string {
	t.Helper()
	id := os.Getpid()%200 + 20
	ns, host := "slotdpm"+strconv.Itoa(os.Getpid()), "sdpm"+strconv.Itoa(os.Getpid()%100000)
	addr := "10.213." + strconv.Itoa(id) + ".1"
	run := func(args ...string) error { return exec.Command("ip", args...).Run() }
	if err := run("netns", "add", ns); err != nil {
		t.Skipf("network namespaces unavailable (ip netns add: %v): cannot give the host a non-loopback address", err)
	}
	t.Cleanup(func() { _ = run("netns", "del", ns) })
	for _, args := range [][]string{
		{"link", "add", host, "type", "veth", "peer", "name", "eth0", "netns", ns},
		{"addr", "add", addr + "/24", "dev", host},
		{"link", "set", host, "up"},
		{"-n", ns, "link", "set", "eth0", "up"},
	} {
		if err := run(args...); err != nil {
			t.Skipf("cannot set up a veth with a non-loopback address (ip %v: %v)", args, err)
		}
	}
	t.Cleanup(func() { _ = run("link", "del", host) })
	return addr
}

// Protected mode as Redis 7.0: protected-mode yes and a default user
// without a password turn away every client that is not 127.0.0.1 or ::1
// with -DENIED (bind does not matter); a password, or protected-mode no,
// lets it in.
func TestProtectedModeDeniesNonLoopbackClients(t *testing.T) {
	addr := nonLoopbackAddr(t)
	n := nodetest.Start(t, "bind", "127.0.0.1 "+addr)
	port := strconv.Itoa(n.Port)
	outside := func() *wireConn {
		c, err := net.DialTimeout("tcp", net.JoinHostPort(addr, port), 5*time.Second)
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		return &wireConn{t: t, c: c, r: bufio.NewReader(c)}
	}
	w := outside()
	require.Equal(t, "-DENIED Redis is running in protected mode because protected mode is enabled and no password "+
		"is set for the default user. In this mode connections are only accepted from the loopback interface. If you "+
		"want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just "+
		"disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by "+
		"connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly "+
		"accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively "+
		"you can just disable the protected mode by editing the Redis configuration file, and setting the protected "+
		"mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, "+
		"restart it with the '--protected-mode no' option. 4) Setup a an authentication password for the default "+
		"user. NOTE: You only need to do one of the above things in order for the server to start accepting "+
		"connections from the outside.\r\n", w.read())
	w.readEOF()

	local := dialWire(t, n.Addr)
	require.Equal(t, "+PONG\r\n", local.do("PING"))
	require.Contains(t, local.do("INFO", "stats"), "rejected_connections:1\r\n")

	// With a password the outside client may connect (and must AUTH).
	require.Equal(t, "+OK\r\n", local.do("CONFIG", "SET", "requirepass", "pw"))
	w2 := outside()
	require.Equal(t, "-NOAUTH Authentication required.\r\n", w2.do("PING"))
	require.Equal(t, "+OK\r\n", w2.do("AUTH", "pw"))
	require.Equal(t, "+PONG\r\n", w2.do("PING"))

	// protected-mode no, no password: open to all.
	require.Equal(t, "+OK\r\n", local.do("AUTH", "pw"))
	require.Equal(t, "+OK\r\n", local.do("CONFIG", "SET", "protected-mode", "no", "requirepass", ""))
	require.Equal(t, "+PONG\r\n", outside().do("PING"))
}
