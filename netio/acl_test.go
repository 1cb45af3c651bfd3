package netio_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// ACL users over TCP with go-redis: SETUSER/GETUSER/LIST, AUTH and HELLO
// AUTH with users, Redis's NOPERM texts for commands, keys (%R~/%W~) and
// channels, CLIENT LIST user=, ACL LOG entries, DELUSER closing the user's
// connections.
func TestACLUsersOverTCP(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	n := nodetest.Start(t)
	admin := n.Client(t)

	require.Equal(t, "default", admin.Do(ctx, "ACL", "WHOAMI").Val())
	require.NoError(t, admin.Do(ctx, "ACL", "SETUSER", "alice", "on", ">pw", "+get", "+set", "+acl", "+client",
		"%R~r:*", "%W~w:*", "~rw:*", "resetchannels", "&news.*").Err())
	list := admin.Do(ctx, "ACL", "LIST").String()
	require.Contains(t, list, "user alice on #"+sha256hex("pw")+" %R~r:* %W~w:* ~rw:* resetchannels &news.* -@all +acl +client +get +set")
	require.Contains(t, list, "user default on nopass ~* &* +@all")

	a := redis.NewClient(&redis.Options{Addr: n.Addr, Username: "alice", Password: "pw", Protocol: 3})
	t.Cleanup(func() { _ = a.Close() })
	require.Equal(t, "alice", a.Do(ctx, "ACL", "WHOAMI").Val())
	require.NoError(t, admin.Set(ctx, "r:1", "v", 0).Err())
	require.Equal(t, "v", a.Get(ctx, "r:1").Val())
	require.NoError(t, a.Set(ctx, "w:1", "v", 0).Err())
	require.NoError(t, a.Set(ctx, "rw:1", "v", 0).Err())
	require.EqualError(t, a.Set(ctx, "r:1", "x", 0).Err(),
		"NOPERM this user has no permissions to access one of the keys used as arguments")
	require.EqualError(t, a.Get(ctx, "w:1").Err(),
		"NOPERM this user has no permissions to access one of the keys used as arguments")
	require.EqualError(t, a.Incr(ctx, "rw:2").Err(), "NOPERM this user has no permissions to run the 'incr' command")
	require.EqualError(t, a.Publish(ctx, "other", "m").Err(),
		"NOPERM this user has no permissions to run the 'publish' command")
	require.Contains(t, admin.ClientList(ctx).Val(), "user=alice")

	// Channels: publish allowed only to &news.*.
	require.NoError(t, admin.Do(ctx, "ACL", "SETUSER", "alice", "+publish", "+subscribe").Err())
	require.NoError(t, a.Publish(ctx, "news.today", "m").Err())
	require.EqualError(t, a.Publish(ctx, "other", "m").Err(),
		"NOPERM this user has no permissions to access one of the channels used as arguments")

	// ACL LOG: newest first, with Redis's fields.
	log := admin.Do(ctx, "ACL", "LOG", "1").Val().([]any)
	require.Len(t, log, 1)
	e := log[0].(map[any]any)
	require.Equal(t, "channel", e["reason"])
	require.Equal(t, "toplevel", e["context"])
	require.Equal(t, "other", e["object"])
	require.Equal(t, "alice", e["username"])
	require.Contains(t, e["client-info"], "user=alice")
	require.NoError(t, admin.Do(ctx, "ACL", "LOG", "RESET").Err())

	// A wrong password is logged too, and HELLO AUTH logs in.
	w := dialWire(t, n.Addr)
	require.Equal(t, "-WRONGPASS invalid username-password pair or user is disabled.\r\n", w.do("AUTH", "alice", "nope"))
	entry := admin.Do(ctx, "ACL", "LOG").Val().([]any)[0].(map[any]any)
	require.Equal(t, "auth", entry["reason"])
	require.Equal(t, "AUTH", entry["object"])
	require.Contains(t, w.do("HELLO", "2", "AUTH", "alice", "pw"), "redis")
	require.Equal(t, "$5\r\nalice\r\n", w.do("ACL", "WHOAMI"))

	// Revoking a channel closes alice's subscriber; DELUSER closes the rest.
	sub := redis.NewClient(&redis.Options{Addr: n.Addr, Username: "alice", Password: "pw"})
	t.Cleanup(func() { _ = sub.Close() })
	ps := sub.Subscribe(ctx, "news.x")
	_, err := ps.Receive(ctx)
	require.NoError(t, err)
	require.NoError(t, admin.Do(ctx, "ACL", "SETUSER", "alice", "resetchannels").Err())
	nodetest.Eventually(t, 5*time.Second, func() bool {
		return strings.Count(admin.ClientList(ctx).Val(), "user=alice") == 2
	}, "the subscriber was not closed")
	require.Equal(t, int64(1), admin.Do(ctx, "ACL", "DELUSER", "alice", "ghost").Val())
	nodetest.Eventually(t, 5*time.Second, func() bool {
		return !strings.Contains(admin.ClientList(ctx).Val(), "user=alice")
	}, "alice's connections stayed open")
	require.EqualError(t, admin.Do(ctx, "ACL", "DELUSER", "default").Err(), "ERR The 'default' user cannot be removed")

	// Rule errors are Redis's.
	require.EqualError(t, admin.Do(ctx, "ACL", "SETUSER", "bob", "+nosuch").Err(),
		"ERR Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL")
	require.EqualError(t, admin.Do(ctx, "ACL", "SETUSER", "bob", "#abc").Err(),
		"ERR Error in ACL SETUSER modifier '#abc': The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters")
	require.Nil(t, admin.Do(ctx, "ACL", "GETUSER", "bob").Val())
	require.NoError(t, admin.Do(ctx, "ACL", "SETUSER", "carol", "on", "nopass", "-@all", "+get", "%W~w:*").Err())
	require.Equal(t, "This user has no permissions to run the 'set' command",
		admin.Do(ctx, "ACL", "DRYRUN", "carol", "SET", "w:1", "v").Val())
	require.Equal(t, "This user has no permissions to access the 'w:1' key",
		admin.Do(ctx, "ACL", "DRYRUN", "carol", "GET", "w:1").Val())
	require.Equal(t, "OK", admin.Do(ctx, "ACL", "DRYRUN", "default", "GET", "w:1").Val())
}

func sha256hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// requirepass is the default user's password; before AUTH a client may
// send no more than 10 arguments of at most 16 KB (Redis's limits), else
// the connection is closed with Redis's protocol error.
func TestUnauthenticatedLimits(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t, "requirepass", "sekret")
	w := dialWire(t, n.Addr)
	w.write("*100\r\n")
	require.Equal(t, "-ERR Protocol error: unauthenticated multibulk length\r\n", w.read())
	w.readEOF()

	w2 := dialWire(t, n.Addr)
	w2.write("*1\r\n$100000000\r\n")
	require.Equal(t, "-ERR Protocol error: unauthenticated bulk length\r\n", w2.read())
	w2.readEOF()

	// Authenticated, the same request is fine.
	w3 := dialWire(t, n.Addr)
	require.Equal(t, "+OK\r\n", w3.do("AUTH", "sekret"))
	big := strings.Repeat("x", 20000)
	require.Equal(t, "+OK\r\n", w3.do("SET", "k", big))
	require.Equal(t, "+OK\r\n", w3.do("MSET", "a", "1", "b", "2", "c", "3", "d", "4", "e", "5", "f", "6"))
}

// The user directive and aclfile: users at start-up, ACL SAVE / LOAD
// (LOAD closes the connections of the users it replaced), CONFIG REWRITE
// writing users back.
func TestACLFileAndUserDirective(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	file := filepath.Join(dir, "users.acl")
	require.NoError(t, os.WriteFile(file, []byte("user alice on >a ~* &* +@all\nuser default on nopass ~* &* +@all\n"), 0o644))
	n := nodetest.Start(t, "aclfile", file)
	c := n.Client(t)
	require.Equal(t, []any{"alice", "default"}, c.Do(ctx, "ACL", "USERS").Val())
	require.NoError(t, c.Do(ctx, "ACL", "SETUSER", "eve", "on", ">e", "+get", "allkeys").Err())
	require.NoError(t, c.Do(ctx, "ACL", "SAVE").Err())
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Contains(t, string(data), "user eve on #"+sha256hex("e")+" ~* resetchannels -@all +get\n")
	a := dialWire(t, n.Addr)
	require.Equal(t, "+OK\r\n", a.do("AUTH", "alice", "a"))
	require.NoError(t, c.Do(ctx, "ACL", "LOAD").Err())
	a.readEOF() // ACL LOAD closed alice's connection
	require.Equal(t, []any{"alice", "default", "eve"}, c.Do(ctx, "ACL", "USERS").Val())

	// Users declared in the config; a duplicate stops start-up.
	u := nodetest.Start(t, "user", "default on nopass ~* +@all -flushdb")
	require.EqualError(t, u.Client(t).FlushDB(ctx).Err(), "NOPERM this user has no permissions to run the 'flushdb' command")
	require.EqualError(t, u.Client(t).Do(ctx, "ACL", "LOAD").Err(),
		"ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER "+
			"command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to "+
			"store users in the Redis configuration.")
}

// ACL SETUSER's user name and rules (passwords) never reach SLOWLOG, as
// Redis redacts them.
func TestACLSetUserRedactedInSlowlog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	n := nodetest.Start(t, "slowlog-log-slower-than", "0")
	c := n.Client(t)
	require.NoError(t, c.Do(ctx, "ACL", "SETUSER", "zed", "on", ">secret").Err())
	var found bool
	for _, e := range c.SlowLogGet(ctx, 10).Val() {
		if len(e.Args) > 1 && e.Args[0] == "ACL" {
			require.Equal(t, []string{"ACL", "SETUSER", "(redacted)", "(redacted)", "(redacted)"}, e.Args)
			found = true
		}
	}
	require.True(t, found, "ACL SETUSER not in SLOWLOG")
}

// A script's redis.call is checked against the caller's user (Redis's
// error, ACL LOG context lua); SORT's BY and GET patterns need read access
// to every key.
func TestACLScriptsAndSortPatterns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	n := nodetest.Start(t, "shard-actors", "1")
	admin := n.Client(t)
	require.NoError(t, admin.Do(ctx, "ACL", "SETUSER", "s", "on", "nopass", "+eval", "+sort", "%R~k*").Err())
	c := redis.NewClient(&redis.Options{Addr: n.Addr, Username: "s", Password: "x"})
	t.Cleanup(func() { _ = c.Close() })
	err := c.Eval(ctx, "return redis.call('incr','k1')", nil).Err()
	require.ErrorContains(t, err, "ERR The user executing the script can't run this command or subcommand script:")
	e := admin.Do(ctx, "ACL", "LOG", "1").Val().([]any)[0].(map[any]any)
	require.Equal(t, "lua", e["context"])
	require.Equal(t, "incr", e["object"])
	require.Equal(t, "s", e["username"])
	require.EqualError(t, c.Sort(ctx, "k", &redis.Sort{By: "w_*"}).Err(),
		"ERR BY option of SORT denied due to insufficient ACL permissions.")
	require.EqualError(t, c.Sort(ctx, "k", &redis.Sort{Get: []string{"w_*"}}).Err(),
		"ERR GET option of SORT denied due to insufficient ACL permissions.")
	require.NoError(t, admin.Do(ctx, "ACL", "SETUSER", "s", "resetkeys", "%R~*").Err())
	require.NoError(t, c.Sort(ctx, "k", &redis.Sort{By: "w_*"}).Err())
}
