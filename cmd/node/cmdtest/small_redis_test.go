package cmdtest_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// SUBSTR, LOLWUT, MODULE and OBJECT FREQ's refusal side by side with
// redis-server, byte for byte in both protocols.
func TestSmallCommandsSameAsRedis(t *testing.T) {
	script := [][]string{
		{"SET", "{t}s", "hello"},
		{"SUBSTR", "{t}s", "1", "3"}, {"SUBSTR", "{t}s", "-3", "-1"}, {"SUBSTR", "{t}s", "a", "1"},
		{"SUBSTR", "{t}nokey", "0", "1"}, {"SUBSTR", "{t}s", "0"},
		{"LOLWUT"}, {"LOLWUT", "VERSION", "7"}, {"LOLWUT", "VERSION", "x"}, {"LOLWUT", "foo"},
		{"MODULE", "LIST"}, {"MODULE", "LOAD", "/nonexistent.so"}, {"MODULE", "LOADEX", "/nonexistent.so"},
		{"MODULE", "UNLOAD", "foo"}, {"MODULE", "HELP"}, {"MODULE", "foo"}, {"MODULE", "LOAD"},
		{"OBJECT", "FREQ", "{t}s"}, {"OBJECT", "FREQ", "{t}nokey"},
		{"CLIENT", "REPLY", "foo"}, {"CLIENT", "REPLY"},
		{"CLIENT", "UNBLOCK"}, {"CLIENT", "UNBLOCK", "999999"}, {"CLIENT", "UNBLOCK", "999999", "timeout"},
		{"CLIENT", "UNBLOCK", "999999", "ERROR"}, {"CLIENT", "UNBLOCK", "999999", "foo"},
		{"CLIENT", "UNBLOCK", "x"}, {"CLIENT", "UNBLOCK", "x", "foo"}, {"CLIENT", "UNBLOCK", "1", "timeout", "x"},
	}
	sameAsRedis(t, "{t}", script, "--enable-module-command", "yes")
}

// MODULE LOAD and UNLOAD are protected by enable-module-command (default
// no), MODULE LIST is not, as in Redis.
func TestModuleProtected(t *testing.T) {
	n := nodetest.Start(t)
	c := respDial(t, n.Addr, 2)
	want := "-ERR MODULE command not allowed. If the enable-module-command option is set to \"local\", you can run " +
		"it from a local connection, otherwise you need to set this option in the configuration file, and then " +
		"restart the server.\r\n"
	assert.Equal(t, want, c.Do("MODULE", "LOAD", "/x.so"))
	assert.Equal(t, want, c.Do("MODULE", "UNLOAD", "x"))
	assert.Equal(t, "*0\r\n", c.Do("MODULE", "LIST"))
}

// untilPong reads replies until +PONG (the test's last command).
func untilPong(rc *respConn) []string {
	var out []string
	for {
		r := rc.Read(respTimeout)
		out = append(out, r)
		if r == "+PONG\r\n" {
			return out
		}
	}
}

// CLIENT REPLY OFF / SKIP / ON drop and restore replies exactly as
// redis-server does, a blocked command's eventual reply included.
func TestClientReplySameAsRedis(t *testing.T) {
	ref := nodetest.StartRedis(t)
	n := shardsNode(t)
	cmds := [][]string{
		{"SET", "a", "1"}, {"CLIENT", "REPLY", "OFF"}, {"GET", "a"}, {"FOO"}, {"CLIENT", "REPLY", "SKIP"}, {"GET", "a"},
		{"CLIENT", "REPLY", "ON"}, {"GET", "a"}, {"CLIENT", "REPLY", "SKIP"}, {"GET", "a"}, {"GET", "a"},
		{"CLIENT", "REPLY", "SKIP"}, {"CLIENT", "REPLY", "SKIP"}, {"GET", "a"}, {"GET", "a"},
		{"CLIENT", "REPLY", "SKIP"}, {"CLIENT", "REPLY", "ON"}, {"GET", "a"},
		{"CLIENT", "REPLY", "OFF"}, {"BLPOP", "nol", "0.05"}, {"MULTI"}, {"GET", "a"}, {"EXEC"},
		{"CLIENT", "REPLY", "ON"}, {"RPUSH", "l", "x"}, {"CLIENT", "REPLY", "SKIP"}, {"BLPOP", "l", "0"},
		{"PING"},
	}
	sameRepliesUntilPong(t, ref, n.Addr, cmds, 10)
	// (Un)subscribe confirmations are pushes, written whatever CLIENT
	// REPLY says.
	sameRepliesUntilPong(t, ref, n.Addr, [][]string{
		{"CLIENT", "REPLY", "OFF"}, {"SUBSCRIBE", "c1"}, {"PSUBSCRIBE", "p*"}, {"UNSUBSCRIBE", "c1"},
		{"CLIENT", "REPLY", "SKIP"}, {"PUNSUBSCRIBE", "p*"}, {"GET", "a"}, {"CLIENT", "REPLY", "ON"}, {"PING"},
	}, 6)
}

// sameRepliesUntilPong sends cmds (ending in PING) to redis-server at ref
// and slotd at addr, in both protocols, and compares every reply up to
// the PONG; Redis must send n.
func sameRepliesUntilPong(t *testing.T, ref, addr string, cmds [][]string, n int) {
	t.Helper()
	for _, proto := range []int{2, 3} {
		want, got := respDial(t, ref, proto), respDial(t, addr, proto)
		// One command per write, as a client waiting for nothing sends them.
		for _, c := range cmds {
			want.Send(c...)
			got.Send(c...)
		}
		w := untilPong(want)
		assert.Equal(t, w, untilPong(got), "RESP%d", proto)
		assert.Len(t, w, n, "the replies Redis sends")
	}
}

// CLIENT UNBLOCK wakes a client blocked in a shard actor with its
// command's timeout reply or the UNBLOCKED error, as redis-server does.
func TestClientUnblockSameAsRedis(t *testing.T) {
	ref := nodetest.StartRedis(t)
	n := shardsNode(t)
	blockers := [][]string{
		{"BLPOP", "nol", "0"}, {"BZPOPMIN", "noz", "0"}, {"XREAD", "BLOCK", "0", "STREAMS", "nos", "$"},
		{"BLMOVE", "{t}nol", "{t}dst", "LEFT", "RIGHT", "0"},
	}
	run := func(addr, mode string, blocker []string) []string {
		a, b := respDial(t, addr, 2), respDial(t, addr, 2)
		id := strings.TrimSuffix(strings.TrimPrefix(a.Do("CLIENT", "ID"), ":"), "\r\n")
		a.Send(blocker...)
		// Wait until a is blocked (as CLIENT LIST shows it) before unblocking.
		nodetest.Eventually(t, 5*time.Second, func() bool {
			return strings.Contains(b.Do("CLIENT", "LIST", "ID", id), "flags=b")
		}, "client blocked")
		args := []string{"CLIENT", "UNBLOCK", id}
		if mode != "" {
			args = append(args, mode)
		}
		out := []string{b.Do(args...), a.Read(respTimeout), b.Do("CLIENT", "UNBLOCK", id), a.Do("PING")}
		return out
	}
	for _, mode := range []string{"", "TIMEOUT", "error"} {
		for _, bl := range blockers {
			w := run(ref, mode, bl)
			assert.Equal(t, w, run(n.Addr, mode, bl), "CLIENT UNBLOCK %s of %s", mode, bl[0])
			require.Equal(t, ":1\r\n", w[0])
		}
	}
}
