package netio_test

import (
	"strconv"
	"testing"

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
