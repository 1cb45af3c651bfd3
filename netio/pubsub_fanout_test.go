package netio_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/slotd/slotd/cmd/node/nodetest"
)

// Fan-out to many subscribers of both protocols while some of them leave:
// every remaining subscriber gets each message exactly once, in the shape
// of its protocol, and the ones that left get nothing.
func TestPubSubFanOutWithLeavers(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t)
	const subs = 12
	var ws []*wireConn
	for i := 0; i < subs; i++ {
		w := dialWire(t, n.Addr)
		if i%2 == 1 {
			w.do("HELLO", "3")
		}
		w.send("SUBSCRIBE", "ch")
		_ = w.read()
		ws = append(ws, w)
	}
	pub := n.Client(t)
	ctx := context.Background()
	// Leave from the front, the middle and the back of the subscriber list.
	for _, i := range []int{0, 5, subs - 1} {
		ws[i].send("UNSUBSCRIBE", "ch")
		_ = ws[i].read()
	}
	nodetest.Eventually(t, 5*time.Second, func() bool {
		return pub.PubSubNumSub(ctx, "ch").Val()["ch"] == subs-3
	}, "unsubscribes not applied")
	for _, m := range []string{"m1", "m2"} {
		require.EqualValues(t, subs-3, pub.Publish(ctx, "ch", m).Val())
	}
	for i, w := range ws {
		if i == 0 || i == 5 || i == subs-1 {
			continue
		}
		head := "*3"
		if i%2 == 1 {
			head = ">3"
		}
		for _, m := range []string{"m1", "m2"} {
			require.Equal(t, head+"\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\n"+m+"\r\n", w.read(), "subscriber %d", i)
		}
	}
	// The leavers' next reply is their own PING's: no message reached them.
	require.Equal(t, "+PONG\r\n", ws[0].do("PING"))
	require.Equal(t, "+PONG\r\n", ws[5].do("PING"))
}

// A RESP3 client publishing to its own subscriptions gets its copies
// before the PUBLISH count, and a pipelined UNSUBSCRIBE after a PUBLISH
// does not lose the message. Bytes captured from redis-server 7.0.15.
func TestPubSubSelfDeliveryOrder(t *testing.T) {
	t.Parallel()
	n := nodetest.Start(t)
	w := dialWire(t, n.Addr)
	w.do("HELLO", "3")
	w.write("*2\r\n$10\r\nSSUBSCRIBE\r\n$1\r\na\r\n*2\r\n$10\r\nPSUBSCRIBE\r\n$2\r\na*\r\n*2\r\n$9\r\nSUBSCRIBE\r\n$1\r\na\r\n")
	got := ""
	for i := 0; i < 3; i++ {
		got += w.read()
	}
	require.Equal(t, ">3\r\n$10\r\nssubscribe\r\n$1\r\na\r\n:1\r\n>3\r\n$10\r\npsubscribe\r\n$2\r\na*\r\n:1\r\n>3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:2\r\n", got)
	w.write("*3\r\n$8\r\nSPUBLISH\r\n$1\r\na\r\n$1\r\nm\r\n*3\r\n$7\r\nPUBLISH\r\n$1\r\na\r\n$1\r\np\r\n" +
		"*2\r\n$11\r\nUNSUBSCRIBE\r\n$1\r\na\r\n*3\r\n$7\r\nPUBLISH\r\n$1\r\na\r\n$2\r\np2\r\n")
	got = ""
	for i := 0; i < 8; i++ {
		got += w.read()
	}
	require.Equal(t, ">3\r\n$8\r\nsmessage\r\n$1\r\na\r\n$1\r\nm\r\n:1\r\n"+
		">3\r\n$7\r\nmessage\r\n$1\r\na\r\n$1\r\np\r\n>4\r\n$8\r\npmessage\r\n$2\r\na*\r\n$1\r\na\r\n$1\r\np\r\n:2\r\n"+
		">3\r\n$11\r\nunsubscribe\r\n$1\r\na\r\n:1\r\n"+
		">4\r\n$8\r\npmessage\r\n$2\r\na*\r\n$1\r\na\r\n$2\r\np2\r\n:1\r\n", got)
}
