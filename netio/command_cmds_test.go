package netio_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
	"github.com/slotd/slotd/netio/command"
)

// go-redis ≥ 9.18 reads COMMAND before routing commands; it accepts only
// 6, 7 or 10-field entries.
func TestCommandInfo(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t)
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		c := n.Client(t, proto)
		cmds, err := c.Command(ctx).Result()
		require.NoError(t, err)
		require.Len(t, cmds, len(command.All()))
		get := cmds["get"]
		require.NotNil(t, get)
		require.Equal(t, int8(2), get.Arity)
		require.Equal(t, []string{"readonly", "fast"}, get.Flags)
		require.Equal(t, int8(1), get.FirstKeyPos)
		require.Equal(t, int8(1), get.LastKeyPos)
		require.Equal(t, int8(1), get.StepCount)
		require.True(t, get.ReadOnly)
		require.Equal(t, []string{"@read", "@string", "@fast"}, get.ACLFlags)
		ping := cmds["ping"]
		require.Equal(t, []string{"fast"}, ping.Flags, "internal flags such as sentinel are not shown")
		require.Equal(t, []string{"@fast", "@connection"}, ping.ACLFlags)
		require.NotNil(t, cmds["client"])
		require.Equal(t, []string{"@slow"}, cmds["client"].ACLFlags)

		count, err := c.Do(ctx, "COMMAND", "COUNT").Int64()
		require.NoError(t, err)
		require.Equal(t, int64(len(cmds)), count)
	}

	// The wire format, byte for byte.
	w := dialWire(t, n.Addr)
	getEntry := func(proto int) string {
		set := "*"
		mp := func(n int) string { return "*" + strconv.Itoa(2*n) + "\r\n" }
		if proto == 3 {
			set = "~"
			mp = func(n int) string { return "%" + strconv.Itoa(n) + "\r\n" }
		}
		return "*10\r\n$3\r\nget\r\n:2\r\n" + set + "2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n" + set +
			"3\r\n+@read\r\n+@string\r\n+@fast\r\n" + set + "0\r\n" + set + "1\r\n" + mp(3) + "$5\r\nflags\r\n" + set +
			"2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n" + mp(2) + "$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n" +
			mp(1) + "$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n" + mp(2) + "$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n" +
			mp(3) + "$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n" + set + "0\r\n"
	}
	// Byte for byte what Redis 7.0.15 answers.
	require.Equal(t, "*1\r\n"+getEntry(2), w.do("COMMAND", "INFO", "get"))
	require.Equal(t, "*2\r\n$-1\r\n"+getEntry(2), w.do("COMMAND", "INFO", "nosuch", "GET"))
	w.do("HELLO", "3")
	require.Equal(t, "*1\r\n"+getEntry(3), w.do("COMMAND", "INFO", "get"))
	require.Equal(t, "*2\r\n_\r\n"+getEntry(3), w.do("COMMAND", "INFO", "nosuch", "get"))
	w.do("HELLO", "2")

	// Subcommands by full name, containers with their subcommands.
	r := w.do("COMMAND", "INFO", "config|get")
	require.Equal(t, "*1\r\n*10\r\n$10\r\nconfig|get\r\n:-3\r\n*4\r\n+admin\r\n+noscript\r\n+loading\r\n+stale\r\n"+
		":0\r\n:0\r\n:0\r\n*3\r\n+@admin\r\n+@slow\r\n+@dangerous\r\n*0\r\n*0\r\n*0\r\n", r)
	r = w.do("COMMAND", "INFO", "config")
	require.True(t, strings.HasPrefix(r, "*1\r\n*10\r\n$6\r\nconfig\r\n:-2\r\n*0\r\n:0\r\n:0\r\n:0\r\n*1\r\n+@slow\r\n*0\r\n*0\r\n*5\r\n"), r)

	// MSET-like key ranges: lastkey relative to the end, keystep 2.
	if command.Lookup([]byte("mset")) != nil {
		require.Contains(t, w.do("COMMAND", "INFO", "mset"), ":1\r\n:-1\r\n:2\r\n")
	}

	require.Contains(t, w.do("COMMAND", "COUNT"), ":")
	require.Equal(t, "-ERR unknown subcommand 'FOO'. Try COMMAND HELP.\r\n", w.do("COMMAND", "FOO"))
	require.Equal(t, "-ERR wrong number of arguments for 'command|count' command\r\n", w.do("COMMAND", "COUNT", "x"))
}

func TestCommandDocsListGetKeys(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t)
	w := dialWire(t, n.Addr)
	sum := command.Lookup([]byte("get")).Summary
	require.Equal(t, "*2\r\n$3\r\nget\r\n*8\r\n$7\r\nsummary\r\n$"+strconv.Itoa(len(sum))+"\r\n"+sum+"\r\n"+
		"$5\r\nsince\r\n$5\r\n1.0.0\r\n$5\r\ngroup\r\n$6\r\nstring\r\n"+
		"$9\r\narguments\r\n*1\r\n*6\r\n$4\r\nname\r\n$3\r\nkey\r\n$4\r\ntype\r\n$3\r\nkey\r\n"+
		"$14\r\nkey_spec_index\r\n:0\r\n", w.do("COMMAND", "DOCS", "get", "nosuch"))
	require.Equal(t, "*0\r\n", w.do("COMMAND", "DOCS", "nosuch"))
	r := w.do("COMMAND", "DOCS", "config")
	require.Contains(t, r, "$11\r\nsubcommands\r\n*10\r\n$10\r\nconfig|get\r\n*8\r\n$7\r\nsummary\r\n")
	w.do("HELLO", "3")
	require.True(t, strings.HasPrefix(w.do("COMMAND", "DOCS", "get"), "%1\r\n$3\r\nget\r\n%4\r\n"))

	ctx := context.Background()
	c := n.Client(t)
	docs, err := c.Do(ctx, "COMMAND", "DOCS", "client").Result()
	require.NoError(t, err)
	client := docs.(map[any]any)["client"].(map[any]any)
	require.Equal(t, "connection", client["group"])
	require.Contains(t, client["subcommands"].(map[any]any), "client|list")

	names, err := c.CommandList(ctx, nil).Result()
	require.NoError(t, err)
	require.Contains(t, names, "config|get")
	require.Contains(t, names, "ping")
	names, err = c.CommandList(ctx, &redis.FilterBy{Pattern: "cl*"}).Result()
	require.NoError(t, err)
	require.Contains(t, names, "client")
	require.Contains(t, names, "client|kill")
	for _, nm := range names {
		require.True(t, strings.HasPrefix(nm, "cl"), nm)
	}
	names, err = c.CommandList(ctx, &redis.FilterBy{ACLCat: "connection"}).Result()
	require.NoError(t, err)
	require.Contains(t, names, "hello")
	require.Contains(t, names, "client|id")
	require.NotContains(t, names, "get")

	w2 := dialWire(t, n.Addr)
	require.Equal(t, "*0\r\n", w2.do("COMMAND", "LIST", "FILTERBY", "MODULE", "x"))
	require.Equal(t, "-ERR syntax error\r\n", w2.do("COMMAND", "LIST", "FILTERBY", "foo", "x"))
	require.Equal(t, "-ERR syntax error\r\n", w2.do("COMMAND", "LIST", "x"))
	help := w2.do("COMMAND", "HELP")
	require.True(t, strings.HasPrefix(help, "*21\r\n+COMMAND <subcommand>"), help)

	// COMMAND GETKEYS / GETKEYSANDFLAGS.
	w = dialWire(t, n.Addr)
	require.Equal(t, "*1\r\n$1\r\na\r\n", w.do("COMMAND", "GETKEYS", "get", "a"))
	require.Equal(t, "*1\r\n$1\r\na\r\n", w.do("COMMAND", "GETKEYS", "SET", "a", "b", "EX", "10"))
	require.Equal(t, "*1\r\n*2\r\n$1\r\na\r\n*2\r\n+RO\r\n+access\r\n", w.do("COMMAND", "GETKEYSANDFLAGS", "get", "a"))
	require.Equal(t, "-ERR Invalid command specified\r\n", w.do("COMMAND", "GETKEYS", "nosuch", "a"))
	require.Equal(t, "-ERR Invalid number of arguments specified for command\r\n", w.do("COMMAND", "GETKEYS", "get", "a", "b"))
	require.Equal(t, "-ERR The command has no key arguments\r\n", w.do("COMMAND", "GETKEYS", "config", "get", "x"))
	require.Equal(t, "-ERR Invalid command specified\r\n", w.do("COMMAND", "GETKEYS", "config", "foo", "x"))
	require.Equal(t, "-ERR wrong number of arguments for 'command|getkeys' command\r\n", w.do("COMMAND", "GETKEYS", "ping"))

	keys, err := n.Client(t).CommandGetKeys(context.Background(), "set", "k", "v").Result()
	require.NoError(t, err)
	require.Equal(t, []string{"k"}, keys)
}
