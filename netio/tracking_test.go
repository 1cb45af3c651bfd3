package netio_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

const invK = ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n"

// Reply bytes below were captured from redis-server 7.0.15.
func TestTrackingDefaultMode(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t)
	a := dialWire(t, n.Addr)
	b := dialWire(t, n.Addr)
	a.do("HELLO", "3")
	require.Equal(t, "+OK\r\n", a.do("CLIENT", "TRACKING", "ON"))
	require.Equal(t, "_\r\n", a.do("GET", "k"))
	require.Equal(t, "%3\r\n$5\r\nflags\r\n~1\r\n$2\r\non\r\n$8\r\nredirect\r\n:0\r\n$8\r\nprefixes\r\n*0\r\n",
		a.do("CLIENT", "TRACKINGINFO"))
	require.Equal(t, ":0\r\n", a.do("CLIENT", "GETREDIR"))
	require.Equal(t, "+OK\r\n", b.do("SET", "k", "v"))
	require.Equal(t, invK, a.read())
	// The key was forgotten: a second write sends nothing until it is read
	// again.
	require.Equal(t, "+OK\r\n", b.do("SET", "k", "v2"))
	require.Equal(t, "$2\r\nv2\r\n", a.do("GET", "k"))
	require.Equal(t, ":1\r\n", b.do("DEL", "k"))
	require.Equal(t, invK, a.read())
	// Own writes invalidate too (no NOLOOP).
	require.Equal(t, "_\r\n", a.do("GET", "k"))
	require.Equal(t, "+OK\r\n", a.do("SET", "k", "1"))
	require.Equal(t, invK, a.read())
	// FLUSHALL: a null invalidation.
	require.Equal(t, "+OK\r\n", b.do("FLUSHALL"))
	require.Equal(t, ">2\r\n$10\r\ninvalidate\r\n_\r\n", a.read())
	// Expiry invalidates.
	require.Equal(t, "+OK\r\n", b.do("SET", "k", "1", "PX", "20"))
	require.Equal(t, "$1\r\n1\r\n", a.do("GET", "k"))
	require.Equal(t, invK, a.read())

	require.Equal(t, "+OK\r\n", a.do("CLIENT", "TRACKING", "OFF"))
	require.Equal(t, ":-1\r\n", a.do("CLIENT", "GETREDIR"))
	info := n.Client(t).Info(context.Background(), "clients").Val()
	require.Contains(t, info, "tracking_clients:0")
}

func TestTrackingErrors(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t)
	a := dialWire(t, n.Addr)
	require.Equal(t, "-ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled\r\n",
		a.do("CLIENT", "CACHING", "YES"))
	require.Equal(t, "+OK\r\n", a.do("CLIENT", "TRACKING", "ON"))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"ON", "PREFIX", "a"}, "-ERR PREFIX option requires BCAST mode to be enabled\r\n"},
		{[]string{"ON", "BCAST", "OPTIN"}, "-ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode.\r\n"},
		{[]string{"ON", "OPTIN", "OPTOUT"}, "-ERR You can't specify both OPTIN mode and OPTOUT mode\r\n"},
		{[]string{"ON", "REDIRECT", "999999"}, "-ERR The client ID you want redirect to does not exist\r\n"},
		{[]string{"ON", "REDIRECT", "x"}, "-ERR value is not an integer or out of range\r\n"},
		{[]string{"FOO"}, "-ERR syntax error\r\n"},
	} {
		require.Equal(t, c.want, a.do(append([]string{"CLIENT", "TRACKING"}, c.args...)...), c.args)
	}
	require.Equal(t, "-ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.\r\n", a.do("CLIENT", "CACHING", "YES"))
	require.Equal(t, "+OK\r\n", a.do("CLIENT", "TRACKING", "OFF"))
	require.Equal(t, "-ERR Prefix 'ab' overlaps with another provided prefix 'a'. Prefixes for a single client must not overlap.\r\n",
		a.do("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "ab", "PREFIX", "a"))
	require.Equal(t, "+OK\r\n", a.do("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "ab", "PREFIX", "cd", "NOLOOP"))
	require.Equal(t, "-ERR Prefix 'a' overlaps with an existing prefix 'ab'. Prefixes for a single client must not overlap.\r\n",
		a.do("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "a"))
	require.Equal(t, "*6\r\n$5\r\nflags\r\n*3\r\n$2\r\non\r\n$5\r\nbcast\r\n$6\r\nnoloop\r\n$8\r\nredirect\r\n:0\r\n$8\r\nprefixes\r\n*2\r\n$2\r\nab\r\n$2\r\ncd\r\n",
		a.do("CLIENT", "TRACKINGINFO"))
	require.Equal(t, "+OK\r\n", a.do("CLIENT", "TRACKING", "OFF"))
	require.Equal(t, "+OK\r\n", a.do("CLIENT", "TRACKING", "ON", "OPTIN"))
	require.Equal(t, "-ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.\r\n", a.do("CLIENT", "CACHING", "NO"))
	require.Equal(t, "+OK\r\n", a.do("CLIENT", "CACHING", "YES"))
	require.Equal(t, "*6\r\n$5\r\nflags\r\n*3\r\n$2\r\non\r\n$5\r\noptin\r\n$11\r\ncaching-yes\r\n$8\r\nredirect\r\n:0\r\n$8\r\nprefixes\r\n*0\r\n",
		a.do("CLIENT", "TRACKINGINFO"))
}

func TestTrackingBcastNoLoop(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t)
	a := dialWire(t, n.Addr)
	b := dialWire(t, n.Addr)
	a.do("HELLO", "3")
	require.Equal(t, "+OK\r\n", a.do("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "ab", "PREFIX", "cd", "NOLOOP"))
	require.Equal(t, "+OK\r\n", a.do("SET", "abself", "1")) // NOLOOP: nothing for our own write
	require.Equal(t, "+OK\r\n", b.do("SET", "zz", "1"))     // no prefix match
	require.Equal(t, "+OK\r\n", b.do("SET", "abx", "1"))
	require.Equal(t, ">2\r\n$10\r\ninvalidate\r\n*1\r\n$3\r\nabx\r\n", a.read())
	require.Equal(t, "+PONG\r\n", a.do("PING"))
}

func TestTrackingOptIn(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t)
	a := dialWire(t, n.Addr)
	b := dialWire(t, n.Addr)
	a.do("HELLO", "3")
	require.Equal(t, "+OK\r\n", a.do("CLIENT", "TRACKING", "ON", "OPTIN"))
	require.Equal(t, "_\r\n", a.do("GET", "k")) // not tracked
	require.Equal(t, "+OK\r\n", b.do("SET", "k", "1"))
	require.Equal(t, "+PONG\r\n", a.do("PING"))
	// rueidis's shape: CACHING YES, then a transaction.
	a.send("CLIENT", "CACHING", "YES")
	a.send("MULTI")
	a.send("PTTL", "k")
	a.send("GET", "k")
	a.send("EXEC")
	require.Equal(t, "+OK\r\n", a.read())
	require.Equal(t, "+OK\r\n", a.read())
	require.Equal(t, "+QUEUED\r\n", a.read())
	require.Equal(t, "+QUEUED\r\n", a.read())
	require.Equal(t, "*2\r\n:-1\r\n$1\r\n1\r\n", a.read())
	require.Equal(t, "+OK\r\n", b.do("SET", "k", "2"))
	require.Equal(t, invK, a.read())
	// The CACHING flag covered one command (the transaction) only.
	require.Equal(t, "$1\r\n2\r\n", a.do("GET", "k"))
	require.Equal(t, "+OK\r\n", b.do("SET", "k", "3"))
	require.Equal(t, "+PONG\r\n", a.do("PING"))
}

// RESP2 tracking through REDIRECT to a client subscribed to
// __redis__:invalidate.
func TestTrackingRedirectRESP2(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t)
	c := dialWire(t, n.Addr)
	cid := clientID(t, c)
	c.do("SUBSCRIBE", "__redis__:invalidate")
	d := dialWire(t, n.Addr)
	b := dialWire(t, n.Addr)
	require.Equal(t, "+OK\r\n", d.do("CLIENT", "TRACKING", "ON", "REDIRECT", strconv.FormatInt(cid, 10)))
	require.Equal(t, "$-1\r\n", d.do("GET", "r"))
	require.Equal(t, "*6\r\n$5\r\nflags\r\n*1\r\n$2\r\non\r\n$8\r\nredirect\r\n:"+strconv.FormatInt(cid, 10)+"\r\n$8\r\nprefixes\r\n*0\r\n",
		d.do("CLIENT", "TRACKINGINFO"))
	require.Equal(t, "+OK\r\n", b.do("SET", "r", "1"))
	require.Equal(t, "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n*1\r\n$1\r\nr\r\n", c.read())
	require.Equal(t, "+OK\r\n", b.do("FLUSHALL"))
	require.Equal(t, "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n$-1\r\n", c.read())
}

// rueidis turns on OPTIN tracking at connect; a cached read must see
// another client's write.
func TestTrackingRueidisCache(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t)
	ctx := context.Background()
	cl, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{n.Addr}, DisableRetry: true})
	require.NoError(t, err)
	defer cl.Close()
	other := n.Client(t)
	require.NoError(t, other.Set(ctx, "ck", "v1", 0).Err())
	get := func() (string, bool) {
		r := cl.DoCache(ctx, cl.B().Get().Key("ck").Cache(), time.Minute)
		v, err := r.ToString()
		require.NoError(t, err)
		return v, r.IsCacheHit()
	}
	v, _ := get()
	require.Equal(t, "v1", v)
	v, hit := get()
	require.Equal(t, "v1", v)
	require.True(t, hit)
	require.NoError(t, other.Set(ctx, "ck", "v2", 0).Err())
	nodetest.Eventually(t, 5*time.Second, func() bool { v, _ := get(); return v == "v2" }, "stale cached value")
	require.Contains(t, other.Info(ctx, "clients").Val(), "tracking_clients:1")
}

// Multi-key reads split over shards outside cluster mode are tracked too.
func TestTrackingSplitMGet(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t, "shard-actors", "4")
	a := dialWire(t, n.Addr)
	b := dialWire(t, n.Addr)
	a.do("HELLO", "3")
	require.Equal(t, "+OK\r\n", a.do("CLIENT", "TRACKING", "ON"))
	require.Equal(t, "*2\r\n_\r\n_\r\n", a.do("MGET", "k", "other"))
	require.Equal(t, "+OK\r\n", b.do("SET", "k", "1"))
	require.Equal(t, invK, a.read())
}

func TestTrackingOptOutAndBrokenRedirect(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t)
	a := dialWire(t, n.Addr)
	b := dialWire(t, n.Addr)
	a.do("HELLO", "3")
	require.Equal(t, "+OK\r\n", a.do("CLIENT", "TRACKING", "ON", "OPTOUT"))
	require.Equal(t, "+OK\r\n", a.do("CLIENT", "CACHING", "NO"))
	require.Equal(t, "_\r\n", a.do("GET", "k")) // not tracked
	require.Equal(t, "+OK\r\n", b.do("SET", "k", "1"))
	require.Equal(t, "$1\r\n1\r\n", a.do("GET", "k")) // tracked again
	require.Equal(t, "+OK\r\n", b.do("SET", "k", "2"))
	require.Equal(t, invK, a.read())
	info := n.Client(t).Info(context.Background()).Val()
	require.Contains(t, info, "tracking_clients:1")
	require.Contains(t, info, "tracking_total_keys:0")
	require.Contains(t, n.Client(t).ClientList(context.Background()).Val(), "flags=t ")

	// A redirect whose target went away: tracking-redir-broken.
	c := dialWire(t, n.Addr)
	cid := clientID(t, c)
	require.Equal(t, "+OK\r\n", a.do("CLIENT", "TRACKING", "OFF"))
	require.Equal(t, "+OK\r\n", a.do("CLIENT", "TRACKING", "ON", "REDIRECT", strconv.FormatInt(cid, 10)))
	require.Equal(t, "$1\r\n2\r\n", a.do("GET", "k"))
	require.NoError(t, c.c.Close())
	cli := n.Client(t)
	nodetest.Eventually(t, 5*time.Second, func() bool {
		return !strings.Contains(cli.ClientList(context.Background()).Val(), "id="+strconv.FormatInt(cid, 10)+" ")
	}, "redirect target still listed")
	require.Equal(t, "+OK\r\n", b.do("SET", "k", "3"))
	broken := ">2\r\n$21\r\ntracking-redir-broken\r\n:" + strconv.FormatInt(cid, 10) + "\r\n"
	require.Equal(t, broken, a.read())
	require.Equal(t, "%3\r\n$5\r\nflags\r\n~2\r\n$2\r\non\r\n$15\r\nbroken_redirect\r\n$8\r\nredirect\r\n:"+
		strconv.FormatInt(cid, 10)+"\r\n$8\r\nprefixes\r\n*0\r\n", a.do("CLIENT", "TRACKINGINFO"))
}

// tracking-table-max-keys bounds the table: the oldest reads are
// invalidated to make room.
func TestTrackingTableMaxKeys(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t, "shard-actors", "1", "tracking-table-max-keys", "1")
	a := dialWire(t, n.Addr)
	a.do("HELLO", "3")
	require.Equal(t, "+OK\r\n", a.do("CLIENT", "TRACKING", "ON"))
	require.Equal(t, "_\r\n", a.do("GET", "k"))
	require.Equal(t, "_\r\n", a.do("GET", "k")) // same key: no growth
	a.send("GET", "other")
	// Evicting k invalidates it (after the GET's reply, which came first).
	require.Equal(t, "_\r\n", a.read())
	require.Equal(t, invK, a.read())
	require.Contains(t, n.Client(t).Info(context.Background(), "stats").Val(), "tracking_total_keys:1")
}

// Keys a script reads are tracked for the client that ran it; its writes
// invalidate other readers.
func TestTrackingScripts(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t)
	a := dialWire(t, n.Addr)
	b := dialWire(t, n.Addr)
	a.do("HELLO", "3")
	require.Equal(t, "+OK\r\n", a.do("CLIENT", "TRACKING", "ON"))
	require.Equal(t, "_\r\n", a.do("EVAL", "return redis.call('get',KEYS[1])", "1", "k"))
	require.Equal(t, ":1\r\n", b.do("EVAL", "return redis.call('incr',KEYS[1])", "1", "k"))
	require.Equal(t, invK, a.read())
}
