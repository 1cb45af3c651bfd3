package cmdtest_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/actors/engine"
	"github.com/slotd/slotd/actors/engine/enginetest"
	"github.com/slotd/slotd/cmd/node/nodetest"
	"github.com/slotd/slotd/slots"
)

// respConn is the raw RESP connection of the command tests: every reply
// comes back as its exact bytes, so tests see reply types (bulk vs simple,
// $-1 vs _, RESP3 sets and doubles) as a client does.
type respConn struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

// respTimeout bounds one write or reply; generous because some replies
// (DUMP of large values, scripts that run until killed) take a while on a
// busy machine.
const respTimeout = 30 * time.Second

// respDial connects to addr; proto 3 switches the connection with HELLO 3.
func respDial(t *testing.T, addr string, proto int) *respConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	rc := &respConn{t: t, c: c, r: bufio.NewReaderSize(c, 1<<16)}
	if proto == 3 {
		require.True(t, strings.HasPrefix(rc.Do("HELLO", "3"), "%"), "HELLO 3")
	}
	return rc
}

// Send writes commands without reading their replies.
func (rc *respConn) Send(args ...string) { rc.send(args) }

func (rc *respConn) send(cmds ...[]string) {
	rc.t.Helper()
	require.NoError(rc.t, rc.c.SetWriteDeadline(time.Now().Add(respTimeout)))
	var req []byte
	for _, args := range cmds {
		req = append(req, nodetest.Command(args...)...)
	}
	_, err := rc.c.Write(req)
	require.NoError(rc.t, err)
}

// Read reads one reply, waiting at most d.
func (rc *respConn) Read(d time.Duration) string {
	rc.t.Helper()
	return rc.read(d, nil)
}

func (rc *respConn) read(d time.Duration, args []string) string {
	rc.t.Helper()
	require.NoError(rc.t, rc.c.SetReadDeadline(time.Now().Add(d)))
	reply, err := nodetest.ReadReply(rc.r)
	require.NoError(rc.t, err, "reading the reply to %.100q", args)
	return reply
}

// Do sends one command and returns its raw reply.
func (rc *respConn) Do(args ...string) string {
	rc.t.Helper()
	rc.send(args)
	return rc.read(respTimeout, args)
}

// Pipe sends several commands in one write and returns their raw replies.
func (rc *respConn) Pipe(cmds ...[]string) []string {
	rc.t.Helper()
	rc.send(cmds...)
	out := make([]string, len(cmds))
	for i, args := range cmds {
		out[i] = rc.read(respTimeout, args)
	}
	return out
}

// shardsNode starts a slotd node with several shard actors, so that
// multi-slot commands really fan out; directives are appended.
func shardsNode(t *testing.T, directives ...string) *nodetest.Node {
	t.Helper()
	return nodetest.Start(t, append([]string{"shard-actors", "4"}, directives...)...)
}

// Expected replies (actors/engine/enginetest writes the same bytes).
var (
	respBulk = enginetest.Bulk
	respErr  = enginetest.Err
	respInt  = enginetest.Int
	respNull = enginetest.Null
)

// respElems splits an aggregate reply into its header line and raw
// elements (a map's keys and values alternate).
func respElems(t *testing.T, raw string) (string, []string) {
	t.Helper()
	r := bufio.NewReader(strings.NewReader(raw))
	head, err := r.ReadString('\n')
	require.NoError(t, err)
	require.Contains(t, "*~%", head[:1], "not an aggregate: %q", raw)
	n, err := strconv.Atoi(head[1 : len(head)-2])
	require.NoError(t, err, raw)
	if head[0] == '%' {
		n *= 2
	}
	var els []string
	for i := 0; i < n; i++ {
		el, err := nodetest.ReadReply(r)
		require.NoError(t, err)
		els = append(els, el)
	}
	return head, els
}

// respSorted returns an aggregate reply with its elements sorted (for
// replies whose order Redis leaves unspecified); errors pass through.
func respSorted(t *testing.T, raw string) string {
	if raw[0] == '-' {
		return raw
	}
	head, els := respElems(t, raw)
	sort.Strings(els)
	return head + strings.Join(els, "")
}

// respBulkText decodes a bulk reply.
func respBulkText(t *testing.T, raw string) string {
	t.Helper()
	require.Equal(t, byte('$'), raw[0], raw)
	i := strings.Index(raw, "\r\n")
	n, err := strconv.Atoi(raw[1:i])
	require.NoError(t, err)
	return raw[i+2 : i+2+n]
}

// respScan runs a SCAN-family iteration to the end: cmd is the command
// before the cursor (SCAN, or HSCAN key), opts follow the cursor. It
// returns each step's elements, checking each reply's shape, or the first
// error reply.
func respScan(t *testing.T, rc *respConn, cmd []string, opts ...string) (steps [][]string, errReply string) {
	t.Helper()
	cursor := "0"
	for i := 0; ; i++ {
		require.Less(t, i, 1_000_000, "%s does not terminate", cmd[0])
		raw := rc.Do(append(append(append([]string(nil), cmd...), cursor), opts...)...)
		if raw[0] == '-' {
			return nil, raw
		}
		head, els := respElems(t, raw)
		require.Equal(t, "*2\r\n", head, raw)
		cursor = respBulkText(t, els[0])
		ahead, items := respElems(t, els[1])
		require.Equal(t, byte('*'), ahead[0])
		step := make([]string, len(items))
		for j, it := range items {
			step[j] = respBulkText(t, it)
		}
		steps = append(steps, step)
		if cursor == "0" {
			return steps, ""
		}
	}
}

// watchTx WATCHes key on c, calls write (which uses another client), then
// runs MULTI PING EXEC on c: it returns redis.TxFailedErr when write
// dirtied the WATCHed key.
func watchTx(c *redis.Client, key string, write func()) error {
	ctx := context.Background()
	return c.Watch(ctx, func(tx *redis.Tx) error {
		write()
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Ping(ctx)
			return nil
		})
		return err
	}, key)
}

// watchRun is watchTx reporting whether the transaction ran, that is
// whether write left the WATCHed key clean.
func watchRun(t *testing.T, c *redis.Client, key string, write func()) bool {
	t.Helper()
	err := watchTx(c, key, write)
	if err == redis.TxFailedErr {
		return false
	}
	require.NoError(t, err)
	return true
}

// sameAsRedis sends script to a real redis-server and to slotd (both
// started with directives), in RESP2 and RESP3, and requires byte-identical
// replies. Keys carry the hash tag tag ("{t}"), rewritten per protocol
// ("{t2}", "{t3}") so each run starts from empty keys.
func sameAsRedis(t *testing.T, tag string, script [][]string, directives ...string) {
	t.Helper()
	ref := nodetest.StartRedis(t, directives...)
	var opts []string
	for i := 0; i+1 < len(directives); i += 2 {
		opts = append(opts, strings.TrimPrefix(directives[i], "--"), directives[i+1])
	}
	n := shardsNode(t, opts...)
	// A script that changes server configuration (CONFIG SET) must not run
	// beside its other-protocol twin: both share the two servers.
	serial := false
	for _, cmd := range script {
		serial = serial || strings.EqualFold(cmd[0], "config")
	}
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			if !serial {
				t.Parallel()
			}
			want := respDial(t, ref, proto)
			got := respDial(t, n.Addr, proto)
			ptag := fmt.Sprintf("%s%d}", strings.TrimSuffix(tag, "}"), proto)
			for _, cmd := range script {
				args := make([]string, len(cmd))
				for i, a := range cmd {
					args[i] = strings.ReplaceAll(a, tag, ptag)
				}
				w, g := want.Do(args...), got.Do(args...)
				if !assert.Equal(t, w, g, "reply to %q", shortArgs(args)) {
					return // later replies depend on this one
				}
			}
		})
	}
}

// shortArgs abbreviates long argument lists for failure messages.
func shortArgs(args []string) []string {
	if len(args) <= 8 {
		return args
	}
	return append(append([]string{}, args[:8]...), fmt.Sprintf("... (%d args)", len(args)))
}

// replaySameAsRedis starts a real redis-server and a slotd node and, in
// RESP2 then RESP3, hands every non-blank line of script to check with a
// connection to each (theirs: redis-server, ours: slotd).
func replaySameAsRedis(t *testing.T, script string, check func(t *testing.T, proto int, theirs, ours *respConn,
	line string)) {
	t.Helper()
	raddr := nodetest.StartRedis(t)
	n := shardsNode(t)
	for _, proto := range []int{2, 3} {
		ours := respDial(t, n.Addr, proto)
		theirs := respDial(t, raddr, proto)
		for _, line := range strings.Split(script, "\n") {
			if strings.TrimSpace(line) != "" {
				check(t, proto, theirs, ours, line)
			}
		}
	}
}

// scriptWords splits a script line on spaces: 'single quotes' group words
// (” is the empty argument) and \0 stands for a NUL byte.
func scriptWords(line string) []string {
	var out []string
	for len(line) > 0 {
		line = strings.TrimLeft(line, " ")
		if line == "" {
			break
		}
		if line[0] == '\'' {
			end := strings.IndexByte(line[1:], '\'')
			out = append(out, strings.ReplaceAll(line[1:1+end], `\0`, "\x00"))
			line = line[2+end:]
			continue
		}
		end := strings.IndexByte(line, ' ')
		if end < 0 {
			end = len(line)
		}
		out = append(out, strings.ReplaceAll(line[:end], `\0`, "\x00"))
		line = line[end:]
	}
	return out
}

// perProto runs fns in order on a go-redis client of n, once per
// protocol (subtests RESP2 and RESP3), each time from an empty keyspace.
func perProto(t *testing.T, n *nodetest.Node, fns ...func(*testing.T, *redis.Client)) {
	t.Helper()
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			rdb := n.Client(t, proto)
			require.NoError(t, rdb.FlushAll(context.Background()).Err())
			for _, fn := range fns {
				fn(t, rdb)
			}
		})
	}
}

// inShard runs fn inside the shard actor owning key's slot and waits for
// it: tests use it to look at or plant values without going through other
// commands.
func inShard(t *testing.T, n *nodetest.Node, key string, fn func(s *engine.Shard, slot int)) {
	t.Helper()
	g := n.Shards
	slot := slots.HashSlotString(key)
	done := make(chan struct{})
	g.Inspect(g.Of(slot), func(s *engine.Shard) {
		defer close(done)
		fn(s, slot)
	})
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("shard actor did not run the probe")
	}
}
