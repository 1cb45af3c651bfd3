package netio_test

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// clientLineRE is a CLIENT LIST line with Redis 7.0's fields in order.
var clientLineRE = regexp.MustCompile(`^id=\d+ addr=127\.0\.0\.1:\d+ laddr=127\.0\.0\.1:\d+ fd=\d+ name=\S* ` +
	`age=\d+ idle=\d+ flags=[A-Za-z]+ db=0 sub=0 psub=0 ssub=0 multi=-?\d+ qbuf=\d+ qbuf-free=\d+ argv-mem=\d+ ` +
	`multi-mem=\d+ rbs=\d+ rbp=\d+ obl=\d+ oll=\d+ omem=\d+ tot-mem=\d+ events=r cmd=\S+ user=default redir=-1 ` +
	`resp=[23]$`)

// bulkText strips the RESP2 bulk or RESP3 verbatim framing.
func bulkText(t *testing.T, r string) string {
	t.Helper()
	i := strings.Index(r, "\r\n")
	require.Positive(t, i, r)
	body := r[i+2 : len(r)-2]
	if r[0] == '=' {
		require.True(t, strings.HasPrefix(body, "txt:"), r)
		body = body[4:]
	} else {
		require.Equal(t, byte('$'), r[0], r)
	}
	n, err := strconv.Atoi(r[1:i])
	require.NoError(t, err)
	require.Len(t, r[i+2:len(r)-2], n)
	return body
}

func TestClientBasics(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t)
	w := dialWire(t, n.Addr)
	id := clientID(t, w)
	require.Positive(t, id)

	require.Equal(t, "$-1\r\n", w.do("CLIENT", "GETNAME"))
	require.Equal(t, "+OK\r\n", w.do("CLIENT", "SETNAME", "conn-1"))
	require.Equal(t, "$6\r\nconn-1\r\n", w.do("client", "getname"))
	require.Equal(t, "-ERR Client names cannot contain spaces, newlines or special characters.\r\n",
		w.do("CLIENT", "SETNAME", "a b"))
	require.Equal(t, "-ERR Client names cannot contain spaces, newlines or special characters.\r\n",
		w.do("CLIENT", "SETNAME", "a\nb"))
	require.Equal(t, "+OK\r\n", w.do("CLIENT", "SETNAME", ""))
	require.Equal(t, "$-1\r\n", w.do("CLIENT", "GETNAME"))

	require.Equal(t, "+OK\r\n", w.do("CLIENT", "SETINFO", "LIB-NAME", "go-redis(x,go1.22)"))
	require.Equal(t, "-ERR Unrecognized option 'foo'\r\n", w.do("CLIENT", "SETINFO", "foo", "bar"))
	require.Equal(t, "-ERR LIB-VER cannot contain spaces, newlines or special characters.\r\n",
		w.do("CLIENT", "SETINFO", "LIB-VER", "1 2"))

	require.Equal(t, "+OK\r\n", w.do("CLIENT", "NO-EVICT", "ON"))
	require.Equal(t, "+OK\r\n", w.do("CLIENT", "NO-TOUCH", "on"))
	require.Contains(t, w.do("CLIENT", "INFO"), " flags=eT ")
	require.Equal(t, "+OK\r\n", w.do("CLIENT", "NO-EVICT", "off"))
	require.Equal(t, "+OK\r\n", w.do("CLIENT", "NO-TOUCH", "off"))
	require.Equal(t, "-ERR syntax error\r\n", w.do("CLIENT", "NO-EVICT", "maybe"))

	// Errors keep the connection open.
	require.Equal(t, "-ERR unknown subcommand 'FOO'. Try CLIENT HELP.\r\n", w.do("CLIENT", "FOO"))
	require.Equal(t, "-ERR unknown subcommand 'MAINT_NOTIFICATIONS'. Try CLIENT HELP.\r\n",
		w.do("CLIENT", "MAINT_NOTIFICATIONS", "ON", "moving-endpoint-type", "internal-ip"))
	require.Equal(t, "-ERR wrong number of arguments for 'client' command\r\n", w.do("CLIENT"))
	require.Equal(t, "-ERR wrong number of arguments for 'client|id' command\r\n", w.do("CLIENT", "ID", "x"))
	require.Equal(t, "+PONG\r\n", w.do("PING"))

	help := w.do("CLIENT", "HELP")
	require.True(t, strings.HasPrefix(help, "*"), help)
	require.Contains(t, help, "+CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n")
	require.Contains(t, help, "+SETNAME <name>\r\n")
	require.True(t, strings.HasSuffix(help, "+HELP\r\n+    Prints this help.\r\n"), help)
}

func TestClientListAndInfo(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t)
	a := dialWire(t, n.Addr)
	b := dialWire(t, n.Addr)
	idA, idB := clientID(t, a), clientID(t, b)
	require.Equal(t, "+OK\r\n", b.do("CLIENT", "SETNAME", "bee"))

	info := bulkText(t, a.do("CLIENT", "INFO"))
	require.True(t, strings.HasSuffix(info, "\n"))
	line := strings.TrimSuffix(info, "\n")
	require.Regexp(t, clientLineRE, line)
	require.True(t, strings.HasPrefix(line, "id="+strconv.FormatInt(idA, 10)+" "))
	require.Contains(t, line, " cmd=client|info ")
	require.Contains(t, line, " laddr="+n.Addr+" ")

	list := bulkText(t, a.do("CLIENT", "LIST"))
	lines := strings.Split(strings.TrimSuffix(list, "\n"), "\n")
	require.Len(t, lines, 2)
	// Connections opened on different event loops may get their ids in
	// either order; the list is ordered by id.
	first, second := idA, idB
	if idB < idA {
		first, second = idB, idA
		lines[0], lines[1] = lines[1], lines[0]
	}
	require.Less(t, first, second)
	require.True(t, strings.HasPrefix(lines[0], "id="+strconv.FormatInt(idA, 10)+" "), "ordered by id")
	require.True(t, strings.HasPrefix(lines[1], "id="+strconv.FormatInt(idB, 10)+" "))
	require.Contains(t, lines[1], " name=bee ")
	require.Contains(t, lines[1], " cmd=client|setname ")
	for _, l := range lines {
		require.Regexp(t, clientLineRE, l)
	}

	only := bulkText(t, a.do("CLIENT", "LIST", "ID", strconv.FormatInt(idB, 10), "99999"))
	require.Equal(t, 1, strings.Count(only, "\n"))
	require.Contains(t, only, " name=bee ")
	require.Equal(t, 2, strings.Count(bulkText(t, a.do("CLIENT", "LIST", "TYPE", "normal")), "\n"))
	require.Equal(t, "$0\r\n\r\n", a.do("CLIENT", "LIST", "TYPE", "pubsub"))
	require.Equal(t, "-ERR Unknown client type 'foo'\r\n", a.do("CLIENT", "LIST", "TYPE", "foo"))
	require.Equal(t, "-ERR Invalid client ID\r\n", a.do("CLIENT", "LIST", "ID", "x"))
	require.Equal(t, "-ERR syntax error\r\n", a.do("CLIENT", "LIST", "FOO"))

	// RESP3: verbatim strings.
	a.do("HELLO", "3")
	r := a.do("CLIENT", "LIST")
	require.True(t, strings.HasPrefix(r, "="), r)
	require.Contains(t, bulkText(t, r), " resp=3\n")

	// go-redis parses both.
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		c := n.Client(t, proto)
		s, err := c.ClientList(ctx).Result()
		require.NoError(t, err)
		require.Contains(t, s, "name=bee")
		ci, err := c.ClientInfo(ctx).Result()
		require.NoError(t, err)
		require.Equal(t, proto, ci.Resp)
		require.Equal(t, 0, ci.DB)
	}
}

func TestClientKill(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t)
	a := dialWire(t, n.Addr)
	b := dialWire(t, n.Addr)
	c := dialWire(t, n.Addr)
	idB := clientID(t, b)
	clientID(t, c)

	// Errors, Redis's texts.
	require.Equal(t, "-ERR No such client\r\n", a.do("CLIENT", "KILL", "1.2.3.4:5"))
	require.Equal(t, "-ERR client-id should be greater than 0\r\n", a.do("CLIENT", "KILL", "ID", "x"))
	require.Equal(t, "-ERR client-id should be greater than 0\r\n", a.do("CLIENT", "KILL", "ID", "0"))
	require.Equal(t, "-ERR Unknown client type 'foo'\r\n", a.do("CLIENT", "KILL", "TYPE", "foo"))
	require.Equal(t, "-ERR No such user 'nobody'\r\n", a.do("CLIENT", "KILL", "USER", "nobody"))
	require.Equal(t, "-ERR syntax error\r\n", a.do("CLIENT", "KILL", "FOO", "bar"))
	require.Equal(t, "-ERR syntax error\r\n", a.do("CLIENT", "KILL", "ID", "1", "SKIPME"))
	require.Equal(t, "-ERR syntax error\r\n", a.do("CLIENT", "KILL", "SKIPME", "maybe"))
	require.Equal(t, ":0\r\n", a.do("CLIENT", "KILL", "ID", "999999"))
	require.Equal(t, ":0\r\n", a.do("CLIENT", "KILL", "TYPE", "pubsub"))
	require.Equal(t, ":0\r\n", a.do("CLIENT", "KILL", "TYPE", "master"))

	// By id.
	require.Equal(t, ":1\r\n", a.do("CLIENT", "KILL", "ID", strconv.FormatInt(idB, 10)))
	b.readEOF()

	// Old form, by address.
	cAddr := c.c.LocalAddr().String()
	require.Equal(t, "+OK\r\n", a.do("CLIENT", "KILL", cAddr))
	c.readEOF()

	// Filters: the caller is skipped by default...
	d := dialWire(t, n.Addr)
	clientID(t, d)
	require.Equal(t, ":1\r\n", a.do("CLIENT", "KILL", "TYPE", "normal"))
	d.readEOF()
	require.Equal(t, "+PONG\r\n", a.do("PING"))
	nodetest.Eventually(t, 5*time.Second, func() bool {
		return strings.Count(bulkText(t, a.do("CLIENT", "LIST")), "\n") == 1
	}, "killed clients leave CLIENT LIST")

	// ... LADDR and USER match, MAXAGE skips young connections ...
	e := dialWire(t, n.Addr)
	clientID(t, e)
	require.Equal(t, ":0\r\n", a.do("CLIENT", "KILL", "LADDR", "127.0.0.1:1"))
	require.Equal(t, ":0\r\n", a.do("CLIENT", "KILL", "MAXAGE", "3600"))
	require.Equal(t, ":1\r\n", a.do("CLIENT", "KILL", "LADDR", n.Addr, "USER", "default"))
	e.readEOF()

	// ... unless SKIPME no: then the caller gets its reply, then is closed.
	f := dialWire(t, n.Addr)
	clientID(t, f)
	require.Equal(t, ":2\r\n", a.do("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "no"))
	a.readEOF()
	f.readEOF()
}
