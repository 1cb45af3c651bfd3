package netio_test

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// `timeout N` closes clients idle for more than N seconds — one that sent
// nothing, one that sent half a command — as Redis's clientsCron does,
// but never a pub/sub subscriber, a client blocked in BLPOP, or one that
// keeps sending commands. CONFIG SET timeout takes effect at run time.
func TestIdleClientsClosedAfterTimeout(t *testing.T) {
	ctx := context.Background()
	n := nodetest.Start(t)
	busy := n.Client(t)
	busyID := busy.ClientID(ctx).Val()

	closed := func(half []byte) chan struct{} {
		conn, err := net.Dial("tcp", n.Addr)
		require.NoError(t, err)
		t.Cleanup(func() { _ = conn.Close() })
		if half != nil {
			_, err = conn.Write(half)
			require.NoError(t, err)
		}
		done := make(chan struct{})
		go func() {
			_, _ = io.Copy(io.Discard, conn) // returns when the server closes it
			close(done)
		}()
		return done
	}
	dialed := time.Now()
	idle := closed(nil)
	half := closed([]byte("*2\r\n$3\r\nGET\r\n$3\r\nke"))

	sub := n.Client(t).Subscribe(ctx, "ch")
	t.Cleanup(func() { _ = sub.Close() })
	_, err := sub.Receive(ctx)
	require.NoError(t, err)
	blocked := n.Client(t)
	popped := make(chan []string, 1)
	go func() { popped <- blocked.BLPop(ctx, 0, "list").Val() }()
	nodetest.Eventually(t, 5*time.Second, func() bool {
		return nodetest.InfoField(t, busy, "clients", "blocked_clients") == "1"
	}, "BLPOP blocks")

	require.NoError(t, busy.ConfigSet(ctx, "timeout", "1").Err())
	for _, ch := range []chan struct{}{idle, half} {
		nodetest.Eventually(t, 5*time.Second, func() bool {
			require.NoError(t, busy.Ping(ctx).Err()) // busy keeps sending while the others idle
			select {
			case <-ch:
				return true
			default:
				return false
			}
		}, "an idle client is closed")
	}
	assert.GreaterOrEqual(t, time.Since(dialed), time.Second, "not before a second of idleness")

	assert.Equal(t, busyID, busy.ClientID(ctx).Val(), "a client sending commands stays")
	require.NoError(t, busy.Publish(ctx, "ch", "m").Err())
	msg, err := sub.ReceiveMessage(ctx)
	require.NoError(t, err, "a subscriber stays")
	assert.Equal(t, "m", msg.Payload)
	require.NoError(t, busy.LPush(ctx, "list", "v").Err())
	assert.Equal(t, []string{"list", "v"}, <-popped, "a blocked client stays")
}
