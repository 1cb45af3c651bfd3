package netio_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/actors/trace"
	"github.com/slotd/slotd/cmd/node/nodetest"
)

func TestTime(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t)
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		tm, err := n.Client(t, proto).Time(ctx).Result()
		require.NoError(t, err)
		require.WithinDuration(t, time.Now(), tm, time.Minute)
	}
	w := dialWire(t, n.Addr)
	r := w.do("TIME")
	parts := strings.Split(r, "\r\n")
	require.Equal(t, "*2", parts[0], r)
	usec, err := strconv.Atoi(parts[4])
	require.NoError(t, err)
	require.Less(t, usec, 1000000)
	require.Equal(t, "-ERR wrong number of arguments for 'time' command\r\n", w.do("TIME", "x"))

	// DEBUG is off by default (enable-debug-command no), as in Redis.
	require.Equal(t, "-ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", "+
		"you can run it from a local connection, otherwise you need to set this option in the configuration file, "+
		"and then restart the server.\r\n", w.do("DEBUG", "SLEEP", "0"))
}

// DEBUG with enable-debug-command local, from a loopback connection. Not
// parallel: DEBUG TRACE switches the process-wide tracer.
func TestDebug(t *testing.T) {
	n := nodetest.Start(t, "enable-debug-command", "local")
	w := dialWire(t, n.Addr)
	require.Equal(t, "+OK\r\n", w.do("DEBUG", "SLEEP", "0"))
	require.Equal(t, "+OK\r\n", w.do("DEBUG", "SLEEP", "-1"))
	require.Equal(t, "+OK\r\n", w.do("DEBUG", "SLEEP", "x"))
	require.Equal(t, "-ERR wrong number of arguments for 'debug' command\r\n", w.do("DEBUG"))
	require.Equal(t, "-ERR unknown subcommand or wrong number of arguments for 'FOO'. Try DEBUG HELP.\r\n",
		w.do("DEBUG", "FOO"))
	require.Equal(t, "-ERR unknown subcommand or wrong number of arguments for 'SLEEP'. Try DEBUG HELP.\r\n",
		w.do("DEBUG", "SLEEP"))
	help := w.do("DEBUG", "HELP")
	require.Contains(t, help, "+DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n")
	require.Contains(t, help, "+SLEEP <seconds>\r\n")
	require.Contains(t, help, "+TRACE [<count>]\r\n")

	// DEBUG SLEEP freezes the whole node, as in Redis: once it runs, other
	// connections get nothing until it ends (one of these PINGs spans the
	// pause).
	other := dialWire(t, n.Addr)
	w.write("*3\r\n$5\r\nDEBUG\r\n$5\r\nSLEEP\r\n$3\r\n0.6\r\n*1\r\n$4\r\nPING\r\n")
	start, held := time.Now(), false
	for !held && time.Since(start) < 5*time.Second {
		t0 := time.Now()
		require.Equal(t, "+PONG\r\n", other.do("PING"))
		held = time.Since(t0) > 300*time.Millisecond
	}
	require.True(t, held, "a PING from another connection waited for the pause")
	require.Equal(t, "+OK\r\n", w.read())
	require.Equal(t, "+PONG\r\n", w.read())

	// DEBUG TRACE: the most recent actor trace records, one line each.
	t.Cleanup(func() { trace.Configure("") })
	require.Equal(t, "+OK\r\n", w.do("CONFIG", "SET", "trace-actors", "shard"))
	trace.Reset()
	for i := 0; i < 3; i++ {
		require.Equal(t, "+OK\r\n", w.do("SET", "k"+strconv.Itoa(i), "v"))
	}
	r := w.do("DEBUG", "TRACE", "2")
	require.True(t, strings.HasPrefix(r, "*2\r\n"), r)
	require.Regexp(t, `\$\d+\r\nseq=\d+ time=\S+ clock=\d+ kind=shard id=shard-\d+ sender=\S+ queued=\S+ `+
		`handling=\S+ trace=[0-9a-f]+ msg=SET slot=\d+\r\n`, r)
	require.Equal(t, "-ERR value is not an integer or out of range\r\n", w.do("DEBUG", "TRACE", "-1"))
	require.Equal(t, "+OK\r\n", w.do("CONFIG", "SET", "trace-actors", ""))
}

func TestShutdown(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t)
	w := dialWire(t, n.Addr)
	require.Equal(t, "-ERR syntax error\r\n", w.do("SHUTDOWN", "FOO"))
	require.Equal(t, "-ERR syntax error\r\n", w.do("SHUTDOWN", "NOSAVE", "SAVE"))
	require.Equal(t, "-ERR syntax error\r\n", w.do("SHUTDOWN", "NOW", "ABORT"))
	require.Equal(t, "-ERR No shutdown in progress.\r\n", w.do("SHUTDOWN", "ABORT"))
	// SHUTDOWN SAVE (and its failure) is tested in actors/persist.

	w.send("SHUTDOWN", "NOSAVE", "NOW")
	w.readEOF()
	done := make(chan error, 1)
	go func() { done <- n.Wait() }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("server still running after SHUTDOWN")
	}
}
