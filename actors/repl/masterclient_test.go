package repl_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// On a replica the link to its primary is the master client: CLIENT LIST
// shows it with flags=M and the primary's address, and CLIENT KILL of that
// address (or TYPE master) closes it; the replica then reconnects and
// continues.
func TestMasterLinkIsAClient(t *testing.T) {
	p := start(t, 2)
	r := start(t, 2)
	replicate(t, r, p)
	rc := r.Client(t, 2)
	paddr := "127.0.0.1:" + strconv.Itoa(p.Port)
	master := func() string {
		return rc.ClientList(ctx).Val()
	}
	list := rc.Do(ctx, "CLIENT", "LIST", "TYPE", "master").Val().(string)
	require.Equal(t, 1, strings.Count(list, "\n"), list)
	assert.Contains(t, list, " addr="+paddr+" ")
	assert.Contains(t, list, " flags=M ")
	assert.Contains(t, master(), " flags=M ")

	require.Equal(t, "OK", rc.Do(ctx, "CLIENT", "KILL", paddr).Val())
	waitUp(t, r)
	require.NoError(t, p.Client(t).Set(ctx, "after", "1", 0).Err())
	nodetest.Eventually(t, 10*time.Second, func() bool { return rc.Get(ctx, "after").Val() == "1" }, "replica follows")

	nodetest.Eventually(t, 10*time.Second, func() bool {
		return strings.Contains(rc.Do(ctx, "CLIENT", "LIST", "TYPE", "master").Val().(string), "flags=M")
	}, "master client back")
	assert.Equal(t, int64(1), rc.Do(ctx, "CLIENT", "KILL", "TYPE", "master").Val())
	waitUp(t, r)
	assert.Equal(t, "ERR No such client", rc.Do(ctx, "CLIENT", "KILL", "127.0.0.1:1").Err().Error())
}
